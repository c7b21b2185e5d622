"""``onnx`` and ``torchscript`` agents and ``mauscheln export``: exported policies play as ``learned`` does.

The agreement tests play duplicate games (the match runner on the series deals of a fixed seed, the policy
against ``expert`` in both formats) with a :class:`Lockstep` agent at the policy's seats: at every decision
``learned``, the ONNX agent and the TorchScript agent are asked in the same position, each sampling with the
same seed (they share ``choose_action``, so they draw the same random numbers) and each greedy; the sampled
``learned`` action is played. Their actions must agree at every decision, and their logits within float32
rounding. The quick test takes one policy per ruleset; the slow one every shipped policy, 10,000 decisions each.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
import torch

pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from agents.base import Agent, AgentError, agent_from_spec, make_agent  # noqa: E402
from agents.evaluation.match import MatchRunner, game_order, lineup_of, series_deal  # noqa: E402
from agents.learned import (  # noqa: E402
    CheckpointError,
    LearnedAgent,
    NetSpec,
    PolicyNet,
    available_policies,
    layout_of,
    read_policy,
    rules_of,
    save_policy,
)
from agents.learned.export import export_policy, main  # noqa: E402
from agents.learned.portable import LAYOUT_FILE, LAYOUT_KEY  # noqa: E402
from mauscheln_env.config import make_config  # noqa: E402
from mauscheln_env.engine import Game  # noqa: E402
from mauscheln_env.observation import Observer  # noqa: E402

QUICK = ["mauscheln4", "mauscheln_classic4", "mousel4", "mouche4", "muschka4"]
KINDS = ("onnx", "torchscript")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """``exported(policy) -> {"onnx": path, "torchscript": path}``, written once per module."""
    folder = tmp_path_factory.mktemp("exported")
    files: dict[str, dict[str, Path]] = {}

    def get(policy: str) -> dict[str, Path]:
        if policy not in files:
            files[policy] = {kind: export_policy(policy, kind, folder / f"{policy}.{kind}") for kind in KINDS}
        return files[policy]

    return get


class Lockstep(Agent):
    """Plays the sampled ``learned`` action; asks ``learned``, ``onnx`` and ``torchscript`` (sampling and greedy)
    in the same position with the same seed and records what each chose."""

    name = "lockstep"

    def __init__(self, seed: int | None = None, policy: str = "", files: dict | None = None,
                 log: list | None = None) -> None:
        super().__init__(seed)
        self.agents = {}
        for greedy in (False, True):
            self.agents[("learned", greedy)] = LearnedAgent(checkpoint=policy, greedy=greedy)
            for kind in KINDS:
                self.agents[(kind, greedy)] = make_agent(kind, path=str(files[kind]), greedy=greedy)
        self.log = log

    def setup(self, game, seat):
        super().setup(game, seat)
        for agent in self.agents.values():
            agent.setup(game, seat)

    def reset(self, seed=None):
        super().reset(seed)
        for agent in self.agents.values():
            agent.reset(seed)

    def act(self, observation, action_mask, info):
        chosen = {key: agent.act(observation, action_mask, info) for key, agent in self.agents.items()}
        obs = np.asarray(observation, np.float32)
        want = self.agents[("learned", False)]._actor.logits(obs)
        mask = np.asarray(action_mask, bool)[None]
        diff = max(float(np.abs(self.agents[(kind, False)].policy.logits(obs[None], mask)[0] - want).max())
                   / (1.0 + float(np.abs(want).max())) for kind in KINDS)
        self.log.append((chosen, diff))
        return chosen[("learned", False)]


def play_in_lockstep(policy: str, files: dict[str, Path], decisions: int, seed: int = 3) -> list:
    """Duplicate games of ``policy`` (its seats in :class:`Lockstep`) against ``expert`` until ``decisions``."""
    _, layout, _ = read_policy(policy)
    game = rules_of(layout)
    n = game.n
    log: list = []
    mine = [Lockstep(policy=policy, files=files, log=log) for _ in range(n)]
    experts = [make_agent("expert") for _ in range(n)]
    runner = MatchRunner(game)
    deal = 0
    while len(log) < decisions:
        fixed = series_deal(game, seed, deal)
        for fmt, lone in game_order(n):
            lineup = lineup_of(fmt, lone, n)
            runner.play([mine[s] if lineup[s] else experts[s] for s in range(n)], dealer=fixed.dealer,
                        deal=fixed.spec, session_seed=fixed.session_seed, seed_for=fixed.seed_for)
        deal += 1
    return log


def check_agreement(policy: str, log: list) -> str:
    disagree = {(kind, greedy): sum(chosen[(kind, greedy)] != chosen[("learned", greedy)] for chosen, _ in log)
                for kind in KINDS for greedy in (False, True)}
    worst = max(diff for _, diff in log)
    line = (f"{policy}: {len(log)} decisions; disagreements with learned: "
            + ", ".join(f"{kind}{' greedy' if g else ' sampled'} {count}" for (kind, g), count in disagree.items())
            + f"; largest logit difference {worst:.2e} (relative)")
    assert not any(disagree.values()), line
    assert worst < 1e-5, line
    return line


@pytest.mark.parametrize("policy", QUICK)
def test_exported_policies_choose_as_learned(policy, exported):
    """One shipped policy per ruleset: the ONNX and TorchScript files play the actions ``learned`` plays."""
    check_agreement(policy, play_in_lockstep(policy, exported(policy), 200))


@pytest.mark.slow
@pytest.mark.parametrize("policy", available_policies())
def test_every_shipped_policy_exported_chooses_as_learned_on_10000_decisions(policy, exported):
    print(check_agreement(policy, play_in_lockstep(policy, exported(policy), 10_000)))


def test_a_policy_without_trump_relabelling_exports_too(tmp_path):
    """The plain actor (no trump-first permutation) and a three-layer one: logits equal the network's."""
    game = Game(make_config("mouche", 3, max_deals=1))
    torch.manual_seed(0)
    net = PolicyNet(NetSpec(Observer(game).size, game.num_actions, (32, 16, 8), None, False))
    torch.nn.init.normal_(net.actor[-1].weight, std=0.3)
    path = save_policy(tmp_path / "plain.safetensors", net, game)
    obs = torch.randn(50, Observer(game).size)
    want = net.actor(obs).detach().numpy()
    for kind in KINDS:
        file = export_policy(str(path), kind, tmp_path / f"plain.{kind}")
        agent = make_agent(kind, path=str(file))
        agent.setup(game, 0)
        np.testing.assert_allclose(agent.policy.logits(obs.numpy(), np.ones(want.shape, bool)), want,
                                   rtol=1e-5, atol=1e-5)


def test_the_tensor_forms_play_as_batched_learned(exported):
    """At the batched engine's tables: greedy actions and actions from given uniforms equal BatchedLearned's."""
    from agents.tensor import batched_opponent
    from mauscheln_env.vecenv import make_vector_env

    policy = "mousel4"
    game = rules_of(read_policy(policy)[1])
    learned = batched_opponent("learned", game, checkpoint=policy)
    greedy = batched_opponent("learned", game, checkpoint=policy, greedy=True)
    others = {(kind, g): batched_opponent(kind, game, path=str(exported(policy)[kind]), greedy=g)
              for kind in KINDS for g in (False, True)}
    envs = make_vector_env(game.config, 64, backend="batched", seed=0)
    obs, mask, _ = envs.reset(seed=5)
    gen = torch.Generator().manual_seed(0)
    steps = 0
    for _ in range(30):
        u = torch.rand(obs.shape[0], generator=gen)
        action = learned.act(obs, mask, u)
        for (kind, g), agent in others.items():
            want = greedy.act(obs, mask) if g else action
            assert torch.equal(agent.act(obs, mask, u if not g else None), want), (kind, g)
        steps += 1
        obs, mask = (step := envs.step(action)).obs, step.mask
    assert steps == 30


def test_eval_on_both_backends_gives_learned_figures(exported):
    """``eval`` of the exported files against beginner: the same per-deal figures as ``learned`` on each backend."""
    from agents.evaluation.duplicate import Settings, evaluate_pair

    files = exported("mousel4")
    for backend in ("reference", "batched"):
        settings = Settings(ruleset="mousel", players=4, deals=6, seed=1, backend=backend)
        want = evaluate_pair("learned:checkpoint=mousel4", "beginner", settings).per_deal
        for kind in KINDS:
            got = evaluate_pair(f"{kind}:path={files[kind]}", "beginner", settings)
            assert got.backend == backend
            np.testing.assert_array_equal(got.per_deal, want)


# ---------------------------------------------------------------------- the loader's refusals
def _graph_file(path: Path, D: int, A: int, *, obs_name: str = "observation", out_name: str = "logits",
                obs_type: int = TensorProto.FLOAT, mask: int | None = None, layout: dict | None = None) -> Path:
    """A small ONNX network ``obs_name [B, D] -> out_name [B, A]`` (and an ignored mask input of type ``mask``)."""
    rng = np.random.default_rng(0)
    weight = numpy_helper.from_array(rng.standard_normal((D, A)).astype(np.float32), "weight")
    nodes = [helper.make_node("Cast", [obs_name], ["x"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["x", "weight"], [out_name])]
    inputs = [helper.make_tensor_value_info(obs_name, obs_type, ["batch", D])]
    if mask is not None:
        inputs.append(helper.make_tensor_value_info("action_mask", mask, ["batch", A]))
        nodes += [helper.make_node("Cast", ["action_mask"], ["m"], to=TensorProto.FLOAT),
                  helper.make_node("ReduceSum", ["m"], ["legal_count"])]
    graph = helper.make_graph(nodes, "test", inputs, [helper.make_tensor_value_info(out_name, TensorProto.FLOAT,
                                                                                      ["batch", A])],
                              initializer=[weight])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    if layout is not None:
        helper.set_model_props(model, {LAYOUT_KEY: json.dumps(layout)})
    onnx.save(model, str(path))
    return path


class WrongWidth(torch.nn.Module):
    def __init__(self, A: int) -> None:
        super().__init__()
        self.A = A

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        return torch.zeros(observation.shape[0], self.A + 1)


def _refused(spec: str, game: Game) -> str:
    """Build ``spec`` and seat it at ``game``'s table; return the one-line error, checking nothing was played."""
    played = []
    with pytest.raises((AgentError, CheckpointError)) as info:
        agent = agent_from_spec(spec, seed=0)
        others = [make_agent("random", seed=s) for s in range(1, game.n)]
        MatchRunner(game).play([agent, *others], dealer=0, on_decision=lambda *a: played.append(a))
    assert not played
    text = str(info.value)
    assert "\n" not in text and text.strip() == text
    return text


def test_the_loader_refuses_files_that_do_not_fit_the_table(tmp_path):
    game = Game(make_config("mousel", 4))
    D, A = Observer(game).size, game.num_actions
    text = _refused(f"onnx:path={_graph_file(tmp_path / 'wide.onnx', D + 1, A)}", game)
    assert f"declares observation tensor(float) [B, {D + 1}]" in text and f"needs observation float32 [B, {D}]" in text
    text = _refused(f"onnx:path={_graph_file(tmp_path / 'narrow.onnx', D, A - 1)}", game)
    assert f"declares logits tensor(float) [B, {A - 1}]" in text and f"needs logits float32 [B, {A}]" in text
    text = _refused(f"onnx:path={_graph_file(tmp_path / 'named.onnx', D, A, obs_name='obs')}", game)
    assert "declares inputs obs tensor(float) [B, 732]" in text and "allowed: inputs observation float32" in text
    text = _refused(f"onnx:path={_graph_file(tmp_path / 'out.onnx', D, A, out_name='action_logits')}", game)
    assert "declares outputs action_logits" in text
    text = _refused(f"onnx:path={_graph_file(tmp_path / 'double.onnx', D, A, obs_type=TensorProto.DOUBLE)}", game)
    assert "declares observation tensor(double)" in text
    (tmp_path / "junk.onnx").write_bytes(b"this is not a model")
    assert "is not an ONNX model onnxruntime can run" in _refused(f"onnx:path={tmp_path / 'junk.onnx'}", game)
    assert "is not a file" in _refused(f"onnx:path={tmp_path / 'missing.onnx'}", game)
    assert "path='' is not allowed" in _refused("onnx", game)

    script = torch.jit.script(WrongWidth(A))
    torch.jit.save(script, str(tmp_path / "wide.pt"))
    text = _refused(f"torchscript:path={tmp_path / 'wide.pt'}", game)
    assert f"returns logits float32 [2, {A + 1}]" in text and f"needs logits float32 [2, {A}]" in text
    torch.save({"weight": torch.zeros(3)}, tmp_path / "weights.pt")
    assert "not a TorchScript archive" in _refused(f"torchscript:path={tmp_path / 'weights.pt'}", game)
    (tmp_path / "junk.pt").write_bytes(b"this is not an archive")
    assert "not a TorchScript archive (not a zip file)" in _refused(f"torchscript:path={tmp_path / 'junk.pt'}", game)


def test_a_file_made_for_another_table_is_refused(tmp_path, exported):
    """The layout in the metadata pins a file to its game, as for learned (here: mousel's policy at mauscheln)."""
    game = Game(make_config("mauscheln", 4))
    for kind in KINDS:
        text = _refused(f"{kind}:path={exported('mousel4')[kind]}", game)
        assert "was trained for mousel, 4 players" in text and "this table plays mauscheln, 4 players" in text
    # the same sizes and another table's layout: refused by the layout alone
    D, A = Observer(game).size, game.num_actions
    other = layout_of(Game(make_config("mauscheln", 4, knock=True)))
    text = _refused(f"onnx:path={_graph_file(tmp_path / 'knock.onnx', D, A, layout=other)}", game)
    assert "knock" in text
    with zipfile.ZipFile(exported("mousel4")["torchscript"]) as archive:
        assert any(name.endswith(f"extra/{LAYOUT_FILE}") for name in archive.namelist())


@pytest.mark.parametrize("mask_type", [TensorProto.BOOL, TensorProto.FLOAT])
def test_a_network_that_takes_the_mask_plays_legal_actions(tmp_path, mask_type):
    """An ``action_mask`` input (bool or float32) is fed; the agent masks the logits itself either way."""
    game = Game(make_config("mouche", 4, max_deals=1))
    D, A = Observer(game).size, game.num_actions
    path = _graph_file(tmp_path / "masked.onnx", D, A, mask=mask_type)
    for greedy in (False, True):
        agents = [make_agent("onnx", seed=s, path=str(path), greedy=greedy) for s in range(4)]
        record = MatchRunner(game).play(agents, dealer=1, session_seed=2)
        assert record.decisions > 0


def test_mauscheln_export_cli(tmp_path, capsys):
    out = tmp_path / "m.onnx"
    assert main(["learned:checkpoint=mouche4", "--format", "onnx", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out and out.is_file()
    before = out.read_bytes()
    for argv, words in [
        (["learned:checkpoint=mouche4", "--format", "onnx", "--out", str(out)], "exists; allowed: a new path, or --overwrite"),
        (["learned:checkpoint=mouche4", "--format", "keras", "--out", str(tmp_path / "k")], "invalid choice: 'keras'"),
        (["expert", "--format", "onnx", "--out", str(tmp_path / "e.onnx")], "allowed: learned:checkpoint=NAME_OR_PATH"),
        (["learned", "--format", "onnx", "--out", str(tmp_path / "e.onnx")], "allowed: learned:checkpoint=NAME_OR_PATH"),
        (["learned:checkpoint=nobody", "--format", "onnx", "--out", str(tmp_path / "e.onnx")], "neither a file"),
        (["learned:checkpoint=mouche4", "--format", "onnx", "--out", str(tmp_path / "no" / "e.onnx")], "does not exist"),
        (["learned:checkpoint=mouche4", "--format", "onnx", "--out", str(tmp_path)], "is a directory"),
        (["learned:checkpoint=mouche4", "--format", "onnx"], "--out"),
    ]:
        code = None
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse's own errors
            code = exc.code
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and words in err, (argv, err)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]  # nothing else written, no temporary left
    assert main(["learned:checkpoint=mouche4", "--format", "torchscript", "--out", str(out), "--overwrite"]) == 0
    assert zipfile.is_zipfile(out)


def test_the_documented_route_from_a_torch_network(tmp_path, capsys):
    """docs/agents/portable.md: a user's own network through torch.onnx.export, then ``mauscheln eval``."""
    pytest.importorskip("onnxscript")
    from agents.evaluation.cli import main as eval_main

    game = Game(make_config("mauscheln", 4, max_deals=1))
    D, A = Observer(game).size, game.num_actions

    class MyActor(torch.nn.Module):  # the shape of a CleanRL / Tianshou / TorchRL actor
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(D, 64), torch.nn.Tanh(), torch.nn.Linear(64, A))

        def forward(self, observation: torch.Tensor, action_mask: torch.Tensor) -> torch.Tensor:
            return self.net(observation).masked_fill(~action_mask, -1e9)

    torch.manual_seed(0)
    path, batch = tmp_path / "my.onnx", torch.export.Dim("batch")
    torch.onnx.export(MyActor().eval(), (torch.zeros(2, D), torch.ones(2, A, dtype=torch.bool)), str(path),
                      input_names=["observation", "action_mask"], output_names=["logits"],
                      dynamic_shapes=({0: batch}, {0: batch}), verbose=False)
    assert eval_main(["--agents", f"onnx:path={path}", "expert", "--deals", "4", "--no-progress",
                      "--out", str(tmp_path / "eval")]) == 0
    assert "games/s" in capsys.readouterr().out
