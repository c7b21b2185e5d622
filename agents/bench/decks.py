"""Versioned deal sets: the fixed deals a benchmark suite is played on.

A suite (``v1``) holds one deal set per *table*: a ruleset with its default
options at a player count (every ruleset at its default table, ``mauscheln``
also at 3, 5, 6 and 7 players; :data:`SUITE_TABLES`), single deals
(``max_deals=1``, an empty pot, the ruleset's bankroll). A deal set is a file
``agents/bench/decks/<suite>/<table>.json`` with the rules it was made for, the
deck's card codes in id order, and a list of complete deals:

* each deal is a row of :data:`COLUMNS`: its index ``i``, then
  ``dealer``, ``hands`` (one string of two-character card codes per seat, in
  seat order), ``trump`` (the trump card) and ``stock`` (top card first) fix
  the first deal of the game in full, independent of how the engine deals;
* ``session_seed`` seeds the session's generator (``numpy.random.default_rng``):
  the engine draws every later random number from it
  (``state.rng.permutation(k)``: the redeal after a throw-in, a reshuffled
  stock), so everything after the fixed first deal is reproducible;
* the agents at the table are reset before deal ``k`` of the session with
  ``agents.evaluation.match.agent_seed(seed, i, k, seat)`` (``seed`` the table's seed,
  ``i`` the deal's index): common random numbers, as in ``mauscheln eval``;
* ``check`` is the first 16 hex digits of the SHA-256 of a replay of the deal
  with a fixed policy (:func:`replay_check`): every seat picks uniformly among
  the legal actions with its own generator, seeded as the agents are. It pins
  the engine's behaviour on that deal (the cards, the legal actions, the
  later shuffles, the settlement); a test replays stored deals and compares.

How deal ``i`` was made (``mauscheln bench generate --suite v1``): the table's
seed is :func:`table_seed` (the first 15 hex digits of
``sha256("mauscheln-bench/<suite>/<table>")``); the dealer and the deck order
come from ``numpy.random.default_rng([seed, i])`` (:func:`agents.evaluation.match.make_deal`),
dealt by the engine's deal pattern, and ``session_seed`` is
``agent_seed(seed, i, 7919)`` (:func:`agents.evaluation.match.series_deal`). The games of
a suite deal are therefore the games of deal ``i`` of ``mauscheln eval --seed
<seed>`` at the same table, as long as the engine does not change.

Each file's content hash (SHA-256 of its canonical JSON: keys sorted, no
spaces) is pinned in ``decks/<suite>/hashes.json``; :func:`load_deal_set`
refuses a file whose hash differs, so a changed or damaged deal set is never
played as if it were the suite. A result record names the suite, the table and
this hash.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.match import FixedDeal, series_deal
from mauscheln_env.config import RULESETS, RuleConfig, make_config
from mauscheln_env.engine import DealSpec, Game, Phase
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import atomic_write_text, strict_json

DECKS = Path(__file__).resolve().parent / "decks"
FORMAT = "mauscheln-deal-set-v1"
SUITES: dict[str, int] = {"v1": 1000}
"""The suites and their deals per table."""
EXTRA_PLAYERS: dict[str, tuple[int, ...]] = {"mauscheln": (3, 5, 6, 7)}
"""Player counts a suite holds besides each ruleset's default table."""
HASHES = "hashes.json"
COLUMNS = ("i", "dealer", "session_seed", "hands", "trump", "stock", "check")
"""The fields of a deal row: its index, the dealer, the session seed, the hands (one string of card codes per
seat), the trump card, the stock (top card first) and the check (:func:`replay_check`)."""


class DealSetError(MauschelnError):
    """A deal set that is missing, damaged, changed (its hash differs from the pinned one) or unknown."""


def table_name(ruleset: str, players: int) -> str:
    return f"{ruleset}_{int(players)}p"


def suite_tables() -> list[tuple[str, str, int]]:
    """``(table, ruleset, players)`` of every table of a suite: each ruleset at its default player count
    (:func:`make_config` without one), then the extra player counts of :data:`EXTRA_PLAYERS`."""
    out = []
    for ruleset in RULESETS:
        counts = sorted({make_config(ruleset).num_players, *EXTRA_PLAYERS.get(ruleset, ())})
        out.extend((table_name(ruleset, n), ruleset, n) for n in counts)
    return out


def table_config(ruleset: str, players: int) -> RuleConfig:
    """The rules of a suite table: the ruleset's defaults, single deals."""
    return make_config(ruleset, players, max_deals=1)


def table_seed(suite: str, table: str) -> int:
    """The seed of a table's deal series: 60 bits of ``sha256("mauscheln-bench/<suite>/<table>")``."""
    return int(hashlib.sha256(f"mauscheln-bench/{suite}/{table}".encode()).hexdigest()[:15], 16)


def check_suite(suite: str) -> str:
    if suite not in SUITES:
        raise DealSetError(f"unknown suite {suite!r}; allowed: {', '.join(SUITES)}")
    return suite


def content_hash(data: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``data`` (keys sorted, no spaces, UTF-8)."""
    text = strict_json(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


# ---------------------------------------------------------------------- the fixed policy of the check
def replay_check(game: Game, deal: FixedDeal) -> str:
    """The check of a deal: 16 hex digits of the SHA-256 of one session played from it by a fixed policy.

    Every seat picks uniformly among the legal actions (``rng.integers(len(legal))``) with a generator
    seeded ``deal.seed_for(k, seat)`` before deal ``k`` of the session. Hashed: every decision (seat,
    legal actions, action), every deal dealt (hands, trump, stock) and every settlement (kind, deltas,
    tricks).
    """
    state = game.new_session(np.random.default_rng(deal.session_seed), dealer=deal.dealer, deal=deal.spec)
    k = 0
    rngs = [np.random.default_rng(deal.seed_for(k, s)) for s in range(game.n)]
    trace: list[Any] = []
    while state.phase is not Phase.OVER:
        seat = state.to_act
        legal = game.legal_actions(state)
        action = legal[int(rngs[seat].integers(len(legal)))]
        trace.append([seat, legal, action])
        results = game.apply(state, action)
        for result in results:
            trace.append([str(result.kind), list(result.deltas), list(result.tricks)])
        if results and state.phase is not Phase.OVER:
            k += len(results)
            rngs = [np.random.default_rng(deal.seed_for(k, s)) for s in range(game.n)]
    trace.append([[list(h), spec.trump, list(spec.stock)] for spec in state.session.deals for h in spec.hands])
    return hashlib.sha256(json.dumps(trace, separators=(",", ":")).encode()).hexdigest()[:16]


# ---------------------------------------------------------------------- the deal set
@dataclass(frozen=True)
class DealSet:
    """One table's deals of a suite, loaded and checked."""

    suite: str
    table: str
    ruleset: str
    players: int
    config: RuleConfig
    seed: int
    deals: tuple[FixedDeal, ...]
    checks: tuple[str, ...]
    hash: str
    path: Path | None = None

    @property
    def game(self) -> Game:
        return _game(self.config)

    def __len__(self) -> int:
        return len(self.deals)

    def describe(self) -> dict[str, Any]:
        """What a result record says about the deal set."""
        return {"suite": self.suite, "table": self.table, "ruleset": self.ruleset, "players": self.players,
                "hash": self.hash, "deals": len(self.deals), "seed": self.seed}


@functools.lru_cache(maxsize=64)
def _game(config: RuleConfig) -> Game:
    return Game(config)


def generate(suite: str, table: str, ruleset: str, players: int, deals: int | None = None) -> dict[str, Any]:
    """The content of a table's deal-set file (see the module docstring for how every deal is made)."""
    check_suite(suite)
    config = table_config(ruleset, players)
    game = _game(config)
    seed = table_seed(suite, table)
    codes = game.deck.codes
    rows = []
    for i in range(SUITES[suite] if deals is None else deals):
        fixed = series_deal(game, seed, i)
        rows.append([
            i,
            fixed.dealer,
            fixed.session_seed,
            ["".join(codes[c] for c in hand) for hand in fixed.spec.hands],
            codes[fixed.spec.trump],
            "".join(codes[c] for c in fixed.spec.stock),
            replay_check(game, fixed),
        ])
    rules = {k: v for k, v in config.to_dict().items() if k not in ("ruleset", "num_players")}
    return {
        "format": FORMAT,
        "suite": suite,
        "table": table,
        "ruleset": ruleset,
        "players": players,
        "rules": rules,
        "deck": " ".join(codes),
        "seed": seed,
        # The v1 files name the function by the module path they were written under; the text is part of their
        # pinned content hash, so it stays as written (the function is agents.evaluation.match.agent_seed).
        "agent_seeds": "agents.match.agent_seed(seed, i, k, seat) before deal k of the session of deal i",
        "made_by": f"mauscheln bench generate --suite {suite}",
        "columns": list(COLUMNS),
        "deals": rows,
    }


def dump(data: dict[str, Any]) -> str:
    """The file text of a deal set: the header indented, one deal per line (small diffs, easy to read)."""
    head = {k: v for k, v in data.items() if k != "deals"}
    lines = strict_json(head, indent=1, ensure_ascii=False)[:-2]
    rows = ",\n".join("  " + strict_json(row, ensure_ascii=False, separators=(",", ":")) for row in data["deals"])
    return f'{lines},\n "deals": [\n{rows}\n ]\n}}\n'


def write_suite(suite: str, out: Path | None = None, tables: Iterable[tuple[str, str, int]] | None = None,
                deals: int | None = None) -> dict[str, str]:
    """Generate every table of ``suite`` into ``out`` (default: the shipped folder) with its ``hashes.json``."""
    out = Path(out) if out is not None else DECKS / suite
    out.mkdir(parents=True, exist_ok=True)
    hashes = {}
    for table, ruleset, players in (tables or suite_tables()):
        data = generate(suite, table, ruleset, players, deals)
        atomic_write_text(out / f"{table}.json", dump(data))
        hashes[table] = content_hash(data)
    atomic_write_text(out / HASHES, strict_json(hashes, indent=1, sort_keys=True) + "\n")
    return hashes


def pinned_hashes(suite: str, folder: Path | None = None) -> dict[str, str]:
    """The content hash of every table of ``suite`` as pinned in its ``hashes.json``."""
    check_suite(suite)
    path = (Path(folder) if folder is not None else DECKS / suite) / HASHES
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DealSetError(f"suite {suite}: {path} is missing; generate it with mauscheln bench generate "
                           f"--suite {suite}") from None
    except (OSError, ValueError) as exc:
        raise DealSetError(f"suite {suite}: {path} cannot be read: {exc}") from exc
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise DealSetError(f"suite {suite}: {path} is not a mapping of table names to hashes")
    return data


def tables_of(suite: str) -> list[str]:
    """The tables ``suite`` ships, in :func:`suite_tables` order."""
    pinned = pinned_hashes(suite)
    order = [t for t, _, _ in suite_tables()]
    return sorted(pinned, key=lambda t: (order.index(t) if t in order else len(order), t))


def find_table(suite: str, ruleset: str, players: int | None) -> str:
    """The table of ``ruleset`` (at ``players``, default its default table) in ``suite``."""
    if ruleset not in RULESETS:
        raise DealSetError(f"unknown ruleset {ruleset!r}; allowed: {', '.join(RULESETS)}")
    n = make_config(ruleset).num_players if players is None else players
    table = table_name(ruleset, n)
    tables = tables_of(suite)
    if table not in tables:
        mine = [t for t in tables if t.rsplit("_", 1)[0] == ruleset]
        raise DealSetError(f"suite {suite} has no table {ruleset} with {n} players; allowed: "
                           f"{', '.join(t.rsplit('_', 1)[1][:-1] for t in mine)} players")
    return table


def load_deal_set(suite: str, table: str, folder: Path | None = None) -> DealSet:
    """Load and check one table of a suite; raises :class:`DealSetError` naming what is wrong.

    The file's content hash must equal the one pinned in ``hashes.json``; the rules must still build
    (the options are the file's own, so a later change of a default does not change the suite); the
    deck must be the same cards in the same id order; every deal must hold each card once with full hands.
    """
    folder = Path(folder) if folder is not None else DECKS / check_suite(suite)
    path = folder / f"{table}.json"
    return _load(str(suite), str(table), str(path), str(folder))


@functools.lru_cache(maxsize=32)
def _load_cached(suite: str, table: str, path: str, folder: str, stamp: tuple[int, int]) -> DealSet:
    return _parse(suite, table, Path(path), Path(folder))


def _load(suite: str, table: str, path: str, folder: str) -> DealSet:
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise DealSetError(f"suite {suite} has no table {table!r} ({p} is missing); allowed: "
                           f"{', '.join(pinned_hashes(suite, Path(folder)))}") from None
    return _load_cached(suite, table, path, folder, (st.st_mtime_ns, st.st_size))


def _parse(suite: str, table: str, path: Path, folder: Path) -> DealSet:
    pinned = pinned_hashes(suite, folder).get(table)
    if pinned is None:
        raise DealSetError(f"suite {suite}: {table} has no pinned hash in {folder / HASHES}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DealSetError(f"{path} cannot be read as JSON: {exc}") from exc
    got = content_hash(data)
    if got != pinned:
        raise DealSetError(f"{path} has content hash {got}, but suite {suite} pins {pinned} for {table}: the file "
                           "was changed or damaged; restore it (git checkout) or regenerate the suite")
    try:
        return _build(suite, table, data, got, path)
    except DealSetError:
        raise
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise DealSetError(f"{path} is not a well-formed deal set: {type(exc).__name__}: {exc}") from exc


def _build(suite: str, table: str, data: dict[str, Any], digest: str, path: Path | None) -> DealSet:
    if data.get("format") != FORMAT or data.get("suite") != suite or data.get("table") != table:
        raise DealSetError(f"{path}: format/suite/table are {data.get('format')!r}/{data.get('suite')!r}/"
                           f"{data.get('table')!r}; allowed: {FORMAT!r}/{suite!r}/{table!r}")
    config = make_config(data["ruleset"], data["players"], **data["rules"])
    game = _game(config)
    if data["deck"].split() != list(game.deck.codes):
        raise DealSetError(f"{path}: the deck of the file is not the deck of {data['ruleset']} with "
                           f"{data['players']} players here (the engine's cards changed)")
    index = {c: i for i, c in enumerate(game.deck.codes)}

    def cards(text: str) -> tuple[int, ...]:
        if len(text) % 2:
            raise ValueError(f"card string {text!r} has an odd length")
        return tuple(index[text[j:j + 2]] for j in range(0, len(text), 2))

    seed = int(data["seed"])
    deals, checks = [], []
    if data.get("columns") != list(COLUMNS):
        raise DealSetError(f"{path}: columns are {data.get('columns')!r}; allowed: {list(COLUMNS)}")
    for i, values in enumerate(data["deals"]):
        if not isinstance(values, list) or len(values) != len(COLUMNS):
            raise DealSetError(f"{path}: deal {i} is not a row of {len(COLUMNS)} fields ({', '.join(COLUMNS)})")
        row = dict(zip(COLUMNS, values))
        if row["i"] != i:
            raise DealSetError(f"{path}: deal {i} is numbered {row['i']!r}; deals must be numbered 0, 1, 2, ...")
        spec = DealSpec(tuple(cards(h) for h in row["hands"]), index[row["trump"]], cards(row["stock"]))
        used = [c for h in spec.hands for c in h] + [spec.trump, *spec.stock]
        if sorted(used) != list(range(game.num_cards)) or len(spec.hands) != game.n or any(
                len(h) != game.hand_size for h in spec.hands):
            raise DealSetError(f"{path}: deal {i} does not hold each of the {game.num_cards} cards once in "
                               f"{game.n} hands of {game.hand_size}")
        dealer = int(row["dealer"])
        if not 0 <= dealer < game.n:
            raise DealSetError(f"{path}: deal {i} has dealer {dealer}; allowed: 0..{game.n - 1}")
        deals.append(FixedDeal(dealer, spec, int(row["session_seed"]), (seed, i)))
        checks.append(str(row["check"]))
    return DealSet(suite, table, data["ruleset"], int(data["players"]), config, seed, tuple(deals), tuple(checks),
                   digest, path)


def load_suite(suite: str) -> list[DealSet]:
    """Every table of a suite."""
    return [load_deal_set(suite, t) for t in tables_of(suite)]


def verify_checks(deal_set: DealSet, indices: Sequence[int] | None = None) -> list[int]:
    """The indices of the deals whose :func:`replay_check` differs from the stored check (empty: the engine
    plays these deals as when the suite was made)."""
    game = deal_set.game
    picked = range(len(deal_set)) if indices is None else indices
    return [i for i in picked if replay_check(game, deal_set.deals[i]) != deal_set.checks[i]]

