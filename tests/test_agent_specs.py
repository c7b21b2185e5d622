"""Agents by import path and entry point: the spec forms, their errors, workers, records, and every command.

The example agent of the guide (examples/agents/my_agent.py, docs/agents/writing.md) is copied outside the
repository and run by path; a small package ``mybots`` written by the test is named by module
(``mybots.bots:MyBot`` on the path) and by the entry point its dist-info declares (``mybot``).
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from agents import targets
from agents.base import (
    AgentError,
    agent_class,
    agent_from_spec,
    available_agents,
    canonical_spec,
    display_spec,
    make_agent,
    parse_agent_spec,
    provenance,
    spec_files_stamp,
)
from agents.bench import cli as bench_cli
from agents.bench import leaderboard
from agents.evaluation import duplicate
from agents.evaluation.cli import main as eval_main
from agents.evaluation.duplicate import Settings, evaluate_pair
from agents.evaluation.tournament import ResultsFileError, merge_results
from mauscheln_env import Game, make_config
from mauscheln_env.config import RULESETS
from tests.decisions import play_decisions

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "agents" / "my_agent.py"

MYBOTS = '''
"""A third-party package of agents (written by tests/test_agent_specs.py)."""

from agents.base import Agent, legal_ids


class MyBot(Agent):
    """Plays the lowest legal action id, or a random one when depth > 1."""

    name = "mybot"

    def __init__(self, seed=None, depth: int = 1):
        super().__init__(seed)
        if depth < 1:
            raise ValueError(f"depth={depth} is not allowed; allowed: a whole number >= 1")
        self.depth = depth

    def act(self, observation, action_mask, info):
        legal = legal_ids(action_mask)
        return int(legal[self.rng.integers(legal.size)]) if self.depth > 1 else int(legal[0])
'''


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """The example agent, copied to a folder outside the repository."""
    path = tmp_path / "elsewhere" / "my_agent.py"
    path.parent.mkdir()
    shutil.copy(EXAMPLE, path)
    return path


def write_package(site: Path) -> Path:
    """``mybots`` with its dist-info (entry points ``mybot`` and ``expert``, which the built-in name wins over)."""
    (site / "mybots").mkdir(parents=True)
    (site / "mybots" / "__init__.py").write_text("")
    (site / "mybots" / "bots.py").write_text(MYBOTS)
    dist = site / "mybots-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: mybots\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[mauscheln.agents]\nmybot = mybots.bots:MyBot\n"
                                           "expert = mybots.bots:MyBot\n")
    return site


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``mybots`` on ``sys.path``, as if installed."""
    site = write_package(tmp_path / "site")
    monkeypatch.syspath_prepend(str(site))
    yield site
    for name in [m for m in sys.modules if m == "mybots" or m.startswith("mybots.")]:
        del sys.modules[name]


# ---------------------------------------------------------------------- the forms
def test_the_forms_are_told_apart(outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(outside.parent)
    here = str(outside)
    assert parse_agent_spec("pimc:samples=8") == ("pimc", {"samples": 8})
    assert parse_agent_spec("learned:checkpoint=C:\\runs\\x") == ("learned", {"checkpoint": "C:\\runs\\x"})
    assert parse_agent_spec("my_agent.py:MyAgent") == (f"{here}:MyAgent", {})
    assert parse_agent_spec("./my_agent.py:MyAgent:temperature=0.5") == (f"{here}:MyAgent", {"temperature": 0.5})
    assert parse_agent_spec("../elsewhere/my_agent.py:MyAgent") == (f"{here}:MyAgent", {})
    assert parse_agent_spec("mypkg.bots:MyBot:depth=3,temperature=0.5") == (
        "mypkg.bots:MyBot", {"depth": 3, "temperature": 0.5})
    assert parse_agent_spec("mybots:MyBot") == ("mybots:MyBot", {})  # a top-level module: no '=' after it
    assert canonical_spec("./my_agent.py:MyAgent:temperature=0.50") == f"{here}:MyAgent:temperature=0.50"
    assert display_spec(f"{here}:MyAgent:temperature=0.5") == "my_agent.py:MyAgent:temperature=0.5"
    assert display_spec("pimc:samples=8") == "pimc:samples=8"


@pytest.mark.parametrize("text, says", [
    ("C:\\Users\\me\\my_agent.py:MyAgent", "a path that holds ':'"),
    ("C:/Users/me/my_agent.py:MyAgent", "a path that holds ':'"),
    ("dir:x/my_agent.py:MyAgent", "a path that holds ':'"),
    ("my_agent.py", "names a file but no class"),
    ("mypkg.bots", "names a module but no class"),
    ("x/my_agent:MyAgent", "is not a .py file"),
    ("my_agent.py:My Agent", "is not a Python name"),
    ("my-pkg.bots:MyBot", "is not a module path"),
    ("pimc:samples", "is not key=value"),
    ("", "allowed: NAME"),
])
def test_specs_of_no_form_are_refused_saying_what_is_allowed(text: str, says: str) -> None:
    with pytest.raises(AgentError, match=says) as info:
        agent_from_spec(text)
    assert "\n" not in str(info.value) and "allowed" in str(info.value)


def test_a_file_agent_is_built_recorded_and_rebuilt(outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(outside.parent)
    agent = agent_from_spec("my_agent.py:MyAgent:temperature=0.5", seed=3)
    assert type(agent).__name__ == "MyAgent" and agent.temperature == 0.5 and agent.seed == 3
    assert agent.built_as == f"{outside}:MyAgent" and agent.label() == "my_agent(temperature=0.5)"
    assert agent.spec_text() == f"{outside}:MyAgent:temperature=0.5"
    monkeypatch.chdir(ROOT)  # the recorded spec rebuilds the same agent from anywhere
    again = agent_from_spec(agent.spec_text(), seed=3)
    assert type(again) is type(agent) and again.params == agent.params == {"temperature": 0.5}
    assert agent_from_spec(agent.spec()).spec() == agent.spec()
    about = provenance(agent)
    assert about == {"spec": f"{outside}:MyAgent:temperature=0.5", "class": f"{outside}:MyAgent",
                     "source": targets.file_sha256(outside)}
    # A factory is named like a class; the file is loaded once, and again when it changes.
    cautious = agent_from_spec(f"{outside}:make_cautious")
    assert type(cautious) is type(agent) and cautious.temperature == 0.25
    stamp = spec_files_stamp(f"{outside}:MyAgent")
    outside.write_text(outside.read_text() + "\nEXTRA = 1\n")
    os.utime(outside, ns=(1, 1))
    assert spec_files_stamp(f"{outside}:MyAgent") != stamp
    assert type(agent_from_spec(f"{outside}:MyAgent")) is not type(agent)


def test_a_module_and_an_entry_point_name_agents(installed: Path) -> None:
    bot = agent_from_spec("mybots.bots:MyBot:depth=2", seed=1)
    assert type(bot).__name__ == "MyBot" and bot.depth == 2 and bot.spec_text() == "mybots.bots:MyBot:depth=2"
    assert provenance(bot)["source"] == targets.file_sha256(installed / "mybots" / "bots.py")
    assert provenance(bot)["class"] == "mybots.bots:MyBot"
    assert "mybot" in available_agents() and "mybots.bots:MyBot" in available_agents()["mybot"]
    named = make_agent("mybot", seed=0, depth=3)
    assert type(named) is type(bot) and named.spec_text() == "mybot:depth=3"
    assert agent_from_spec("mybot:depth=3").params == {"depth": 3}
    assert provenance(named)["source"] == provenance(bot)["source"]
    # A built-in name is never taken over by an installed package.
    assert type(make_agent("expert")).__name__ == "ExpertAgent" and provenance(make_agent("expert"))["source"] is None


# ---------------------------------------------------------------------- what is refused
BAD = {
    "missing file": (None, "MyAgent", "does not exist"),
    "syntax error": ("def broken(:\n", "MyAgent", "cannot be loaded: SyntaxError"),
    "import fails": ("import no_such_module_here\n", "MyAgent", "ModuleNotFoundError"),
    "missing class": ("from agents.base import Agent\n\nclass Other(Agent):\n    def act(self, o, m, i):\n"
                      "        return 0\n", "MyAgent", "has no 'MyAgent'; allowed: one of its agents: Other"),
    "not an Agent": ("class MyAgent:\n    pass\n", "MyAgent", "not derived from agents.base.Agent"),
    "not callable": ("MyAgent = 3\n", "MyAgent", "is an object of type int, not a class or function"),
    "factory of a non-Agent": ("def MyAgent(seed=None):\n    return 'x'\n", "MyAgent", "returned a str, not an Agent"),
    "factory without seed": ("def MyAgent(depth=1):\n    return None\n", "MyAgent", "takes no seed parameter"),
    "constructor raises": ("from agents.base import Agent\n\nclass MyAgent(Agent):\n    def __init__(self, seed=None):"
                           "\n        raise RuntimeError('no GPU here')\n    def act(self, o, m, i):\n        return 0\n",
                           "MyAgent", "building it raised RuntimeError: no GPU here"),
    "abstract": ("from agents.base import Agent\n\nclass MyAgent(Agent):\n    pass\n", "MyAgent",
                 "building it raised TypeError: Can't instantiate abstract class MyAgent"),
    "no super init": ("from agents.base import Agent\n\nclass MyAgent(Agent):\n    def __init__(self, seed=None):\n"
                      "        self.x = 1\n    def act(self, o, m, i):\n        return 0\n", "MyAgent",
                      "does not call Agent.__init__"),
    "unknown parameter": (EXAMPLE.read_text(), "MyAgent:depth=3", "has no parameter\\(s\\) depth; allowed: temperature"),
    "bad value": (EXAMPLE.read_text(), "MyAgent:temperature=-1", "temperature=-1.0 is not allowed"),
    "wrong type": (EXAMPLE.read_text(), "MyAgent:temperature=hot", "temperature='hot' is not allowed"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_agent_file_gets_one_clear_error(case: str, tmp_path: Path) -> None:
    text, name, says = BAD[case]
    path = tmp_path / "bad_agent.py"
    if text is not None:
        path.write_text(text)
    with pytest.raises(AgentError, match=says) as info:
        agent_from_spec(f"{path}:{name}")
    assert "\n" not in str(info.value) and str(path) in str(info.value)


@pytest.mark.parametrize("case", ["syntax error", "missing class", "constructor raises", "unknown parameter"])
def test_the_commands_refuse_a_bad_agent_with_one_line_and_write_nothing(case: str, tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture) -> None:
    text, name, says = BAD[case]
    path = tmp_path / "bad_agent.py"
    path.write_text(text)
    spec = f"{path}:{name}"
    out, db, record = tmp_path / "out", tmp_path / "lb.sqlite", tmp_path / "r.json"
    assert eval_main(["--agents", spec, "random", "--deals", "2", "--workers", "2", "--out", str(out)]) == 2
    assert bench_cli.main(["run", spec, "--deals", "2", "--field", "random", "--workers", "2", "--submit",
                           "--db", str(db), "--out", str(record)]) == 2
    from agents.play.demo import main as demo_main
    from agents.play.terminal import main as play_main

    assert demo_main(["--agents", spec, "--deals", "1"]) == 2
    assert play_main(["--agents", spec, "--deals", "1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(re.search(says, line) for line in err)
    assert not out.exists() and not db.exists() and not record.exists()


def test_an_unknown_module_or_name_says_what_is_allowed() -> None:
    with pytest.raises(AgentError, match="no module 'nobody' can be imported here; allowed: a known agent name"):
        agent_from_spec("nobody:Bot")
    with pytest.raises(AgentError, match="no module 'no_such_pkg.bots'"):
        agent_from_spec("no_such_pkg.bots:Bot")
    with pytest.raises(AgentError, match="unknown agent 'nobody'; allowed: .*expert.*or an agent by import path"):
        agent_from_spec("nobody")
    with pytest.raises(AgentError, match="spec text, not a name"):
        make_agent("expert:risk=1")


# ---------------------------------------------------------------------- workers
def _init_elsewhere() -> None:
    """A worker's start: another working directory and no test paths (the spec must not depend on either)."""
    os.chdir("/")
    duplicate_init()


def duplicate_init() -> None:
    from agents.evaluation.duplicate import _worker_init

    _worker_init()


def test_spawned_workers_in_another_folder_load_the_same_file(outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(outside.parent)
    settings = Settings(ruleset="mousel", players=4, deals=4, backend="reference")
    alone = evaluate_pair("my_agent.py:MyAgent:temperature=0.5", "random", settings, workers=1)
    monkeypatch.setattr(duplicate, "_pool_context", lambda: multiprocessing.get_context("spawn"))
    monkeypatch.setattr(duplicate, "_worker_init", _init_elsewhere)
    pooled = evaluate_pair("my_agent.py:MyAgent:temperature=0.5", "random", settings, workers=2)
    assert pooled.candidate == "my_agent.py:MyAgent:temperature=0.5"
    assert np.array_equal(alone.per_deal, pooled.per_deal) and alone.roles == pooled.roles


# ---------------------------------------------------------------------- the tensor form
class _Given:
    """An ``rng`` stand-in whose ``random()`` returns given uniforms in turn."""

    def __init__(self, u: float) -> None:
        self.u = [u]

    def random(self) -> float:
        return self.u.pop(0)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_tensor_form_makes_the_python_agents_choices(ruleset: str) -> None:
    cls = agent_class(f"{EXAMPLE}:MyAgent")
    game = Game(make_config(ruleset))
    decisions = play_decisions(game, lambda **kw: cls(**kw), 300, seed=2, shared_uniform=False)
    obs, mask = decisions.tensors()
    greedy = cls.tensor_form(game, "cpu", 0)
    assert torch.equal(greedy.act(obs, mask), torch.as_tensor(decisions.expected))
    # Sampling: the same uniforms give the same actions; without them, the seeded generator decides.
    u = torch.from_numpy(np.random.default_rng(1).random(len(decisions)))
    warm = cls.tensor_form(game, "cpu", 0, temperature=0.7)
    python = cls(temperature=0.7)
    python.setup(game, 0)
    expected = []
    for i in range(len(decisions)):
        python.rng = _Given(float(u[i]))
        expected.append(python.act(decisions.obs[i], decisions.masks[i], {}))
    got = warm.act(obs, mask, u)
    assert torch.equal(got, torch.as_tensor(expected))
    assert bool(mask[torch.arange(len(got)), got].all())
    again = cls.tensor_form(game, "cpu", 0, temperature=0.7)
    assert torch.equal(warm.act(obs, mask), again.act(obs, mask))


def test_a_user_agent_with_a_tensor_form_plays_the_batched_backend(outside: Path) -> None:
    spec = f"{outside}:MyAgent"
    settings = Settings(ruleset="mauscheln_classic", players=4, deals=6, backend="batched")
    batched = evaluate_pair(spec, "beginner", settings)
    reference = evaluate_pair(spec, "beginner", Settings(ruleset="mauscheln_classic", players=4, deals=6))
    assert batched.backend == "batched" and reference.backend == "reference" and batched.games == reference.games
    with pytest.raises(ValueError, match="has no tensor form"):
        evaluate_pair("pimc:samples=2", spec, settings)


# ---------------------------------------------------------------------- every command
def _leaderboard_rows(db: Path, ruleset: str, capsys: pytest.CaptureFixture) -> str:
    capsys.readouterr()
    assert bench_cli.main(["leaderboard", "--db", str(db), "--ruleset", ruleset, "--brief"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_file_a_module_and_an_entry_point_enter_eval_and_the_benchmark(
        ruleset: str, outside: Path, installed: Path, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The example agent copied outside the repository, ``mybots.bots:MyBot`` on the path and the entry point
    ``mybot``, each through ``mauscheln eval --workers 2`` and ``mauscheln bench run --workers 2 --submit``, then
    on the leaderboard of that database."""
    monkeypatch.chdir(outside.parent)
    mine, module = "my_agent.py:MyAgent:temperature=0.5", "mybots.bots:MyBot:depth=2"
    full = f"{outside}:MyAgent:temperature=0.5"
    out = tmp_path / "eval"
    assert eval_main(["--agents", mine, module, "mybot", "--ruleset", ruleset, "--deals", "4", "--workers", "2",
                      "--backend", "reference", "--out", str(out), "--no-progress"]) == 0
    provenance = json.loads((out / "results.json").read_text())["provenance"]
    code = targets.file_sha256(installed / "mybots" / "bots.py")
    assert provenance == {
        mine: {"spec": full, "class": f"{outside}:MyAgent", "source": targets.file_sha256(outside)},
        module: {"spec": module, "class": "mybots.bots:MyBot", "source": code},
        "mybot": {"spec": "mybot", "class": "mybots.bots:MyBot", "source": code}}
    db, record = tmp_path / "lb.sqlite", tmp_path / "mine.json"
    for i, (spec, field) in enumerate(((mine, ["random", "expert"]), (module, ["random"]), ("mybot", ["random"]))):
        assert bench_cli.main(["run", spec, "--ruleset", ruleset, "--deals", "4", "--field", *field,
                               "--workers", "2", "--replays", "1", "--submit", "--db", str(db),
                               "--out", str(record if spec == mine else tmp_path / f"other{i}.json"),
                               "--no-progress"]) == 0
    rec = json.loads(record.read_text())
    key = f"my_agent.py:MyAgent:temperature=0.5#{targets.file_sha256(outside)[7:19]}"
    assert rec["agent"] == {"spec": full, "checkpoint": None, "source": targets.file_sha256(outside),
                            "class": f"{outside}:MyAgent", "key": key}
    board = _leaderboard_rows(db, ruleset, capsys)
    for row in (key, f"mybots.bots:MyBot:depth=2#{code[7:19]}", f"mybot#{code[7:19]}", "random", "expert"):
        assert f"| {row} |" in board, row


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", RULESETS)
def test_an_agent_file_against_the_full_reference_field(ruleset: str, outside: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture) -> None:
    db = tmp_path / "lb.sqlite"
    assert bench_cli.main(["run", f"{outside}:MyAgent", "--ruleset", ruleset, "--deals", "4", "--workers", "2",
                           "--submit", "--db", str(db), "--out", str(tmp_path / "r.json"), "--no-progress"]) == 0
    assert f"| my_agent.py:MyAgent#{targets.file_sha256(outside)[7:19]} |" in _leaderboard_rows(db, ruleset, capsys)


def test_the_commands_in_a_fresh_process_find_a_module_on_pythonpath_and_an_entry_point(tmp_path: Path) -> None:
    """As a user runs them: ``mauscheln`` started outside the repository, the package on ``PYTHONPATH``."""
    site = write_package(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    db = tmp_path / "lb.sqlite"

    def mauscheln(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "mauscheln", *args], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout

    mauscheln("eval", "--agents", "mybots.bots:MyBot:depth=2", "mybot", "--ruleset", "mousel", "--deals", "4",
              "--workers", "2", "--backend", "reference", "--out", "eval", "--no-progress")
    code = targets.file_sha256(site / "mybots" / "bots.py")
    provenance = json.loads((tmp_path / "eval" / "results.json").read_text())["provenance"]
    assert provenance["mybot"] == {"spec": "mybot", "class": "mybots.bots:MyBot", "source": code}
    board = mauscheln("bench", "run", "mybot", "--ruleset", "mousel", "--deals", "2", "--field",
                      "mybots.bots:MyBot:depth=2", "--workers", "2", "--submit", "--db", str(db), "--no-progress")
    assert f"mybot#{code[7:19]} on mousel_4p: stored" in board
    assert (tmp_path / "bench-results" / "v1" / "mousel_4p" / "mybot.json").is_file()


def test_demo_and_play_seat_an_agent_file(outside: Path, capsys: pytest.CaptureFixture,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from agents.play.demo import main as demo_main
    from agents.play.terminal import main as play_main

    assert demo_main(["--agents", f"{outside}:MyAgent", "random", "expert", "random", "--deals", "1"]) == 0
    assert "seat 0 my_agent" in capsys.readouterr().out
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert play_main(["--agents", f"{outside}:MyAgent:temperature=0.5", "--deals", "1", "--seed", "1"]) == 0
    assert "bye" in capsys.readouterr().out


def test_the_trainer_plays_an_agent_file_with_a_tensor_form_and_refuses_one_without(
        outside: Path, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    from train.ppo_selfplay import main as train_main

    smoke = ROOT / "configs" / "train" / "smoke.yaml"
    run = ["--config", str(smoke), "--backend", "batched", "--num-envs", "24", "--num-steps", "16",
           "--total-decisions", "768", "--self-play-prob", "0", "--pool-size", "0"]
    assert train_main([*run, "--baseline-opponents", f"{outside}:MyAgent:temperature=0.5",
                       "--run-dir", str(tmp_path / "run")]) == 0
    assert (tmp_path / "run" / "policy.safetensors").is_file()
    site = write_package(tmp_path / "site")
    capsys.readouterr()
    assert train_main([*run, "--baseline-opponents", f"{site / 'mybots' / 'bots.py'}:MyBot",
                       "--run-dir", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err
    assert "have no tensor form" in err and err.count("\n") == 1 and not (tmp_path / "bad").exists()


# ---------------------------------------------------------------------- records
def test_records_without_the_new_fields_stay_readable_and_new_ones_must_have_them(outside: Path,
                                                                                  tmp_path: Path) -> None:
    from agents.bench.run import deal_set_for, run_bench

    record = run_bench(f"{outside}:MyAgent", deal_set_for("v1", "mousel", None), field=["random"], deals=2,
                       replays=0)
    assert record["format"] == "mauscheln-bench-result-v2"
    leaderboard.check_record(record)
    old = json.loads(json.dumps(record))
    old["format"] = "mauscheln-bench-result-v1"
    for d in (old["agent"], *[p["opponent"] for p in old["pairs"]]):
        d.pop("class"), d.pop("source")
    leaderboard.check_record(old)  # a v1 record names its agents by spec and checkpoint only
    lacking = json.loads(json.dumps(record))
    del lacking["agent"]["class"]
    with pytest.raises(leaderboard.ResultRecordError, match="class"):
        leaderboard.check_record(lacking)
    shipped = sorted((leaderboard.RECORDS / "v1" / "mousel_4p").glob("*.json.gz"))[0]
    db = tmp_path / "lb.sqlite"
    leaderboard.submit(leaderboard.read_record(shipped), db)
    leaderboard.submit(record, db)
    names = {e.agent for b in leaderboard.leaderboard(db, tables=["mousel_4p"]) for e in b.entries}
    assert f"my_agent.py:MyAgent#{targets.file_sha256(outside)[7:19]}" in names and "random" in names
    # A deal whose games were not kept is played again from the record's specs, while the file is there.
    from agents.bench.replay import ReplayError, replay_deal

    assert len(replay_deal(record, 0, 1)) == 8
    outside.unlink()
    with pytest.raises(ReplayError, match="cannot be played again: agent file .* does not exist"):
        replay_deal(record, 0, 1)


def test_results_of_changed_code_are_not_merged(outside: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(outside.parent)
    spec = "my_agent.py:MyAgent"
    common = ["--agents", spec, "random", "--deals", "2", "--backend", "reference", "--no-progress"]
    assert eval_main([*common, "--out", str(tmp_path / "a")]) == 0
    assert eval_main([*common, "--start", "2", "--out", str(tmp_path / "b")]) == 0
    merged = merge_results([tmp_path / "a" / "results.json", tmp_path / "b" / "results.json"])
    assert merged.provenance[spec]["source"] == targets.file_sha256(outside)
    outside.write_text(outside.read_text() + "\n# changed\n")
    assert eval_main([*common, "--start", "4", "--out", str(tmp_path / "c")]) == 0
    with pytest.raises(ResultsFileError, match="code or class changed"):
        merge_results([tmp_path / "a" / "results.json", tmp_path / "c" / "results.json"])


def test_the_guide_names_the_example_and_what_it_documents() -> None:
    guide = (ROOT / "docs" / "agents" / "writing.md").read_text()
    for text in ("examples/agents/my_agent.py", "tensor_form", "act(obs, mask, u=None)", "reference = False",
                 "supports(game)", "self.rng", "reset(seed)", "mauscheln.agents", "--workers 2 --submit",
                 "mauscheln bench leaderboard", "A path that holds a `:`"):
        assert text in guide, text
