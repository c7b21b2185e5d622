"""``mauscheln export``: a learned policy as an ONNX or TorchScript file that the ``onnx`` and ``torchscript`` agents play.

    mauscheln export learned:checkpoint=mousel4 --format onnx --out mousel4.onnx
    mauscheln eval --agents onnx:path=mousel4.onnx expert --ruleset mousel

The file computes the actor of the checkpoint's :class:`~agents.learned.network.PolicyNet`: ``observation``
float32 [B, D] -> ``logits`` float32 [B, A] over the real actions, the trump-first relabelling included
(the observation's suits permuted by the trump suit, the logits permuted back), unmasked; the agent masks
and samples as ``learned`` does. The checkpoint's layout goes into the file's metadata, so the file plays
only the table the policy was trained for (:mod:`agents.learned.portable` has the contract).

The ONNX graph is written with the ``onnx`` package's helpers from the weights (``Gemm``/``Tanh`` layers,
``Slice``/``ArgMax``/``Gather``/``GatherElements`` for the relabelling): every network the checkpoint format
can hold is such a stack (:func:`~agents.learned.checkpoint.expected_shapes`), and this needs neither
torch's exporters nor their extra packages. The TorchScript file is ``torch.jit.script`` of a module that
runs the same steps with the network's own layers. Before the file is renamed into place it is played
back (onnxruntime, ``torch.jit.load``) on random observations and its logits compared with the network's;
the write is atomic, and an existing ``--out`` is replaced only with ``--overwrite``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.learned.checkpoint import CheckpointError, available_policies, read_policy, resolve_checkpoint
from agents.learned.network import NUM_SUITS, PolicyNet
from agents.learned.portable import (
    LAYOUT_FILE,
    LAYOUT_KEY,
    LOGITS,
    OBSERVATION,
    SOURCE_KEY,
    _quiet_jit,
    open_policy_file,
)
from mauscheln_env.errors import MauschelnError
from mauscheln_env.files import atomic_write, strict_json
from mauscheln_env.ruleargs import ArgumentParser, newline_after_ctrl_c, path_arg, report

PROG = "mauscheln export"
EXPORT_FORMATS = ("onnx", "torchscript")
ONNX_OPSET = 17
"""The ONNX operator set of exported files (onnxruntime 1.13 and later run it)."""
ONNX_IR_VERSION = 8
VERIFY_ROWS = 64
VERIFY_TOLERANCE = 1e-4
"""Largest difference allowed between the file's logits and the network's, relative to the logits' scale."""


class ExportError(MauschelnError):
    """An export that cannot be done as asked (flags, the output file, a missing package)."""


def _layers(net: PolicyNet) -> list[nn.Linear]:
    """The actor's linear layers, after checking that it is the Linear-Tanh stack every checkpoint holds."""
    modules = list(net.actor)
    kinds = [type(m) for m in modules]
    want = [nn.Linear if i % 2 == 0 else nn.Tanh for i in range(len(modules))]
    if kinds != want or len(modules) % 2 == 0:
        raise CheckpointError(f"the actor is {[k.__name__ for k in kinds]}; allowed: Linear layers with Tanh between")
    return [m for m in modules if isinstance(m, nn.Linear)]


def onnx_model(net: PolicyNet, layout: dict[str, Any], source: str) -> Any:
    """The ONNX ``ModelProto`` of ``net``'s actor with ``layout`` (and ``source``) in its metadata."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as exc:
        raise ExportError("--format onnx needs the onnx package; install it with pip install 'mauscheln[onnx]'") from exc
    D, A = net.spec.obs_size, net.spec.num_actions
    nodes: list[Any] = []
    weights: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        weights.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    x = OBSERVATION
    if net.spec.trump_first:  # PolicyNet.prepare: the trump suit of each row, then the relabelled observation
        start = int(net.trump_offset)
        nodes += [
            helper.make_node("Slice", [x, const("trump_start", np.array([start], np.int64)),
                                       const("trump_end", np.array([start + NUM_SUITS], np.int64)),
                                       const("trump_axis", np.array([1], np.int64))], ["trump_suit"]),
            helper.make_node("ArgMax", ["trump_suit"], ["trump"], axis=1, keepdims=0),
            helper.make_node("Gather", [const("obs_perm", net.obs_perm.numpy().astype(np.int64)), "trump"],
                             ["obs_index"], axis=0),
            helper.make_node("GatherElements", [x, "obs_index"], ["relabelled"], axis=1),
        ]
        x = "relabelled"
    layers = _layers(net)
    for i, layer in enumerate(layers):
        last = i == len(layers) - 1
        out = ("actor_logits" if net.spec.trump_first else LOGITS) if last else f"linear_{i}"
        nodes.append(helper.make_node(
            "Gemm", [x, const(f"actor_{i}_weight", layer.weight.detach().cpu().numpy().astype(np.float32)),
                     const(f"actor_{i}_bias", layer.bias.detach().cpu().numpy().astype(np.float32))],
            [out], transB=1))
        x = out
        if not last:
            nodes.append(helper.make_node("Tanh", [out], [f"hidden_{i}"]))
            x = f"hidden_{i}"
    if net.spec.trump_first:  # PolicyNet.logits_of: the logits over relabelled actions mapped back to the real ones
        nodes += [
            helper.make_node("Gather", [const("act_perm", net.act_perm.numpy().astype(np.int64)), "trump"],
                             ["act_index"], axis=0),
            helper.make_node("GatherElements", [x, "act_index"], [LOGITS], axis=1),
        ]
    graph = helper.make_graph(
        nodes, "mauscheln_policy",
        [helper.make_tensor_value_info(OBSERVATION, TensorProto.FLOAT, ["batch", D])],
        [helper.make_tensor_value_info(LOGITS, TensorProto.FLOAT, ["batch", A])],
        initializer=weights)
    model = helper.make_model(graph, producer_name="mauscheln", opset_imports=[helper.make_opsetid("", ONNX_OPSET)])
    model.ir_version = ONNX_IR_VERSION
    helper.set_model_props(model, {LAYOUT_KEY: strict_json(layout), SOURCE_KEY: source})
    onnx.checker.check_model(model, full_check=True)
    return model


class ScriptedActor(nn.Module):
    """The actor of a :class:`PolicyNet` as a module ``torch.jit.script`` can compile: ``observation`` ->
    ``logits`` over the real actions, with the trump-first relabelling where the network has it."""

    def __init__(self, net: PolicyNet) -> None:
        super().__init__()
        _layers(net)
        self.actor = net.actor
        self.trump_first = bool(net.spec.trump_first)
        D, A = net.spec.obs_size, net.spec.num_actions
        self.register_buffer("obs_perm", net.obs_perm.clone() if self.trump_first else torch.zeros(0, D, dtype=torch.long))
        self.register_buffer("act_perm", net.act_perm.clone() if self.trump_first else torch.zeros(0, A, dtype=torch.long))
        self.trump_start = int(net.trump_offset) if self.trump_first else 0
        self.trump_end = self.trump_start + NUM_SUITS

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        if not self.trump_first:
            return self.actor(observation)
        trump = observation[:, self.trump_start:self.trump_end].argmax(1)
        x = observation.gather(1, self.obs_perm.index_select(0, trump))
        return self.actor(x).gather(1, self.act_perm.index_select(0, trump))


def torchscript_module(net: PolicyNet) -> torch.jit.ScriptModule:
    """``torch.jit.script`` of :class:`ScriptedActor` (on the CPU, in eval mode)."""
    with _quiet_jit():
        return torch.jit.script(ScriptedActor(net).cpu().eval())


def _verify(kind: str, path: Path, net: PolicyNet, source: str) -> None:
    """Play the written file back on random observations; raise unless its logits are the network's."""
    rng = np.random.default_rng(0)
    obs = rng.standard_normal((VERIFY_ROWS, net.spec.obs_size)).astype(np.float32)
    if net.spec.trump_first:  # a one-hot trump suit, as observations have it (argmax ties are no test)
        start = int(net.trump_offset)
        obs[:, start:start + NUM_SUITS] = np.eye(NUM_SUITS, dtype=np.float32)[rng.integers(NUM_SUITS, size=VERIFY_ROWS)]
    with torch.no_grad():
        x, trump = net.prepare(torch.from_numpy(obs))
        want = net.actor(x)
        if trump is not None:
            want = want.gather(1, net.act_perm.index_select(0, trump))
    want = want.numpy()
    got = open_policy_file(kind, str(path)).logits(obs, np.ones(want.shape, bool))
    scale = 1.0 + float(np.abs(want).max())
    diff = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    if not diff <= VERIFY_TOLERANCE * scale:
        raise CheckpointError(f"the {kind} file written for {source} does not compute the policy's logits "
                              f"(largest difference {diff:.3g}); nothing was written")


def export_policy(checkpoint: str, kind: str, out: str | Path, overwrite: bool = False) -> Path:
    """Write ``checkpoint``'s policy (a path, a run directory or a shipped name) as a ``kind`` file at ``out``."""
    if kind not in EXPORT_FORMATS:
        raise ExportError(f"format {kind!r} is not allowed; allowed: {', '.join(EXPORT_FORMATS)}")
    out = Path(out)
    if out.is_dir():
        raise ExportError(f"--out {str(out)!r} is a directory; allowed: a file path")
    if out.exists() and not overwrite:
        raise ExportError(f"--out {str(out)!r} exists; allowed: a new path, or --overwrite to replace it")
    if out.parent.exists() and not out.parent.is_dir():
        raise ExportError(f"--out {str(out)!r}: {str(out.parent)!r} is a file, not a folder; allowed: a file in an "
                          "existing folder")
    if not out.parent.is_dir():
        raise ExportError(f"--out {str(out)!r}: the folder {str(out.parent)!r} does not exist; allowed: a file in an "
                          "existing folder")
    source = resolve_checkpoint(checkpoint)
    if out.exists() and out.resolve() == source.resolve():
        raise ExportError(f"--out {str(out)!r} is the policy being exported; allowed: another path (the export "
                          "reads the policy again after writing)")
    net, layout, _ = read_policy(checkpoint)
    net = net.cpu().eval()
    if kind == "onnx":
        model = onnx_model(net, layout, Path(str(checkpoint)).name)
        write = lambda tmp: tmp.write_bytes(model.SerializeToString())  # noqa: E731
    else:
        module = torchscript_module(net)
        extra = {LAYOUT_FILE: strict_json(layout)}

        def write(tmp: Path) -> None:
            with _quiet_jit():
                torch.jit.save(module, str(tmp), _extra_files=extra)

    def write_checked(tmp: Path) -> None:
        write(tmp)
        _verify(kind, tmp, net, str(checkpoint))

    return atomic_write(out, write_checked)


def build_parser() -> argparse.ArgumentParser:
    shipped = ", ".join(available_policies()) or "none"
    p = ArgumentParser(prog=PROG, description=(
        "Write a learned policy as an ONNX or TorchScript file: observation float32 [B, D] -> logits float32 "
        "[B, A], the table's layout in its metadata. Play it with the onnx or torchscript agent."))
    p.add_argument("agent", help=f"learned:checkpoint=NAME_OR_PATH: a policy file, a run directory or a shipped "
                                 f"policy ({shipped})")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="the file format")
    p.add_argument("--out", type=path_arg, required=True, help="the file to write")
    p.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    return p


def checkpoint_of(spec: str) -> str:
    """The checkpoint of a ``learned:checkpoint=...`` spec; any other spec raises :class:`ExportError`."""
    from agents.base import parse_agent_spec

    name, params = parse_agent_spec(spec)
    allowed = (f"learned:checkpoint=NAME_OR_PATH (a policy file, a run directory or a shipped policy: "
               f"{', '.join(available_policies()) or 'none'})")
    if name != "learned" or set(params) != {"checkpoint"} or not isinstance(params["checkpoint"], str):
        raise ExportError(f"agent spec {spec!r} is not allowed; allowed: {allowed}")
    return params["checkpoint"]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        checkpoint = checkpoint_of(args.agent)
        path = export_policy(checkpoint, args.format, args.out, args.overwrite)
        net, layout, _ = read_policy(checkpoint)
    except MauschelnError as exc:
        return report(PROG, exc)
    except OSError as exc:  # the folder of --out is not writable, the disk is full
        return report(PROG, f"cannot write {args.out!r}: {exc}")
    except KeyboardInterrupt:  # the write is atomic: nothing is left behind
        print(f"{newline_after_ctrl_c()}{PROG}: interrupted; nothing was written", file=sys.stderr)
        return 130
    rules = layout["rules"]
    print(f"wrote {path} ({args.format}): {checkpoint}, {rules['ruleset']} with {rules['num_players']} players; "
          f"{OBSERVATION} float32 [B, {net.spec.obs_size}] -> {LOGITS} float32 [B, {net.spec.num_actions}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
