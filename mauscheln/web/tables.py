"""The tables of ``mauscheln serve``: one person against bots per table, each seat's view, the bounds.

Nothing here knows HTTP. :func:`parse_new_table` checks a request to open a table,
:class:`WebTable` holds one :class:`agents.play.session.PlaySession` with a person at
one seat, and :class:`TableStore` keeps the live tables within their bounds (their
number, their idle time). Every mistake is a :class:`WebError`, a
:class:`~mauscheln_env.errors.MauschelnError` with the HTTP status the server answers
and a message that says what is allowed.

What a seat is shown (:meth:`WebTable.view`) is the environment's ``infos`` of that
seat (:class:`agents.views.EnvView`), a few public facts decoded from the seat's own
observation (the trump suit, who took the trump card, how many cards each seat
exchanged, the cards it marked itself), the tricks of the deal, and the moves since
its last view, worded by :func:`agents.play.session.move_lines`: another seat's card is
named only when it is played to a trick. The replay with every hand
(:meth:`WebTable.replay`) exists only once the session is over.
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import (
    Agent,
    agent_class,
    agent_from_spec,
    available_agents,
    parse_agent_spec,
    spec_files_stamp,
)
from agents.play.session import DECISIONS, Move, PlaySession, move_lines, parse_action, why_not
from mauscheln_env.config import RULESETS, RuleConfig, load_preset_dict, make_config
from mauscheln_env.engine import PHASE_NAMES, Game
from mauscheln_env.errors import MauschelnError
from mauscheln_env.registry import presets
from mauscheln_env.render import explain_result

HUMAN = "you"
"""How the person's seat is named at the table."""
TEXT_LIMIT = 64
"""The longest action text read (an action string is a card code or a word)."""
NEW_TABLE_KEYS = ("ruleset", "players", "seat", "agents", "seed", "deals", "rules")
SEED_LIMIT = 2**63


class WebError(MauschelnError):
    """A request the server refuses: ``status`` is the HTTP status, ``extra`` more fields of the JSON answer."""

    def __init__(self, status: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.extra = extra


@dataclass(frozen=True)
class Settings:
    """The bounds and permissions of one server."""

    max_tables: int = 64
    """Live tables at once (finished ones count until they expire); one more is refused with 503."""
    idle_seconds: float = 1800.0
    """A table without a request for this long is removed."""
    max_body: int = 16 * 1024
    """The largest request body in bytes; a larger one is refused with 413."""
    max_deals: int = 20
    """The most deals a session may ask for."""
    max_spec: int = 300
    """The longest agent spec, in characters."""
    allow_remote: bool = False
    """Agents that send requests over the network (``llm``: the server would spend its key for anyone)."""
    allow_code: bool = True
    """Agents whose spec names code or files on the server's machine (``file.py:Class``, ``module:Class``, a
    checkpoint path); the command allows them only on a loopback address unless told otherwise."""
    db: str | None = None
    """The leaderboard database whose records ``/replay`` shows (None: the default one)."""

    def check(self) -> Settings:
        for name in ("max_tables", "max_body", "max_deals", "max_spec"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise MauschelnError(f"{name}={value!r} is not allowed; allowed: a whole number >= 1")
        if not (isinstance(self.idle_seconds, (int, float)) and math.isfinite(self.idle_seconds)
                and self.idle_seconds > 0):
            raise MauschelnError(f"idle_seconds={self.idle_seconds!r} is not allowed; allowed: a number > 0")
        return self


# ---------------------------------------------------------------------- the request to open a table
@dataclass
class NewTable:
    """A checked request to open a table (the agents are built with the table, in a worker thread)."""

    config: RuleConfig
    ruleset: str
    seat: int
    specs: dict[int, str]
    seed: int


def ruleset_choices() -> dict[str, Any]:
    """The rulesets (with their player counts) and the shipped presets a table may be opened with."""
    rules = {name: {"min_players": spec.min_players, "max_players": spec.max_players, "doc": spec.doc}
             for name, spec in RULESETS.items()}
    shipped = {}
    for name, path in presets().items():
        if name in RULESETS:
            continue  # a preset named after a ruleset holds that ruleset's defaults
        data = load_preset_dict(path)
        ruleset = data.get("ruleset", "mauscheln")
        shipped[name] = {"ruleset": ruleset, "players": data.get("num_players"),
                         "min_players": RULESETS[ruleset].min_players, "max_players": RULESETS[ruleset].max_players}
    return {"rulesets": rules, "presets": shipped}


def _whole(body: Mapping[str, Any], key: str, default: Any, low: int, high: int | None, what: str) -> Any:
    value = body.get(key, default)
    if value is None and default is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        raise WebError(422, f"{key}={value!r} is not allowed; allowed: {what}")
    return value


def parse_new_table(body: Any, settings: Settings) -> NewTable:
    """Check the JSON body of ``POST /api/tables``; :class:`WebError` 422 names the field and what it allows."""
    if not isinstance(body, dict):
        raise WebError(422, f"the body is a JSON {type(body).__name__}; allowed: a JSON object with the keys "
                            f"{', '.join(NEW_TABLE_KEYS)} (each optional)")
    unknown = sorted(str(k) for k in body if k not in NEW_TABLE_KEYS)
    if unknown:
        raise WebError(422, f"unknown key(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(NEW_TABLE_KEYS)}")
    ruleset = body.get("ruleset", "mauscheln")
    shipped = presets()
    names = sorted(RULESETS) + sorted(p for p in shipped if p not in RULESETS)
    if not isinstance(ruleset, str) or ruleset not in names:
        raise WebError(422, f"ruleset={ruleset!r} is not allowed; allowed: a ruleset or a shipped preset: "
                            f"{', '.join(names)}")
    players = _whole(body, "players", None, 0, None, "a whole number of seats (null: the preset's, else 4)")
    deals = _whole(body, "deals", 3, 1, settings.max_deals, f"a whole number 1..{settings.max_deals}")
    seed = _whole(body, "seed", None, 0, SEED_LIMIT - 1, f"a whole number 0..{SEED_LIMIT - 1} or null (random)")
    rules = body.get("rules", {})
    if rules is None:
        rules = {}
    if not isinstance(rules, dict) or not all(isinstance(k, str) and k for k in rules) or not all(
            v is None or isinstance(v, (bool, int, float, str)) for v in rules.values()):
        raise WebError(422, f"rules={rules!r} is not allowed; allowed: an object of rule options, name: value "
                            "(true/false, a number, text or null), e.g. {\"knock\": true}")
    if "max_deals" in rules:
        raise WebError(422, "rules.max_deals is not allowed; allowed: the number of deals as deals")
    source: Any = ruleset if ruleset in RULESETS else shipped[ruleset]
    try:
        config = make_config(source, players, **rules, max_deals=deals)
    except MauschelnError as exc:
        raise WebError(422, str(exc)) from exc
    n = config.num_players
    seat = _whole(body, "seat", 0, 0, n - 1, f"a seat 0..{n - 1}")
    agents = body.get("agents", ["expert"])
    if isinstance(agents, str):
        agents = [agents]
    others = [s for s in range(n) if s != seat]
    if not isinstance(agents, list) or not agents or not all(isinstance(a, str) for a in agents) \
            or len(agents) not in (1, len(others)):
        raise WebError(422, f"agents={_short(agents)} is not allowed; allowed: one agent spec for every bot or "
                            f"{len(others)} (one per bot seat, in seat order), e.g. [\"expert\"]; known agents: "
                            f"{', '.join(available_agents())}")
    specs = agents * len(others) if len(agents) == 1 else agents
    for spec in specs:
        check_spec(spec, settings)
    if seed is None:
        seed = secrets.randbelow(1 << 31)
    return NewTable(config, ruleset, seat, dict(zip(others, specs)), seed)


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def check_spec(spec: str, settings: Settings) -> None:
    """Refuse a spec the server does not run: too long, malformed, remote without ``allow_remote``, or naming
    code or files of the server's machine without ``allow_code``."""
    if len(spec) > settings.max_spec:
        raise WebError(422, f"agent spec {_short(spec, 40)} is {len(spec)} characters long; allowed: at most "
                            f"{settings.max_spec}")
    try:
        name, _ = parse_agent_spec(spec)
        if not settings.allow_code and (name not in available_agents() or spec_files_stamp(spec)):
            raise WebError(422, f"agent spec {spec!r} names code or files on the server's machine, which this "
                                f"server does not load; allowed: a built-in agent ({', '.join(available_agents())}) "
                                "with parameters that name no file (mauscheln serve --allow-code-agents allows them)")
        if name in available_agents() and getattr(agent_class(name), "remote", False) and not settings.allow_remote:
            raise WebError(422, _remote_refused(spec))
    except WebError:
        raise
    except MauschelnError as exc:
        raise WebError(422, str(exc)) from exc


def _remote_refused(spec: str) -> str:
    return (f"agent {spec.partition(':')[0]!r} asks a network endpoint, which this server does not allow (it would "
            "send requests, and its key, for anyone at the table); allowed: an agent that plays on this machine "
            "(mauscheln serve --allow-remote-agents allows remote ones)")


def build_bots(request: NewTable, settings: Settings) -> dict[int, Agent]:
    """The bots of a checked request, each set up for its seat (a policy made for another table fails here)."""
    game = Game(request.config)
    bots = {}
    for seat, spec in request.specs.items():
        try:
            bot = agent_from_spec(spec, seed=request.seed)
            if getattr(bot, "remote", False) and not settings.allow_remote:
                raise WebError(422, _remote_refused(spec))
            bot.setup(game, seat)
        except WebError:
            raise
        except MauschelnError as exc:
            raise WebError(422, f"agents: seat {seat} ({spec}): {exc}") from exc
        bots[seat] = bot
    return bots


# ---------------------------------------------------------------------- a table
@dataclass
class WebTable:
    """A session with a person at ``seat`` and bots elsewhere; the caller holds :attr:`lock` around every use."""

    id: str
    token: str
    seat: int
    session: PlaySession
    ruleset: str
    labels: list[str]
    created: float
    last_used: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: list[dict[str, Any]] = field(default_factory=list)
    tricks: list[dict[str, Any]] = field(default_factory=list)
    failed: str | None = None

    @classmethod
    def open(cls, request: NewTable, settings: Settings, now: float) -> WebTable:
        """Build the bots, deal, and let the bots play up to the person's first decision."""
        bots = build_bots(request, settings)
        game = Game(request.config)
        session = PlaySession(game, bots, seed=request.seed)
        labels = [HUMAN if s == request.seat else bots[s].label() for s in range(game.n)]
        table = cls(secrets.token_urlsafe(9), secrets.token_urlsafe(24), request.seat, session, request.ruleset,
                    labels, now, now)
        table.pending.append({"kind": "deal", "deal": 1, "dealer": session.state.session.dealer,
                              "text": f"deal 1: {table.who(session.state.session.dealer)} deals"})
        table.play_bots()
        return table

    @property
    def game(self) -> Game:
        return self.session.game

    def who(self, seat: int) -> str:
        return f"you (seat {seat})" if seat == self.seat else f"seat {seat} ({self.labels[seat]})"

    def card(self, c: int) -> str:
        return self.game.deck.pretty(c)

    # ------------------------------------------------------------------ moves
    def play_bots(self) -> None:
        """The bots' moves up to the person's turn or the end; a bot that fails stops the table."""
        try:
            self.session.play_bots(self._record)
        except Exception as exc:  # noqa: BLE001 - a bot's own failure: the table stops, the server goes on
            seat = self.session.to_act
            self.failed = (f"the bot at seat {seat} ({self.labels[seat] if seat is not None else '?'}) failed: "
                           f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}")
            raise WebError(500, f"{self.failed}; the table is closed, open a new one") from exc

    def act(self, text: Any) -> None:
        """Play the person's action ``text`` (an action string); nothing changes when it is refused."""
        self.check_open()
        if self.session.over:
            raise WebError(409, "the session is over; no move is possible (open a new table to play again)")
        if self.session.to_act != self.seat:  # the bots always play up to the person's turn; kept as a guard
            raise WebError(409, f"it is seat {self.session.to_act}'s turn, not yours")
        obs, mask, info = self.session.seat_view(self.seat)
        legal = np.flatnonzero(mask).tolist()
        allowed = [self.game.action_to_str(a) for a in legal]
        if not isinstance(text, str) or len(text) > TEXT_LIMIT:
            raise WebError(422, f"action={_short(text, 40)} is not allowed; allowed: one of the legal moves as text: "
                                f"{', '.join(allowed)}", legal=allowed)
        action = parse_action(self.game, text)
        if action not in legal:
            reason = (f"{text.strip()!r} names no action of this game" if action is None
                      else why_not(self.session.view, text, action, legal, obs, info, self.card))
            raise WebError(422, f"{reason}; allowed: {', '.join(allowed)}", legal=allowed)
        self._record(self.session.step(action))
        self.play_bots()

    def check_open(self) -> None:
        if self.failed is not None:
            raise WebError(410, f"{self.failed}; the table is closed, open a new one")

    def _record(self, move: Move) -> None:
        """The events the person's seat is told of a move."""
        g, session = self.game, self.session
        lines = move_lines(g, move, self.seat, self.who, self.card)
        hidden = move.private(g) and move.seat != self.seat
        self.pending.append({"kind": "move", "seat": move.seat, "phase": PHASE_NAMES[move.phase],
                             "action": None if hidden else g.action_to_str(move.action), "text": lines[0]})
        if move.trick is not None:
            trick = {"cards": [[s, g.deck.codes[c]] for s, c in move.trick], "by": move.won_by}
            self.tricks.append(trick)
            self.pending.append({"kind": "trick", **trick, "text": " ".join(lines[1:]).strip()})
        for result in move.results:
            self.tricks = []
            self.pending.append({"kind": "settled", "deal": len(session.results), "result": str(result.kind),
                                 "deltas": list(result.deltas), "yours": result.deltas[self.seat],
                                 "lines": explain_result(g, result)})
        if move.results:
            if session.over:
                self.pending.append({"kind": "over", "totals": list(session.totals),
                                     "text": "session over: " + ", ".join(
                                         f"{self.who(s)} {t:+d}" for s, t in enumerate(session.totals))})
            else:
                dealer = session.state.session.dealer
                self.pending.append({"kind": "deal", "deal": session.deal_no + 1, "dealer": dealer,
                                     "text": f"deal {session.deal_no + 1}: {self.who(dealer)} deals"})

    # ------------------------------------------------------------------ what the seat sees
    def view(self) -> dict[str, Any]:
        """The seat's view now, with the events since its last view (which are then delivered)."""
        g, session = self.game, self.session
        obs, _, info = session.seat_view(self.seat)
        parts = session.view.env.observation_views(obs)
        n = g.n

        def seat_of(i: int) -> int:  # an egocentric index of the seat's observation as an absolute seat
            return (self.seat + i) % n

        out: dict[str, Any] = {"table": self.id, "seat": self.seat, "players": n, "ruleset": self.ruleset,
                               "seats": list(self.labels), "purse": "chips" if g.scoring.uses_chips else "score",
                               "deal": session.deal_no + (not session.over), "settled": session.state.session.deals_settled,
                               "deals": g.config.max_deals}
        out.update({k: info[k] for k in info})
        out["to_act"] = session.to_act
        out["trump_suit"] = "CSHD"[int(np.argmax(parts["trump_suit"]))] if info["trump"] is not None else None
        taken = np.flatnonzero(parts.get("trump_taken_by", np.zeros(0)))
        out["trump_taken_by"] = seat_of(int(taken[0])) if taken.size else None
        exchanged = parts.get("exchanged")
        out["exchanged"] = [None] * n if exchanged is None else [
            None if int(np.argmax(exchanged[i])) == 0 else int(np.argmax(exchanged[i])) - 1
            for i in ((s - self.seat) % n for s in range(n))]
        marked = np.flatnonzero(parts.get("own_discards", np.zeros(0))).tolist()
        out["discards"] = [g.deck.codes[c] for c in marked]
        out["meanings"] = {a: DECISIONS[(session.state.phase, a)] for a in info["legal"]
                           if (session.state.phase, a) in DECISIONS}
        out["tricks"] = [dict(t) for t in self.tricks]
        out["totals"] = list(session.totals)
        out["over"] = session.over
        out["events"], self.pending = self.pending, []
        return out

    def replay(self) -> dict[str, Any]:
        """The whole session with every hand (:func:`agents.bench.replay.replay_actions`); only once it is over."""
        from agents.bench.replay import replay_actions

        if not self.session.over:
            raise WebError(403, "the replay shows every hand, so it opens only once the session is over; allowed: "
                                "finish the session first")
        g, session = self.game, self.session
        state = g.new_session(np.random.default_rng(session.seed), dealer=session.dealer)
        title = (f"{self.ruleset}, {g.n} players, seed {session.seed}: you at seat {self.seat} against "
                 + ", ".join(f"seat {s} {lab}" for s, lab in enumerate(self.labels) if s != self.seat))
        return replay_actions(g, state, session.actions, self.labels, {"title": title, "table": self.ruleset},
                              where=f"table {self.id}")


# ---------------------------------------------------------------------- the live tables
class TableStore:
    """The live tables by id, within :attr:`Settings.max_tables`; idle ones expire."""

    def __init__(self, settings: Settings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings = settings.check()
        self.clock = clock
        self._tables: dict[str, WebTable] = {}
        self._opening = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._tables)

    def sweep(self) -> list[str]:
        """Remove the tables idle for longer than the settings allow (not one in use); their ids."""
        now = self.clock()
        with self._lock:
            gone = [tid for tid, t in self._tables.items()
                    if now - t.last_used > self.settings.idle_seconds and not t.lock.locked()]
            for tid in gone:
                del self._tables[tid]
        return gone

    def reserve(self) -> None:
        """Hold a place for a table being opened; 503 when the server holds its limit of tables."""
        self.sweep()
        with self._lock:
            if len(self._tables) + self._opening >= self.settings.max_tables:
                raise WebError(503, f"the server holds its limit of {self.settings.max_tables} live tables; allowed: "
                                    f"try again when one has expired (after {self._idle_text()} without a request)",
                               limit=self.settings.max_tables)
            self._opening += 1

    def add(self, table: WebTable | None) -> None:
        """Fill a reserved place with ``table`` (None: give the place back)."""
        with self._lock:
            self._opening -= 1
            if table is not None:
                self._tables[table.id] = table

    def get(self, table_id: Any, token: Any) -> WebTable:
        """The table ``table_id`` for the holder of its token: 404 unknown, 401 without a token, 403 another one."""
        self.sweep()
        table = self._tables.get(table_id) if isinstance(table_id, str) else None
        if table is None:
            raise WebError(404, f"no table {_short(table_id, 40)} here; allowed: the id POST /api/tables returned, "
                                f"while the table lives (it expires after {self._idle_text()} without a request)")
        if token is None or token == "":
            raise WebError(401, "this table needs its token; allowed: the token POST /api/tables returned, as "
                                "?token=..., in the JSON body or as 'Authorization: Bearer ...'")
        if not isinstance(token, str) or not secrets.compare_digest(token.encode(), table.token.encode()):
            raise WebError(403, "this token does not belong to this table; allowed: the token POST /api/tables "
                                "returned with it")
        table.last_used = self.clock()
        return table

    def _idle_text(self) -> str:
        seconds = self.settings.idle_seconds
        return f"{seconds / 60:g} minutes" if seconds >= 60 else f"{seconds:g} seconds"
