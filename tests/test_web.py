"""``mauscheln serve``: whole sessions of every ruleset through the JSON API, no card a seat may not know, the
access rules and bounds, bad input to every endpoint, 20 clients at once against a real server, the command."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
httpx = pytest.importorskip("httpx")

import uvicorn  # noqa: E402

with warnings.catch_warnings():  # Starlette's test client announces its move to httpx2; this project installs httpx
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient  # noqa: E402

from agents.play.session import PlaySession  # noqa: E402
from mauscheln.web.app import create_app  # noqa: E402
from mauscheln.web.serve import main as serve_main  # noqa: E402
from mauscheln.web.tables import Settings  # noqa: E402
from mauscheln_env import MauschelnError, Phase  # noqa: E402
from mauscheln_env.config import RULESETS  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:Using `httpx` with `starlette.testclient`")

TABLES = [("mauscheln", 4), ("mauscheln", 3), ("mauscheln_classic", 4), ("mousel", 5), ("mouche", 5), ("muschka", 4),
          ("mouche_pamphile", None), ("mauscheln_knock", 6)]


def client(**settings: Any) -> TestClient:
    return TestClient(create_app(Settings(**settings)))


def open_table(c: TestClient, **body: Any) -> tuple[str, str, dict[str, Any]]:
    r = c.post("/api/tables", json=body)
    assert r.status_code == 201, r.text
    d = r.json()
    return d["table"], d["token"], d["view"]


# ---------------------------------------------------------------------- what a seat may know (tests/test_play.py's rule)
def known(session: PlaySession, seat: int) -> set[str]:
    """Every card ``seat`` may know now, from the environment's own observation and info of that seat."""
    session.view.refresh()
    env = session.view.env
    try:
        obs = env.observe(session.view.agents[seat])["observation"]
    except MauschelnError:
        return set()
    n_cards, codes = session.game.num_cards, session.game.deck.codes
    out = set()
    for piece in env.observation_layout:  # every card-indexed piece: hand, discards, draws, trump card, tricks
        if piece.shape[-1] == n_cards:
            out |= {codes[c] for c in np.flatnonzero(env.observation_views(obs)[piece.name].reshape(-1, n_cards).sum(0))}
    info = env.seat_info(seat)
    return out | set(info["hand"]) | {c for _, c in info["trick"]} | ({info["trump"]} if info["trump"] else set())


@pytest.fixture
def watched(monkeypatch):
    """Per session, the cards its person's seat could know at some moment since the last look (``look`` resets):
    what it knew before and after every action, and a card played to a trick (face up for everyone)."""
    seen: dict[int, set[str]] = {}
    step = PlaySession.step

    def watched_step(self: PlaySession, action: int):
        seat = next(s for s in range(self.game.n) if s not in self.bots)
        acc = seen.setdefault(id(self), set())
        acc |= known(self, seat)
        if self.state.phase is Phase.PLAY:
            acc.add(self.game.deck.codes[action])
        move = step(self, action)
        acc |= known(self, seat)
        return move

    monkeypatch.setattr(PlaySession, "step", watched_step)
    return seen


CODE = re.compile(r"(?<![A-Za-z0-9])([AKQJT98765432])([CSHD♣♠♥♦])(?![A-Za-z0-9])")
SYMBOL = {"♣": "C", "♠": "S", "♥": "H", "♦": "D"}


def _without_ids(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _without_ids(v) for k, v in x.items() if k not in ("table", "token")}
    return [_without_ids(v) for v in x] if isinstance(x, list) else x


def cards_named(payload: dict[str, Any]) -> set[str]:
    """Every card a response names (as a code such as QH or a symbol such as Q♥); the table's random id and token
    are left out (they may hold such letters)."""
    text = json.dumps(_without_ids(payload), ensure_ascii=False)
    return {rank + SYMBOL.get(suit, suit) for rank, suit in CODE.findall(text)}


def play_session(c: TestClient, seen: dict[int, set[str]], ruleset: str, players: int | None, seed: int,
                 deals: int = 2, agents: Any = "expert") -> dict[str, Any]:
    """Play a session through the API with random legal moves (and now and then an illegal one), checking every
    response against what the seat may know at that moment. The final view."""
    rng = np.random.default_rng(seed)
    body = {"ruleset": ruleset, "seed": seed, "deals": deals, "agents": agents, "seat": seed % (players or 4)}
    if players is not None:
        body["players"] = players
    r = c.post("/api/tables", json=body)
    assert r.status_code == 201, r.text
    made = r.json()
    tid, token = made["table"], made["token"]
    table = c.app.state.store._tables[tid]
    seat, session = table.seat, table.session

    def check(payload: dict[str, Any]) -> None:
        allowed = seen.pop(id(session), set()) | known(session, seat)
        named = cards_named(payload)
        assert named <= allowed, (ruleset, seed, sorted(named - allowed), payload)

    check(made)
    view = made["view"]
    moves = 0
    while not view["over"]:
        assert view["to_act"] == seat and view["legal"], view
        illegal = [c for c in view["hand"] if c not in view["legal"]]
        if moves % 5 == 1 and illegal:  # an illegal card: refused with the legal moves, nothing changes
            r = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": illegal[0]})
            assert r.status_code == 422 and r.json()["legal"] == view["legal"], r.text
            check(r.json())
            again = c.get(f"/api/tables/{tid}", params={"token": token}).json()
            assert again["events"] == [] and {k: v for k, v in again.items() if k != "events"} == \
                {k: v for k, v in view.items() if k != "events"}
        r = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": str(rng.choice(view["legal"]))})
        assert r.status_code == 200, r.text
        view = r.json()
        check(view)
        moves += 1
        assert moves < 400
    return {"table": tid, "token": token, "view": view, "session": session}


@pytest.mark.parametrize("ruleset, players", TABLES)
def test_whole_sessions_of_every_ruleset_name_no_card_the_seat_may_not_know(watched, ruleset, players):
    c = client()
    for seed in range(3):
        out = play_session(c, watched, ruleset, players, seed)
        view, session = out["view"], out["session"]
        assert view["over"] and view["events"][-1]["kind"] == "over"
        assert view["totals"] == session.totals
        assert sum(1 for e in view["events"] if e["kind"] == "settled") >= 1


def test_every_ruleset_is_offered_and_playable():
    c = client()
    options = c.get("/api/options").json()
    assert set(options["rulesets"]) == set(RULESETS)
    assert "mouche_pamphile" in options["presets"] and options["presets"]["mouche_pamphile"]["ruleset"] == "mouche"
    assert {"expert", "random", "pimc", "learned"} <= set(options["agents"])
    assert {ruleset for ruleset, _ in TABLES} >= set(RULESETS)


def test_a_view_holds_the_seats_infos_and_the_events_once():
    c = client()
    tid, token, view = open_table(c, ruleset="mouche", players=5, seat=2, seed=7, deals=1)
    for key in ("hand", "trump", "trick", "roles", "chips", "pot", "phase", "legal", "dealer", "tricks_won"):
        assert key in view
    assert view["seat"] == 2 and view["seats"][2] == "you" and view["to_act"] == 2
    assert view["events"][0]["kind"] == "deal"
    again = c.get(f"/api/tables/{tid}", params={"token": token}).json()
    assert again["events"] == []  # delivered once
    assert c.get(f"/api/tables/{tid}", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_bots_private_card_is_a_count_and_its_trick_card_is_named():
    """Mouche: the bots start their exchanges with a discard; the person is told that, never the card."""
    c = client()
    _, _, view = open_table(c, ruleset="mouche", players=5, seat=4, seed=3, deals=1, agents="expert")
    private = [e for e in view["events"] if e["kind"] == "move" and e["phase"] in ("decide", "exchange")
               and e["action"] is None]
    assert private and all("a card" in e["text"] for e in private)


def test_the_replay_opens_only_when_the_session_is_over_and_shows_every_hand(watched):
    c = client()
    tid, token, view = open_table(c, ruleset="mauscheln", seed=5, deals=1)
    for path in (f"/api/tables/{tid}/replay", f"/tables/{tid}/replay"):
        r = c.get(path, params={"token": token})
        assert r.status_code == 403 and "only once the session is over" in r.text
        assert c.get(path).status_code == 401
    rng = np.random.default_rng(0)
    while not view["over"]:
        view = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": str(rng.choice(view["legal"]))}).json()
    rep = c.get(f"/api/tables/{tid}/replay", params={"token": token}).json()
    assert rep["deltas"] == view["totals"] and rep["seats"][0] == "you"
    assert all(len(h) == 4 for h in rep["deals"][0]["hands"])  # every seat's hand
    page = c.get(f"/tables/{tid}/replay", params={"token": token})
    assert page.status_code == 200 and 'id="report-data"' in page.text and "window.replayViewer" in page.text
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page.text, re.S).group(1))
    assert data["view"] == "all" and data["tables"][0]["sessions"][0]["deltas"] == view["totals"]


# ---------------------------------------------------------------------- access rules
def test_tokens_tables_and_actions_are_checked():
    c = client()
    tid, token, view = open_table(c, seed=1)
    other, other_token, _ = open_table(c, seed=2)
    assert c.get(f"/api/tables/{tid}").status_code == 401
    r = c.get(f"/api/tables/{tid}", params={"token": other_token})
    assert r.status_code == 403 and "does not belong" in r.json()["error"]
    r = c.post(f"/api/tables/{tid}/act", json={"token": other_token, "action": view["legal"][0]})
    assert r.status_code == 403
    r = c.post(f"/api/tables/{tid}/act", json={"action": view["legal"][0]})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    r = c.get("/api/tables/nosuchtable", params={"token": token})
    assert r.status_code == 404 and "no table" in r.json()["error"]
    before = c.get(f"/api/tables/{tid}", params={"token": token}).json()
    for action, word in [("xx", "names no action"), (7, "allowed: one of the legal moves"),
                         (None, "allowed: one of the legal moves"), ("x" * 500, "allowed"),
                         ("done" if "done" not in view["legal"] else "go", "not a legal move")]:
        r = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": action})
        assert r.status_code == 422, (action, r.text)
        assert word in r.json()["error"] and r.json()["legal"] == view["legal"], (action, r.json())
    after = c.get(f"/api/tables/{tid}", params={"token": token}).json()
    assert {k: v for k, v in after.items() if k != "events"} == {k: v for k, v in before.items() if k != "events"}
    r = c.post(f"/api/tables/{tid}/act", json={"token": token})
    assert r.status_code == 422 and "no action" in r.json()["error"]


def test_an_illegal_card_is_refused_with_the_reason():
    c = client()
    for seed in range(20):
        tid, token, view = open_table(c, ruleset="mauscheln", seed=seed, deals=3, agents="random")
        rng = np.random.default_rng(seed)
        while not view["over"]:
            bad = [x for x in view["hand"] if x not in view["legal"]]
            if view["phase"] == "play" and view["trick"] and bad:
                r = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": bad[0].lower()})
                assert r.status_code == 422
                assert re.search(r"you must (follow suit|beat)|you have no \w+, so you must trump", r.json()["error"])
                return
            view = c.post(f"/api/tables/{tid}/act", json={"token": token,
                                                          "action": str(rng.choice(view["legal"]))}).json()
    pytest.fail("no illegal card came up")


def test_tables_expire_after_inactivity():
    app = create_app(Settings(idle_seconds=60))
    now = [1000.0]
    app.state.store.clock = lambda: now[0]
    c = TestClient(app)
    tid, token, _ = open_table(c, seed=1)
    now[0] += 59
    assert c.get(f"/api/tables/{tid}", params={"token": token}).status_code == 200  # a request keeps it alive
    now[0] += 61
    r = c.get(f"/api/tables/{tid}", params={"token": token})
    assert r.status_code == 404 and "expires after 1 minutes without a request" in r.json()["error"]
    assert len(app.state.store) == 0


def test_the_number_of_tables_the_body_size_and_a_busy_table_are_bounded():
    c = client(max_tables=2, max_body=2048)
    tid, token, _ = open_table(c, seed=1)
    open_table(c, seed=2)
    r = c.post("/api/tables", json={"seed": 3})
    assert r.status_code == 503 and "limit of 2 live tables" in r.json()["error"] and r.json()["limit"] == 2
    r = c.post("/api/tables", content=b"{" + b" " * 5000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413 and "at most 2048 bytes" in r.json()["error"]

    def chunks():
        yield b'{"seed": 1, "agents": ["'
        for _ in range(10):
            yield b"x" * 500
        yield b'"]}'

    r = c.post("/api/tables", content=chunks())  # no content-length: counted while read
    assert r.status_code == 413
    table = c.app.state.store._tables[tid]
    with table.lock:  # another request is working on this table
        r = c.get(f"/api/tables/{tid}", params={"token": token})
        assert r.status_code == 429 and r.headers["retry-after"] == "1" and "one request at a time" in r.text
    assert c.get(f"/api/tables/{tid}", params={"token": token}).status_code == 200


def test_remote_and_code_agents_need_the_operators_permission(tmp_path):
    c = client()
    r = c.post("/api/tables", json={"agents": "llm:base_url=http://127.0.0.1:9/v1,model=m"})
    assert r.status_code == 422 and "--allow-remote-agents" in r.json()["error"]
    ckpt = tmp_path / "policy.safetensors"
    ckpt.write_bytes(b"not a policy")
    c = client(allow_code=False)
    r = c.post("/api/tables", json={"agents": f"learned:checkpoint={ckpt}"})
    assert r.status_code == 422 and "--allow-code-agents" in r.json()["error"]
    r = c.post("/api/tables", json={"agents": "expert"})
    assert r.status_code == 201


def test_a_learned_policy_plays_at_the_table():
    pytest.importorskip("torch")
    c = client()
    tid, token, view = open_table(c, ruleset="mauscheln", players=4, seed=4, deals=1,
                                  agents=["learned:checkpoint=mauscheln4", "expert", "random"])
    assert view["seats"][1].startswith("learned")
    rng = np.random.default_rng(1)
    while not view["over"]:
        view = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": str(rng.choice(view["legal"]))}).json()
    assert view["events"][-1]["kind"] == "over"


def test_a_failing_bot_closes_its_table_with_a_clear_message(monkeypatch):
    from agents.scripted.baselines import RandomAgent

    c = client()
    tid, token, view = open_table(c, seed=1, agents="random")

    def broken(self, obs, mask, info):
        raise RuntimeError("out of ideas")

    monkeypatch.setattr(RandomAgent, "act", broken)
    r = c.post(f"/api/tables/{tid}/act", json={"token": token, "action": view["legal"][0]})
    assert r.status_code == 500 and "failed: RuntimeError: out of ideas" in r.json()["error"]
    r = c.get(f"/api/tables/{tid}", params={"token": token})
    assert r.status_code == 410 and "table is closed" in r.json()["error"]


# ---------------------------------------------------------------------- bad input to every endpoint
BAD_NEW_TABLES = [
    ({"ruleset": "poker"}, "allowed: a ruleset or a shipped preset"),
    ({"ruleset": "../../etc/passwd.yaml"}, "allowed: a ruleset or a shipped preset"),
    ({"ruleset": 5}, "allowed: a ruleset"),
    ({"players": 99}, "players"),
    ({"players": "4"}, "allowed: a whole number"),
    ({"players": True}, "allowed: a whole number"),
    ({"seat": 4}, "allowed: a seat 0..3"),
    ({"seat": -1}, "allowed: a seat 0..3"),
    ({"seat": 1.5}, "allowed: a seat"),
    ({"deals": 0}, "allowed: a whole number 1..20"),
    ({"deals": 10**9}, "allowed: a whole number 1..20"),
    ({"seed": -1}, "allowed: a whole number 0.."),
    ({"seed": 2**70}, "allowed: a whole number 0.."),
    ({"seed": "x"}, "allowed: a whole number 0.."),
    ({"agents": []}, "allowed: one agent spec"),
    ({"agents": ["expert", "random"]}, "allowed: one agent spec for every bot or 3"),
    ({"agents": [1]}, "allowed: one agent spec"),
    ({"agents": {"name": "expert"}}, "allowed: one agent spec"),
    ({"agents": "nobody"}, "unknown agent"),
    ({"agents": "pimc:samples=0"}, "samples"),
    ({"agents": "expert:depth=3"}, "has no parameter"),
    ({"agents": "x" * 400}, "allowed: at most 300"),
    ({"rules": {"knock": True, "stake": "lots"}}, "stake"),
    ({"rules": {"no_such_rule": 1}}, "no_such_rule"),
    ({"rules": [1]}, "allowed: an object of rule options"),
    ({"rules": {"knock": {"deep": 1}}}, "allowed: an object of rule options"),
    ({"rules": {"max_deals": 4}}, "deals"),
    ({"colour": "red"}, "unknown key(s) 'colour'; allowed: ruleset"),
    ([1, 2], "allowed: a JSON object"),
    ("text", "allowed: a JSON object"),
    (None, "allowed: a JSON object"),
]


@pytest.mark.parametrize("body, words", BAD_NEW_TABLES)
def test_bad_requests_to_open_a_table_are_refused_with_what_is_allowed(body, words):
    c = client()
    r = c.post("/api/tables", content=json.dumps(body), headers={"content-type": "application/json"})
    assert r.status_code == 422, (body, r.text)
    assert words in r.json()["error"], (body, r.json())
    assert len(c.app.state.store) == 0


@pytest.mark.parametrize("raw, status, words", [
    (b"{not json", 400, "is not JSON"),
    (b"\xff\xfe", 400, "is not JSON"),
    (b'{"seed": NaN}', 400, "is not JSON"),
    (b"[" * 100_00 + b"]" * 100_00, 413, "at most"),
    (b"[" * 3000 + b"]" * 3000, 400, "not JSON"),
])
def test_a_body_that_is_not_json_is_refused(raw, status, words):
    c = client(max_body=16 * 1024)
    for path in ("/api/tables", "/api/tables/x/act"):
        r = c.post(path, content=raw)
        assert r.status_code == status, (raw[:20], path, r.text)
        assert words in r.json()["error"] and "allowed" in r.json()["error"]


def test_every_endpoint_answers_bad_input_with_a_4xx_naming_what_is_allowed():
    c = client()
    tid, token, _ = open_table(c, seed=1)
    cases = [
        ("GET", "/api/tables", None, 405), ("PUT", "/api/tables", None, 405), ("DELETE", f"/api/tables/{tid}", None, 405),
        ("GET", f"/api/tables/{tid}/act", None, 405), ("POST", "/api/options", None, 405),
        ("GET", "/api/nothing", None, 404), ("GET", "/api/tables/" + "x" * 3000, None, 404),
        ("POST", f"/api/tables/{tid}/act", {"token": token, "action": "pass", "extra": 1}, 422),
        ("POST", f"/api/tables/{tid}/act", [token], 422), ("POST", f"/api/tables/{tid}/act", {"token": 5}, 403),
        ("POST", f"/api/tables/{tid}/act", {"token": [token]}, 403),
        ("GET", f"/api/tables/{tid}/replay", None, 401), ("GET", "/api/tables/nope/replay", None, 404),
    ]
    for method, path, body, status in cases:
        r = c.request(method, path, content=None if body is None else json.dumps(body))
        assert r.status_code == status, (method, path, r.text)
        assert "allowed" in r.json()["error"] or status in (401, 403), (method, path, r.json())
        assert "Traceback" not in r.text
    for path, status in [("/nothing", 404), ("/tables/nope/replay?token=x", 404), (f"/tables/{tid}/replay", 401),
                         ("/replay?record=nosuch", 404), ("/replay?record=mauscheln_4p/nobody", 404),
                         ("/replay?deal=3", 422), ("/static/none.js", 404)]:
        r = c.get(path)
        assert r.status_code == status, (path, r.text)
        assert "Traceback" not in r.text and "<h1>" in r.text or path.startswith("/static")


# ---------------------------------------------------------------------- benchmark records
def test_a_benchmark_records_games_open_in_the_viewer(tmp_path):
    from agents.bench import leaderboard

    shipped = getattr(leaderboard, "shipped_paths", None)
    paths = shipped("v1") if shipped else sorted(__import__("pathlib").Path("benchmarks/results/v1").glob("*/*.json.gz"))
    path = next(p for p in paths if p.parent.name == "mauscheln_4p" and p.name.startswith("expert"))
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(leaderboard.read_record(path), db)
    c = client(db=str(db))
    index = c.get("/replay")
    assert index.status_code == 200 and "record=mauscheln_4p%2Fexpert" in index.text
    page = c.get("/replay", params={"record": "mauscheln_4p/expert", "deal": "1"})
    assert page.status_code == 200, page.text
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', page.text, re.S).group(1))
    games = next(iter(data["tables"][0]["games"].values()))
    assert list(games["deals"]) == ["1"] and len(games["deals"]["1"]) == 8
    first = c.get("/replay", params={"record": "mauscheln_4p/expert"})
    data = json.loads(re.search(r'id="report-data">(.*?)</script>', first.text, re.S).group(1))
    assert sorted(next(iter(data["tables"][0]["games"].values()))["deals"]) == ["0", "1", "2"]
    assert "record=mauscheln_4p%2Fexpert&amp;deal=9" in first.text  # every other kept deal is a link
    r = c.get("/replay", params={"record": "mauscheln_4p/expert", "deal": "900"})
    assert r.status_code == 404 and "keeps the games of deals 0..9 only" in r.text


# ---------------------------------------------------------------------- a real server, 20 clients at once
@contextlib.contextmanager
def running(app) -> Iterator[str]:
    """``app`` on uvicorn at 127.0.0.1 on a free port, in a thread; stopped when the block ends."""
    sock = socket.create_server(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            threading.Event().wait(0.05)
        assert server.started
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _client_session(base: str, k: int, out: dict[int, Any]) -> None:
    ruleset, players = TABLES[k % len(TABLES)]
    rng = np.random.default_rng(100 + k)
    body = {"ruleset": ruleset, "seed": 1000 + k, "deals": 2, "agents": "expert" if k % 2 else "random",
            "seat": k % 3}
    if players:
        body["players"] = players
    chosen = []
    try:
        with httpx.Client(base_url=base, timeout=120) as h:
            made = h.post("/api/tables", json=body)
            assert made.status_code == 201, made.text
            tid, token, view = made.json()["table"], made.json()["token"], made.json()["view"]
            while not view["over"]:
                assert view["table"] == tid and view["seat"] == body["seat"] and view["ruleset"] == ruleset
                action = str(rng.choice(view["legal"]))
                chosen.append(action)
                r = h.post(f"/api/tables/{tid}/act", json={"token": token, "action": action})
                assert r.status_code == 200, r.text
                view = r.json()
            out[k] = (body, chosen, view["totals"])
    except BaseException as exc:  # noqa: BLE001 - reported by the test
        out[k] = exc


def test_twenty_clients_play_whole_sessions_at_once_against_a_real_server():
    results: dict[int, Any] = {}
    with running(create_app(Settings(max_tables=32))) as base:
        threads = [threading.Thread(target=_client_session, args=(base, k, results)) for k in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=300)
    assert sorted(results) == list(range(20))
    errors = {k: v for k, v in results.items() if isinstance(v, BaseException)}
    assert not errors, errors
    # no mixed-up state: each session, replayed alone with the same choices, ends with the same totals
    from mauscheln.web.tables import build_bots, parse_new_table

    for body, chosen, totals in results.values():
        request = parse_new_table(body, Settings())
        session = PlaySession(__import__("mauscheln_env").Game(request.config), build_bots(request, Settings()),
                              seed=request.seed)
        session.play_bots()
        for action in chosen:
            session.step(session.game.action_from_str(action))
            session.play_bots()
        assert session.over and session.totals == totals, body


class _Gate:
    """A bot that thinks until the test lets it: ``armed``, its next move waits for ``release``."""

    armed = threading.Event()
    entered = threading.Event()
    release = threading.Event()


def _gated_agent(seed=None):
    from agents.scripted.baselines import RandomAgent

    class Gated(RandomAgent):
        name = "gated"

        def act(self, observation, action_mask, info):
            if _Gate.armed.is_set():
                _Gate.entered.set()
                _Gate.release.wait(timeout=120)
            return super().act(observation, action_mask, info)

    return Gated(seed=seed)


def test_a_slow_bot_holds_up_only_its_own_table(monkeypatch):
    """While a bot of one table thinks (here: until released), that table answers 429 and the others play on."""
    from agents import base

    monkeypatch.setitem(base._EXTRA, "gated", (_gated_agent, "a bot that waits for the test"))
    for event in (_Gate.armed, _Gate.entered, _Gate.release):
        event.clear()
    slow: dict[int, Any] = {}
    with running(create_app(Settings())) as base_url, httpx.Client(base_url=base_url, timeout=120) as h:
        made = h.post("/api/tables", json={"seed": 1, "agents": "gated", "deals": 1}).json()
        tid, token = made["table"], made["token"]
        _Gate.armed.set()
        def move() -> None:
            with httpx.Client(base_url=base_url, timeout=120) as own:
                slow[0] = own.post(f"/api/tables/{tid}/act", json={"token": token, "action": made["view"]["legal"][0]})

        mover = threading.Thread(target=move)
        mover.start()
        assert _Gate.entered.wait(timeout=60)  # the bot is thinking inside that request
        busy = h.get(f"/api/tables/{tid}", params={"token": token})
        assert busy.status_code == 429
        _client_session(base_url, 3, slow)  # another table plays a whole session meanwhile
        assert not isinstance(slow[3], BaseException), slow[3]
        assert mover.is_alive()  # the slow table's request still waits for its bot
        _Gate.release.set()
        mover.join(timeout=60)
    assert slow[0].status_code == 200


# ---------------------------------------------------------------------- the command
def test_mauscheln_serve_refuses_bad_flags_and_a_busy_port(capsys):
    assert serve_main(["--port", "70000"]) == 2
    assert serve_main(["--max-tables", "0"]) == 2
    assert serve_main(["--idle-minutes", "-1"]) == 2
    with pytest.raises(SystemExit) as exit_:
        serve_main(["--colour"])
    assert exit_.value.code == 2
    busy = socket.create_server(("127.0.0.1", 0))
    try:
        assert serve_main(["--port", str(busy.getsockname()[1])]) == 2
    finally:
        busy.close()
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 5 and all(line.startswith("mauscheln serve: error: ") for line in err)
    assert "is in use; allowed: a free port" in err[-1]


def test_mauscheln_serve_starts_answers_and_stops():
    proc = subprocess.Popen([sys.executable, "-m", "mauscheln", "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line).group(0)
        page = httpx.get(url, timeout=30)
        assert page.status_code == 200 and "/static/play.js" in page.text
        assert httpx.get(url + "static/play.js", timeout=30).status_code == 200
        assert httpx.get(url + "api/options", timeout=30).json()["limits"]["code_agents"] is True
    finally:
        proc.send_signal(__import__("signal").SIGINT)
        try:
            proc.wait(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 0


def test_the_documented_commands_and_flags_are_the_commands():
    """Every ``mauscheln serve`` line of docs/web.md and the README parses, and the flag table names every flag."""
    import shlex
    from pathlib import Path

    from mauscheln.web.serve import build_parser

    root = Path(__file__).resolve().parents[1]
    page = (root / "docs" / "web.md").read_text(encoding="utf-8")
    lines = 0
    for text in (page, (root / "README.md").read_text(encoding="utf-8")):
        for block in re.findall(r"```bash\n(.*?)```", text, re.S):
            for line in block.splitlines():
                words = shlex.split(line, comments=True)
                if words[:2] == ["mauscheln", "serve"]:
                    build_parser().parse_args(words[2:])
                    lines += 1
    assert lines >= 3
    flags = {a.option_strings[0] for a in build_parser()._actions if a.option_strings and a.dest != "help"}
    documented = set(re.findall(r"^\| `(--[a-z-]+)", page, re.M))
    assert documented == flags


# ---------------------------------------------------------------------- numbers of thousands of digits
# int() refuses a number of more than 4,300 digits that passed isascii() and isdigit(): a 4xx, not a 500.


def test_a_replay_deal_of_thousands_of_digits_is_a_404():
    c = TestClient(create_app(Settings()), raise_server_exceptions=False)
    r = c.get("/replay", params={"record": "mauscheln_4p/expert", "deal": "9" * 5000})
    assert r.status_code == 404 and "keeps the games of deals" in r.text


def test_a_content_length_of_thousands_of_digits_is_a_413():
    c = TestClient(create_app(Settings()), raise_server_exceptions=False)
    r = c.post("/api/tables", content=b"{}", headers={"content-length": "9" * 5000, "content-type": "application/json"})
    assert r.status_code == 413 and "allowed: at most" in r.text and len(r.text) < 2000
