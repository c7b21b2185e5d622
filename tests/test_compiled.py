"""The compiled build of the hot modules (mauscheln_env/compiled.py): found only while its source is unchanged,
and the same games as pure Python."""

from __future__ import annotations

import ast
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mauscheln_env import compiled

ROOT = Path(__file__).resolve().parents[1]

# Every ruleset, its scripted agents and ``pimc`` (every phase searched) at one table: each decision's action,
# in a process that loads the compiled build and in one that does not (MAUSCHELN_PURE=1).
PLAY = """
import hashlib, json, sys
from agents import MatchRunner, make_agent, make_deal
from mauscheln_env import compiled, make_config
from mauscheln_env.engine import Game
out = {"traces": {}}
for ruleset, n in (("mauscheln", 4), ("mauscheln_classic", 3), ("mousel", 4), ("mouche", 5), ("muschka", 4)):
    game = Game(make_config(ruleset, n))
    runner = MatchRunner(game)
    trace = []
    for deal in range(3):
        dealer, spec = make_deal(game, 11, deal)
        search = make_agent("pimc", samples=4, min_samples=2)
        if ruleset == "mauscheln" and deal == 2:  # the search agent: pimc on the shipped policy
            search = make_agent("pimc", samples=4, min_samples=2, model="mauscheln4", phases="play")
        agents = [search, *(make_agent(a) for a in ("expert", "beginner", "random", "expert")[: n - 1])]
        rec = runner.play(agents, dealer=dealer, deal=spec, session_seed=100 + deal,
                          seed_for=lambda d, seat, deal=deal: 1000 * deal + 10 * d + seat,
                          on_decision=lambda st, seat, obs, mask, info, a: trace.append((seat, int(a))))
        trace.append(tuple(rec.deltas))
        out.setdefault("searched", {}).setdefault(ruleset, 0)
        out["searched"][ruleset] += search.stats["searched"]
    out["traces"][ruleset] = hashlib.sha256(json.dumps(trace).encode()).hexdigest()
    out.setdefault("decisions", {})[ruleset] = len(trace)
out["loaded"] = compiled.loaded()
print(json.dumps(out))
"""


def _play(pure: bool) -> dict:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    if pure:
        env[compiled.PURE_ENV] = "1"
    proc = subprocess.run([sys.executable, "-c", PLAY], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(set(compiled.status().values()) != {"compiled"},
                    reason="no current compiled build (mauscheln compile build; scripts/test.sh makes one)")
def test_compiled_build_plays_the_same_games_as_pure_python():
    fast, pure = _play(pure=False), _play(pure=True)
    assert sorted(fast["loaded"]) == sorted(compiled.MODULES)  # every module really ran compiled
    assert pure["loaded"] == []
    assert all(count > 20 for count in pure["decisions"].values())
    assert all(count > 0 for count in pure["searched"].values())  # pimc searched at every table
    assert _play(pure=True)["traces"] == pure["traces"]  # the games are a function of the seeds
    assert fast["decisions"] == pure["decisions"]
    assert fast["traces"] == pure["traces"]


FAKE = ("fakepkg.mod",)


def _c_valued(node: ast.AST) -> bool:
    """Whether Cython computes ``node`` as a C integer: an integer literal, ``len()``, or arithmetic of those."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in ("len", "ord") and not node.keywords
    if isinstance(node, ast.UnaryOp):
        return _c_valued(node.operand)
    if isinstance(node, ast.BinOp):
        return _c_valued(node.left) and _c_valued(node.right)
    return False


def test_no_compiled_module_shifts_or_powers_c_integers():
    """Cython computes an expression of C values in C: ``1 << len(codes)`` wraps at 32 bits there (it gave a
    full mask of 0 for a 32-card deck) where Python's int grows. No module of the build may have one."""
    found = []
    for module in compiled.MODULES:
        path = compiled.source_of(module)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.LShift, ast.Pow)) \
                    and _c_valued(node.left) and _c_valued(node.right) \
                    and not (isinstance(node.left, ast.Constant) and isinstance(node.right, ast.Constant)):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert found == []
    assert _c_valued(ast.parse("1 << len(codes)").body[0].value.right)  # the check sees the case it is for


def _fake_build(root: Path, source: str = "X = 1\n") -> Path:
    """A project folder with one module ``fakepkg.mod`` and a manifest entry for a build of it."""
    (root / "fakepkg").mkdir(parents=True)
    (root / "fakepkg" / "mod.py").write_text(source)
    out = compiled.build_dir(root)
    out.mkdir(parents=True)
    binary = out / "fakepkg" / "mod.bin"
    binary.parent.mkdir()
    binary.write_bytes(b"not loaded by these tests")
    entry = {"sha256": hashlib.sha256(source.encode()).hexdigest(), "file": "fakepkg/mod.bin"}
    (out / "manifest.json").write_text(json.dumps({"fakepkg.mod": entry}))
    return binary


def test_the_finder_takes_a_build_only_while_its_source_is_unchanged(tmp_path):
    binary = _fake_build(tmp_path)
    finder = compiled.CompiledFinder(tmp_path, FAKE)
    spec = finder.find_spec("fakepkg.mod")
    assert spec is not None and spec.origin == str(binary)
    assert finder.find_spec("fakepkg.other") is None  # not in the build: the ordinary import
    assert compiled.CompiledFinder(tmp_path).find_spec("fakepkg.mod") is None  # not one of MODULES
    (tmp_path / "fakepkg" / "mod.py").write_text("X = 2\n")  # an edit since the build
    assert finder.find_spec("fakepkg.mod") is None
    (tmp_path / "fakepkg" / "mod.py").write_text("X = 1\n")
    binary.unlink()
    assert finder.find_spec("fakepkg.mod") is None


@pytest.mark.parametrize("manifest", ["", "[1, 2]", "{not json", json.dumps({"fakepkg.mod": {"sha256": 3}})])
def test_an_unreadable_manifest_loads_nothing_compiled(tmp_path, manifest):
    _fake_build(tmp_path)
    (compiled.build_dir(tmp_path) / "manifest.json").write_text(manifest)
    assert compiled.CompiledFinder(tmp_path, FAKE).find_spec("fakepkg.mod") is None
    assert compiled.install(tmp_path, FAKE) is None


def test_pure_env_installs_nothing(tmp_path, monkeypatch):
    _fake_build(tmp_path)
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    assert compiled.install(tmp_path, FAKE) is None
    monkeypatch.delenv(compiled.PURE_ENV)
    finder = compiled.install(tmp_path, FAKE)
    try:
        assert finder is not None and sys.meta_path[0] is finder
        assert compiled.install(tmp_path, FAKE) is finder  # once
    finally:
        sys.meta_path.remove(finder)


def test_building_an_unknown_module_is_refused(tmp_path):
    pytest.importorskip("Cython")
    with pytest.raises(compiled.CompiledError, match="cannot compile os.path; allowed: agents.search.pimc"):
        compiled.build(["os.path"], root=tmp_path)
    assert not (tmp_path / ".compiled").exists()


def test_the_command_lists_every_module_and_refuses_nonsense(capsys, monkeypatch):
    monkeypatch.setenv(compiled.PURE_ENV, "1")
    assert compiled.main(["status"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{compiled.PURE_ENV} is set")
    assert [line.split(":")[0] for line in lines[1:]] == list(compiled.MODULES)
    with pytest.raises(SystemExit) as stop:
        compiled.main(["build", "--jobs", "0"])
    assert stop.value.code == 2
    assert "--jobs 0 is not allowed; allowed: a whole number >= 1" in capsys.readouterr().err
