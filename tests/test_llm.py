"""The text view of a seat and the ``llm`` agent, against a scripted chat server on 127.0.0.1.

* every code in a seat's text is a card that seat may know (its visible hand, own discards and draws, the
  trump card, the cards played, cards shown to all), for every seat at every step of seeded sessions of
  every ruleset and option set; shuffling what a seat cannot see leaves its text alike;
* replies are read strictly (:func:`agents.llm.agent.parse_reply`);
* the agent plays whole sessions of every ruleset through ``mauscheln eval`` and ``mauscheln bench run``
  against :class:`tests.llm_server.ScriptedChatServer`; unparseable replies are re-asked, then answered by
  the fallback, and the counts reach the result records; timeouts, unreachable endpoints, refused requests
  and bad parameters stop with one line; the key is sent and never written.
"""

from __future__ import annotations

import importlib.util
import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mauscheln_env
from agents.base import AgentError, agent_from_spec, make_agent, parse_agent_spec
from agents.evaluation.duplicate import Settings, evaluate_pair
from agents.llm.agent import LLMAgent, LLMError, parse_reply
from agents.llm.text import TextView, table_text
from agents.views import EnvView
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS
from tests.hidden import perturb_hidden
from tests.llm_server import ScriptedChatServer
from tests.scenario import Scenario
from tests.test_baselines_family import VARIANTS

needs_httpx = pytest.mark.skipif(importlib.util.find_spec("httpx") is None,
                                 reason="the llm agent needs httpx (pip install 'mauscheln[llm]')")

DOC_DECK = "AH 8S QC KS 9H 7C 8H QD 7S 9C TS JD TC 8D 7D 9S AS KC JC QH JH TH KH QS AC AD KD TD 8C 9D JS 7H"
CODE = re.compile(r"(?<![A-Za-z0-9])([AKQJT2-9][CSHD])(?![A-Za-z0-9])")
ROOT = Path(__file__).resolve().parents[1]


def llm(server: ScriptedChatServer, **extra) -> str:
    params = {"base_url": server.base_url, "model": "scripted", "backoff": 0, **extra}
    return "llm:" + ",".join(f"{k}={v}" for k, v in params.items())


# ---------------------------------------------------------------------- the text view
def _known(game: Game, state, seat: int) -> set[str]:
    """The cards ``seat`` may know, from the engine state (independently of the observation)."""
    d = state.deal
    mask = game.visible_hand(state, seat) | d.discards[seat] | (d.drawn[seat] & ~d.blind[seat]) | d.shown()
    for trick in [*d.tricks, d.trick]:
        for _, card in trick:
            mask |= 1 << card
    if not d.undealt:
        mask |= 1 << d.trump_card
    return set(game.deck.codes_of(mask))


def _walk(ruleset: str, players: int, options: dict, sessions: int, reset_options: dict | None = None) -> set[str]:
    """Seeded random sessions on the raw env: at every step every seat's text names only cards it may know, and
    the acting seat's text is the same when every card it cannot see changes place. Returns the phases seen."""
    env = mauscheln_env.raw_env(ruleset=ruleset, num_players=players, **options)
    game = env.game
    views = [TextView(game, s) for s in range(players)]
    twin_view = EnvView(game.config)
    rng = np.random.default_rng(3)
    phases = set()
    for session in range(sessions):
        env.reset(seed=session, options=reset_options)
        while env.agents and not all(env.terminations.values()) and not all(env.truncations.values()):
            state = env.engine_state
            for seat, agent in enumerate(env.possible_agents):
                out = env.observe(agent)
                text = views[seat].render(out["observation"], out["action_mask"], env.infos[agent])
                named = set(CODE.findall(text))
                assert named <= _known(game, state, seat), (seat, named - _known(game, state, seat), text)
                if seat == state.to_act:
                    phases.add(env.infos[agent]["phase"])
                    if not state.deal.undealt:
                        twin_view.bind(perturb_hidden(game, state, seat, rng))
                        obs2, mask2, info2 = twin_view.seat_view(seat)
                        assert views[seat].render(obs2, mask2, info2) == text
            mask = env.observe(env.agent_selection)["action_mask"]
            env.step(int(rng.choice(np.flatnonzero(mask))))
    return phases


@pytest.mark.parametrize("ruleset,options", [(r, o) for r in sorted(RULESETS) for o in VARIANTS[r]],
                         ids=lambda x: str(x))
def test_a_seat_text_names_only_cards_the_seat_may_know(ruleset, options):
    phases = _walk(ruleset, 4, {"max_deals": 2, **options}, sessions=6)
    assert "play" in phases


def test_every_phase_is_put_into_words():
    """With every option on (and the Pamphile turned for trump) each phase of each ruleset occurs, and its text
    says what the decision is."""
    seen = {}
    for name, spec in RULESETS.items():
        seen[name] = _walk(name, 4, {"max_deals": 3, **spec.showcase}, sessions=12)
    seen["mouche"] |= _walk("mouche", 4, {"pamphile": True, "beatrix": True}, sessions=4,
                            reset_options={"deal": {"trump": "JC"}})
    for name, spec in RULESETS.items():
        assert set(spec.phases) <= seen[name], (name, set(spec.phases) - seen[name])


def test_the_text_of_a_known_position():
    """Named cards: the mauschler has led AH; the goer at seat 3 sees the table, the trick and his moves."""
    sc = Scenario(DOC_DECK, 4, dealer=0, pot=8)
    sc.act(1, "mauscheln")
    sc.act(2, "pass")
    sc.act(3, "go")
    sc.act(0, "pass")
    for seat in (1, 3):
        sc.act(seat, "done")
    hand1 = sc.env.infos["player_1"]["hand"]
    sc.act(1, hand1[0])
    view = TextView(sc.game, 3)
    out = sc.env.observe("player_3")
    info = sc.env.infos["player_3"]
    text = view.render(out["observation"], out["action_mask"], info)
    assert "You are seat 3. The dealer is seat 0." in text
    assert f"Trump card: {sc.env.infos['player_3']['trump']}, face up." in text
    assert f"Your hand: {' '.join(info['hand'])}." in text
    assert "- seat 1: mauschler - declared: needs 2 tricks; exchanged 0 card(s); tricks won 0." in text
    assert "- seat 3 (you, to act): goer" in text
    assert f"Trick 1 in play: seat 1 led {hand1[0]}." in text
    listed = re.findall(r"^(\d+)\. (\S+)", text, re.M)
    assert [m for _, m in listed] == info["legal"] and [int(k) for k, _ in listed] == list(range(1, len(listed) + 1))
    assert "Pot: 12 chips." in text


def test_the_docs_example_is_what_the_code_writes():
    sc = Scenario(DOC_DECK, 4, dealer=0, pot=8)
    for seat, action in ((1, "mauscheln"), (2, "pass"), (3, "go"), (0, "pass"), (1, "9C"), (1, "8D"), (1, "done"),
                         (3, "JD"), (3, "done")):
        sc.act(seat, action)
    out = sc.env.observe("player_1")
    text = TextView(sc.game, 1).render(out["observation"], out["action_mask"], sc.env.infos["player_1"])
    page = (ROOT / "docs" / "agents" / "llm.md").read_text(encoding="utf-8")
    block = page.split("<!-- example view: begin -->")[1].split("<!-- example view: end -->")[0].strip()
    assert block == f"```text\n{text}\n```"


def test_the_table_text_is_the_rules_of_the_table():
    game = Game(make_config("mouche", 4, pamphile=True))
    text = table_text(game)
    assert "counter-clockwise" in text and "pamphile = True" in text and RULESETS["mouche"].brief.split()[0] in text


# ---------------------------------------------------------------------- reading replies
MOVES = ["QH", "7S", "pass", "go"]


@pytest.mark.parametrize("reply,expected", [
    ("QH", "QH"), ("qh", "QH"), (" `7S` ", "7S"), ("**pass**", "pass"), ("2", "7S"), ("4.", "go"),
    ("3. pass", "pass"), ("1. QH - play QH", "QH"), ("I play `QH`.", "QH"), ("Play QH, the highest.", "QH"),
    ("Thinking...\nAnswer: go", "go"), ("Final answer: 2", "7S"), ("Answer: I will pass", "pass"),
    ("<think>QH or 7S? 7S.</think>QH", "QH"), ('"go"', "go"),
    # no answer: two moves, an illegal move, a number in a sentence, a bare word in free text, a mismatch
    ("QH or 7S", None), ("KD", None), ("I pick number 2", None), ("I think I should pass here", None),
    ("2. QH", None), ("", None), ("5", None), ("0", None), ("`QH` is better than `7S`", None),
    ("Answer: maybe", None),
])
def test_replies_are_read_strictly(reply, expected):
    got = parse_reply(reply, MOVES)
    assert (None if got is None else MOVES[got]) == expected


# ---------------------------------------------------------------------- parameters
@needs_httpx
@pytest.mark.parametrize("spec,match", [
    ("llm", "llm needs base_url"),
    ("llm:model=m", "llm needs base_url"),
    ("llm:base_url=ftp://example.org/v1,model=m", "not an http"),
    ("llm:base_url=127.0.0.1:8000,model=m", "not an http"),
    ("llm:base_url=http://user:pw@example.org/v1,model=m", "credentials"),
    ("llm:base_url=http://example.org/v1/chat/completions,model=m", "endpoint itself"),
    ("llm:base_url=http://example.org:99999/v1,model=m", "not a URL"),
    ("llm:base_url=http://example.org/v1", "model=None"),
    ("llm:base_url=http://example.org/v1,model=m,retries=-1", "retries=-1"),
    ("llm:base_url=http://example.org/v1,model=m,timeout=0", "timeout=0"),
    ("llm:base_url=http://example.org/v1,model=m,temperature=3", "temperature=3"),
    ("llm:base_url=http://example.org/v1,model=m,fallback=guess", "fallback='guess'"),
    ("llm:base_url=http://example.org/v1,model=m,api_key_env=sk-abc", "api_key_env"),
    ("llm:base_url=http://example.org/v1,model=m,reasks=1.5", "reasks=1.5"),
])
def test_bad_parameters_are_refused_with_one_line(spec, match, capsys):
    with pytest.raises(AgentError, match=re.escape(match)):
        agent_from_spec(spec)
    from agents.evaluation import cli

    assert cli.main(["--agents", spec, "random", "--deals", "1", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mauscheln eval: error:") and match in err[0]


@needs_httpx
def test_a_url_with_a_port_survives_the_spec_text():
    name, params = parse_agent_spec("llm:base_url=http://127.0.0.1:8000/v1,model=qwen2.5:7b,temperature=0.5")
    assert name == "llm" and params["base_url"] == "http://127.0.0.1:8000/v1" and params["model"] == "qwen2.5:7b"
    agent = agent_from_spec("llm:base_url=http://127.0.0.1:8000/v1,model=m")
    assert agent.endpoint == "http://127.0.0.1:8000/v1/chat/completions"
    assert agent_from_spec(agent.spec_text()).params == agent.params


@needs_httpx
def test_building_the_agent_asks_no_server():
    """Nothing is sent until a decision needs it: building, setting up and reading the spec ask nobody."""
    with ScriptedChatServer() as server:
        agent = agent_from_spec(llm(server))
        agent.setup(Game(make_config("mauscheln", 4)), 0)
        agent.spec_text()
        assert server.requests == []


# ---------------------------------------------------------------------- whole sessions through the commands
@needs_httpx
@pytest.mark.filterwarnings("ignore:Tight layout not applied:UserWarning")  # the chart of a long agent spec
@pytest.mark.parametrize("ruleset", sorted(RULESETS))
def test_the_agent_plays_every_ruleset_through_eval_and_bench(ruleset, tmp_path, capsys, monkeypatch):
    from agents.bench import cli as bench_cli
    from agents.evaluation import cli as eval_cli

    monkeypatch.setenv("MAUSCHELN_TEST_KEY", "sk-test-secret-0001")
    with ScriptedChatServer() as server:
        spec = llm(server, api_key_env="MAUSCHELN_TEST_KEY")
        out = tmp_path / "eval"
        assert eval_cli.main(["--agents", spec, "random", "--ruleset", ruleset, "--deals", "2", "--no-progress",
                              "--out", str(out)]) == 0
        printed = capsys.readouterr().out
        data = json.loads((out / "results.json").read_text())
        stats = data["pairs"][0]["agent_counts"]["candidate"]
        assert stats["decisions"] > 10 and stats["requests"] == stats["decisions"]
        assert stats["fallbacks"] == stats["unparsed"] == 0
        assert f"counts of {spec}: decisions {stats['decisions']}" in printed
        asked = len(server.requests)
        assert asked == stats["requests"]
        record = tmp_path / "bench.json"
        db = tmp_path / "lb.sqlite"
        assert bench_cli.main(["run", spec, "--ruleset", ruleset, "--deals", "1", "--field", "random", "expert",
                               "--out", str(record), "--submit", "--db", str(db), "--no-progress"]) == 0
        assert len(server.requests) > asked
        assert bench_cli.main(["leaderboard", "--ruleset", ruleset, "--db", str(db), "--brief"]) == 0
        printed += capsys.readouterr().out
    text = record.read_text()
    pairs = json.loads(text)["pairs"]
    assert [p["baseline"] for p in pairs] == ["random", "expert"]
    assert all(p["agent_counts"]["candidate"]["decisions"] > 0 for p in pairs)
    assert spec.split(":", 1)[1].split(",")[0] in printed  # the llm's row on the leaderboard
    headers = {r["headers"].get("Authorization") for r in server.requests}
    assert headers == {"Bearer sk-test-secret-0001"}
    for written in [text, (out / "results.json").read_text(), (out / "results.csv").read_text(), printed]:
        assert "sk-test-secret" not in written


@needs_httpx
def test_unparseable_replies_are_reasked_then_fall_back_and_are_counted(tmp_path, capsys):
    """A server that answers nonsense half the time: the agent asks again once, then plays a random legal move;
    the counts reach results.json; the same run again gives the same results."""
    from agents.evaluation import cli

    results = []
    with ScriptedChatServer(nonsense=0.5) as server:
        for k in range(2):
            out = tmp_path / f"run{k}"
            assert cli.main(["--agents", llm(server), "random", "--ruleset", "mouche", "--deals", "2",
                             "--no-progress", "--out", str(out)]) == 0
            results.append(json.loads((out / "results.json").read_text())["pairs"][0])
    stats = results[0]["agent_counts"]["candidate"]
    assert stats["unparsed"] > 0 and stats["fallbacks"] > 0
    assert stats["unparsed"] == stats["reasks"] + stats["fallbacks"]
    assert stats["requests"] == stats["decisions"] + stats["reasks"]
    assert "counts of llm" in capsys.readouterr().out
    for key in ("per_deal", "agent_counts"):
        assert results[0][key] == results[1][key]


@needs_httpx
def test_fallback_first_plays_the_first_legal_move():
    game = Game(make_config("mauscheln", 4))
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=1)
    with ScriptedChatServer(nonsense=1.0) as server:
        agent = make_agent("llm", seed=0, base_url=server.base_url, model="m", fallback="first", reasks=0)
        seat = env.engine_state.to_act
        agent.setup(game, seat)
        out = env.observe(env.agent_selection)
        assert agent.act(out["observation"], out["action_mask"], env.infos[env.agent_selection]) == \
            int(np.flatnonzero(out["action_mask"])[0])
        assert agent.counts()["fallbacks"] == 1 and agent.counts()["reasks"] == 0


def _decision(agent: LLMAgent):
    env = mauscheln_env.raw_env(num_players=4)
    env.reset(seed=2)
    agent.setup(env.game, env.engine_state.to_act)
    out = env.observe(env.agent_selection)
    return agent.act(out["observation"], out["action_mask"], env.infos[env.agent_selection])


@needs_httpx
def test_failed_requests_are_retried_then_answered():
    with ScriptedChatServer(fail_first=2, fail_status=503) as server:
        agent = make_agent("llm", seed=0, base_url=server.base_url, model="m", retries=2, backoff=0)
        _decision(agent)
        assert agent.counts()["retries"] == 2 and agent.counts()["requests"] == 1 and len(server.requests) == 3


@needs_httpx
def test_a_silent_server_times_out_with_one_line(capsys):
    from agents.evaluation import cli

    with ScriptedChatServer(delay=2.0) as server:
        assert cli.main(["--agents", llm(server, timeout=0.2, retries=1), "random", "--deals", "1",
                         "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no answer within 0.2 s (2 tries)" in err[0] and server.base_url in err[0]


@needs_httpx
def test_a_refused_request_stops_at_once_and_says_what_to_check(monkeypatch):
    monkeypatch.delenv("MAUSCHELN_NO_SUCH_KEY", raising=False)
    with ScriptedChatServer(fail_first=10, fail_status=401) as server:
        agent = make_agent("llm", seed=0, base_url=server.base_url, model="m", api_key_env="MAUSCHELN_NO_SUCH_KEY")
        with pytest.raises(LLMError, match="HTTP 401 Unauthorized: scripted failure; the variable "
                                           "MAUSCHELN_NO_SUCH_KEY"):
            _decision(agent)
        assert len(server.requests) == 1 and "Authorization" not in server.requests[0]["headers"]


@needs_httpx
def test_an_unreachable_endpoint_is_one_line_not_a_traceback(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    spec = f"llm:base_url=http://127.0.0.1:{port}/v1,model=m,retries=1,backoff=0"
    proc = subprocess.run([sys.executable, "-m", "mauscheln", "eval", "--agents", spec, "random", "--deals", "1",
                           "--no-progress"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(err) == 1, proc.stderr
    assert "cannot connect" in err[0] and "(2 tries)" in err[0] and "Traceback" not in proc.stderr


@needs_httpx
def test_workers_play_the_same_games(tmp_path):
    """With --workers 2 each worker asks the server itself; the games and counts are those of one process."""
    with ScriptedChatServer(nonsense=0.3) as server:
        settings = Settings(ruleset="muschka", deals=4)
        one = evaluate_pair(llm(server), "random", settings, block=1)
        two = evaluate_pair(llm(server), "random", settings, workers=2, block=1)
    np.testing.assert_array_equal(one.per_deal, two.per_deal)
    assert one.agent_counts == two.agent_counts and one.agent_counts["candidate"]["fallbacks"] > 0


@needs_httpx
def test_a_record_with_an_llm_is_never_played_again_by_a_replay(tmp_path):
    """A report or replay of a deal the record did not keep would ask the record's endpoint (with the local key):
    it is refused instead."""
    from agents.bench import cli as bench_cli
    from agents.bench.replay import ReplayError, replay_deal

    with ScriptedChatServer() as server:
        path = tmp_path / "r.json"
        assert bench_cli.main(["run", llm(server), "--deals", "1", "--field", "random", "--replays", "0",
                               "--out", str(path), "--no-progress"]) == 0
        asked = len(server.requests)
        record = json.loads(path.read_text())
        with pytest.raises(ReplayError, match="asks a network endpoint"):
            replay_deal(record, 0, 0)
        assert len(server.requests) == asked
