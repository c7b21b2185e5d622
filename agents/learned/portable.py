"""``onnx`` and ``torchscript``: a policy from any framework, as a network file that maps observations to logits.

    agent = make_agent("onnx", path="policy.onnx")                     # samples from the masked softmax (seeded)
    agent = make_agent("torchscript", path="policy.pt", greedy=True)   # plays the most likely legal action

The contract (docs/agents/portable.md shows how to export a network of TorchRL, Tianshou or CleanRL to it):

===============  ======================  =====================================================================
name             type and shape          meaning
===============  ======================  =====================================================================
``observation``  float32 [B, D]          the seat's observation (``env.observe(agent)["observation"]``)
``action_mask``  bool or float32 [B, A]  optional input: the legal actions (1/True legal, 0/False illegal)
``logits``       float32 [B, A]          output: unnormalised log-probabilities over all action ids
===============  ======================  =====================================================================

``D`` and ``A`` are the table's observation size and action count; ``B`` (the batch) may be dynamic or 1.
The agent masks the illegal actions of ``logits`` itself, so a network may leave them as they are. A
file may carry the observation layout of the table it was made for (:func:`layout_of` as JSON: ONNX
``metadata_props`` key :data:`LAYOUT_KEY`, TorchScript extra file :data:`LAYOUT_FILE`); then it plays
only that game (:func:`check_compatible`, as ``learned``), else any table whose ``D`` and ``A`` match.
:meth:`PortableAgent.setup` checks all of this, and runs the network once on a blank observation to see
the shape it really returns, before the first decision; a mismatch is one :class:`CheckpointError` line
saying what the file declares and what the table needs.

Trust: an ONNX file is data, run by onnxruntime's operators (no custom-op libraries are loaded). A
TorchScript file is a program: it runs only TorchScript's operators (it cannot import Python modules or
run Python code), but those can loop for ever, allocate without bound or read files
(``torch.from_file``); load only TorchScript files whose source you trust, as you would a script.
TorchScript is deprecated upstream (torch warns at every ``torch.jit`` call); ONNX is the portable way.

Sampling is :func:`agents.learned.agent.choose_action`, the same function and random draws as
``learned``: with the same seed and the same logits both agents play the same actions.
:class:`BatchedPortable` is the tensor form for the batched engine's tables.
"""

from __future__ import annotations

import contextlib
import json
import warnings
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from agents.base import Agent, AgentError, Info, legal_ids
from agents.learned.agent import choose_action
from agents.learned.checkpoint import CheckpointError, check_compatible
from mauscheln_env.engine import Game
from mauscheln_env.observation import Observer

OBSERVATION, ACTION_MASK, LOGITS = "observation", "action_mask", "logits"
LAYOUT_KEY = "mauscheln_layout"
"""ONNX ``metadata_props`` key of the table's layout (JSON of :func:`agents.learned.checkpoint.layout_of`)."""
LAYOUT_FILE = "mauscheln_layout.json"
"""TorchScript extra file (``torch.jit.save(..., _extra_files=...)``) with the same JSON."""
SOURCE_KEY = "mauscheln_source"
"""ONNX ``metadata_props`` key naming the checkpoint an exported file came from (its file or folder name); shown
to people, never checked."""
MAX_LAYOUT_BYTES = 1 << 22
CONTRACT = (f"inputs {OBSERVATION} float32 [B, D] and optionally {ACTION_MASK} bool or float32 [B, A], "
            f"output {LOGITS} float32 [B, A]")


@contextlib.contextmanager
def _quiet_jit() -> Iterator[None]:
    """Hide torch's deprecation warning of ``torch.jit`` calls (the module docstring says it instead)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`torch\.jit\.", category=DeprecationWarning)
        yield


def _shape_text(shape: list[Any]) -> str:
    return "[" + ", ".join(str(d) if isinstance(d, int) else "B" for d in shape) + "]"


def _table(game: Game) -> str:
    return f"{game.config.ruleset}, {game.n} players"


def _read_layout(text: str | bytes | None, source: str) -> dict[str, Any] | None:
    """The layout a file carries, or None when it carries none."""
    if text is None or len(text) == 0:
        return None
    if len(text) > MAX_LAYOUT_BYTES:
        raise CheckpointError(f"{source}: its layout metadata is {len(text)} bytes; allowed: at most {MAX_LAYOUT_BYTES}")
    try:
        layout = json.loads(text)
    except ValueError as exc:
        raise CheckpointError(f"{source}: its layout metadata is not JSON ({exc}); allowed: the JSON of "
                              "agents.learned.layout_of(game)") from exc
    if not isinstance(layout, dict):
        raise CheckpointError(f"{source}: its layout metadata is a JSON {type(layout).__name__}; allowed: the JSON "
                              "object of agents.learned.layout_of(game)")
    return layout


class PolicyFile:
    """A network file opened for play: its declared inputs and layout, and :meth:`logits` over batches.

    Subclasses read one format; :meth:`check` compares a file with a table before anything is played.
    """

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self.mask_dtype: np.dtype | None = None
        """The dtype the network takes ``action_mask`` in (bool or float32); None: it takes no mask."""
        self.batch_one = False
        """Whether the file declares a batch of exactly one row (then batches are run row by row)."""
        self.layout: dict[str, Any] | None = None

    def check(self, game: Game) -> None:
        """Raise :class:`CheckpointError` unless the file was made for ``game``'s table and returns ``[B, A]``
        logits for ``[B, D]`` observations (run once on a blank observation)."""
        if self.layout is not None:
            check_compatible(self.layout, game, self.path)
        D, A = Observer(game).size, game.num_actions
        self._check_declared(D, A, game)
        rows = 1 if self.batch_one else 2
        try:
            out = self._run(np.zeros((rows, D), np.float32), np.ones((rows, A), bool))
        except Exception as exc:  # noqa: BLE001 - whatever the runtime raises, the file does not play this table
            raise CheckpointError(f"{self.path}: the network fails on a [{rows}, {D}] observation "
                                  f"({_table(game)}): {' '.join(str(exc).split())[:300]}") from exc
        if not isinstance(out, np.ndarray) or out.dtype != np.float32 or out.shape != (rows, A):
            got = (f"{out.dtype} {list(out.shape)}" if isinstance(out, np.ndarray) else type(out).__name__)
            raise CheckpointError(f"{self.path}: the network returns {LOGITS} {got} for a [{rows}, {D}] observation; "
                                  f"this table ({_table(game)}) needs {LOGITS} float32 [{rows}, {A}]")

    def _check_declared(self, D: int, A: int, game: Game) -> None:
        """Compare what the file declares with the table (formats that declare shapes)."""

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """obs float32[B, D], mask bool[B, A] -> float32[B, A]."""
        if self.batch_one and obs.shape[0] != 1:
            return np.concatenate([self._run(obs[i:i + 1], mask[i:i + 1]) for i in range(obs.shape[0])])
        return self._run(obs, mask)

    def _run(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class OnnxPolicy(PolicyFile):
    """An ONNX file run by onnxruntime on the CPU, one thread (evaluation parallelises over processes)."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        try:
            import onnxruntime as ort
        except ImportError as exc:
            raise AgentError("the onnx agent needs onnxruntime; install it with pip install 'mauscheln[onnx]'") from exc
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only: warnings about the graph are not the player's business
        try:
            self.session = ort.InferenceSession(self.path, options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # noqa: BLE001 - onnxruntime's errors derive from Exception only
            raise CheckpointError(f"{self.path} is not an ONNX model onnxruntime can run: "
                                  f"{' '.join(str(exc).split())[:300]}") from exc
        self.inputs = {i.name: (i.type, list(i.shape or [])) for i in self.session.get_inputs()}
        self.outputs = {o.name: (o.type, list(o.shape or [])) for o in self.session.get_outputs()}
        self.layout = _read_layout(self.session.get_modelmeta().custom_metadata_map.get(LAYOUT_KEY), self.path)
        declared = "; ".join(f"{n} {t} {_shape_text(s)}" for n, (t, s) in self.inputs.items())
        if OBSERVATION not in self.inputs or set(self.inputs) - {OBSERVATION, ACTION_MASK}:
            raise CheckpointError(f"{self.path} declares inputs {declared or '(none)'}; allowed: {CONTRACT}")
        if LOGITS not in self.outputs:
            raise CheckpointError(f"{self.path} declares outputs {', '.join(self.outputs) or '(none)'}; allowed: "
                                  f"an output named {LOGITS} (float32 [B, A]; other outputs are ignored)")
        if ACTION_MASK in self.inputs:
            kinds = {"tensor(bool)": np.dtype(bool), "tensor(float)": np.dtype(np.float32)}
            if self.inputs[ACTION_MASK][0] not in kinds:
                raise CheckpointError(f"{self.path} declares {ACTION_MASK} {self.inputs[ACTION_MASK][0]}; "
                                      f"allowed: tensor(bool) or tensor(float)")
            self.mask_dtype = kinds[self.inputs[ACTION_MASK][0]]
        self.batch_one = any(s[:1] == [1] for _, s in self.inputs.values())

    def _check_declared(self, D: int, A: int, game: Game) -> None:
        want = {OBSERVATION: ("tensor(float)", D), ACTION_MASK: (None, A), LOGITS: ("tensor(float)", A)}
        for name, (dtype, shape) in [*self.inputs.items(), (LOGITS, self.outputs[LOGITS])]:
            kind, size = want[name]
            dims_ok = (len(shape) == 2 and (not isinstance(shape[0], int) or shape[0] == 1)
                       and (shape[1] == size or (name == LOGITS and not isinstance(shape[1], int))))
            if name == LOGITS and not shape:
                dims_ok = True  # undeclared output shape: the run in check() finds it
            if not dims_ok or (kind is not None and dtype != kind):
                need = {OBSERVATION: f"float32 [B, {D}]", ACTION_MASK: f"bool or float32 [B, {A}]",
                        LOGITS: f"float32 [B, {A}]"}[name]
                raise CheckpointError(f"{self.path} declares {name} {dtype} {_shape_text(shape)}; this table "
                                      f"({_table(game)}) needs {name} {need} (B: a dynamic batch or 1)")

    def _run(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        feed = {OBSERVATION: obs}
        if self.mask_dtype is not None:
            feed[ACTION_MASK] = mask.astype(self.mask_dtype)
        return self.session.run([LOGITS], feed)[0]


class TorchScriptPolicy(PolicyFile):
    """A TorchScript archive (``torch.jit.save``) loaded onto the CPU; ``forward(observation[, action_mask])``
    returns the logits; the mask comes as a bool tensor."""

    def __init__(self, path: str) -> None:
        super().__init__(path)
        if not zipfile.is_zipfile(self.path):
            raise CheckpointError(f"{self.path} is not a TorchScript archive (not a zip file); allowed: a file "
                                  "written by torch.jit.save")
        try:
            with zipfile.ZipFile(self.path) as archive:
                names = archive.namelist()
        except (OSError, zipfile.BadZipFile) as exc:
            raise CheckpointError(f"{self.path} cannot be read as a zip archive: {exc}") from exc
        if not any(n.endswith("/constants.pkl") for n in names) or not any("/code/" in n for n in names):
            raise CheckpointError(f"{self.path} is a zip file but not a TorchScript archive (no code/ and "
                                  "constants.pkl; a torch.save checkpoint is not one); allowed: a file written by "
                                  "torch.jit.save")
        extra = {LAYOUT_FILE: ""}
        try:
            with _quiet_jit():
                self.module = torch.jit.load(self.path, map_location="cpu", _extra_files=extra)
        except (RuntimeError, ValueError, OSError) as exc:
            raise CheckpointError(f"{self.path} is not a TorchScript archive torch.jit.load can read: "
                                  f"{' '.join(str(exc).split())[:300]}") from exc
        self.module.eval()
        self.layout = _read_layout(extra[LAYOUT_FILE], self.path)
        forward = getattr(self.module, "forward", None)
        schema = getattr(forward, "schema", None)
        if schema is None:
            raise CheckpointError(f"{self.path} has no scripted forward method; allowed: a module whose "
                                  f"forward({OBSERVATION}[, {ACTION_MASK}]) returns {LOGITS}")
        args = [(a.name, str(a.type)) for a in schema.arguments[1:]]
        returns = [str(r.type) for r in schema.returns]
        names = [n for n, _ in args]
        if (names not in ([OBSERVATION], [OBSERVATION, ACTION_MASK]) or any(t != "Tensor" for _, t in args)
                or returns != ["Tensor"]):
            shown = ", ".join(f"{n}: {t}" for n, t in args)
            raise CheckpointError(f"{self.path} declares forward({shown}) -> {', '.join(returns) or 'nothing'}; "
                                  f"allowed: forward({OBSERVATION}: Tensor[, {ACTION_MASK}: Tensor]) -> Tensor "
                                  f"({CONTRACT})")
        if len(names) == 2:
            self.mask_dtype = np.dtype(bool)

    def _run(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        args = [torch.from_numpy(obs)]
        if self.mask_dtype is not None:
            args.append(torch.from_numpy(np.ascontiguousarray(mask, dtype=bool)))
        threads = torch.get_num_threads()
        single = obs.shape[0] == 1 and threads != 1
        if single:  # one observation: torch's thread pool costs more than the arithmetic (far more on a busy machine)
            torch.set_num_threads(1)
        try:
            with torch.no_grad():
                return self.module(*args).detach().cpu().numpy()
        finally:
            if single:
                torch.set_num_threads(threads)


FORMATS: dict[str, type[PolicyFile]] = {"onnx": OnnxPolicy, "torchscript": TorchScriptPolicy}
"""The network file formats by agent name."""
_A_FILE = {"onnx": "an ONNX file", "torchscript": "a TorchScript file"}


def open_policy_file(kind: str, path: Any) -> PolicyFile:
    """Open ``path`` as a network file of ``kind`` (``onnx`` or ``torchscript``); nothing is played."""
    if kind not in FORMATS:
        raise AgentError(f"format {kind!r} is not allowed; allowed: {', '.join(FORMATS)}")
    if not isinstance(path, str) or not path:
        raise AgentError(f"{kind}: path={path!r} is not allowed; allowed: the path of {_A_FILE[kind]} ({CONTRACT})")
    file = Path(path)
    if not file.is_file():
        raise CheckpointError(f"{kind}: {path!r} is not a file; allowed: the path of {_A_FILE[kind]} ({CONTRACT})")
    return FORMATS[kind](path)


class PortableAgent(Agent):
    """Plays a network file (see the module docstring for the contract and the trust model).

    It samples from the softmax of the legal actions' logits with :attr:`rng` by default, drawing as
    ``learned`` does; ``greedy=True`` plays the most likely legal action.
    """

    param_help: ClassVar[dict[str, str]] = {"path": "the path of the policy file"}

    def __init__(self, seed: int | None = None, path: str = "", greedy: bool = False) -> None:
        super().__init__(seed)
        self.policy = open_policy_file(self.name, path)
        self.params = {"path": path, "greedy": greedy}
        self.greedy = greedy
        self._checked: Game | None = None

    def setup(self, game: Game, seat: int) -> None:
        super().setup(game, seat)
        if self._checked is not game:  # a match runner sets its agents up at every game of its table
            self.policy.check(game)
            self._checked = game

    def act(self, observation: np.ndarray, action_mask: np.ndarray, info: Info) -> int:
        legal = legal_ids(action_mask)
        if self._checked is None:
            raise AgentError(f"{self.name}: call setup(game, seat) before act (it checks the file against the table)")
        obs = np.asarray(observation, dtype=np.float32)[None]
        logits = self.policy.logits(obs, np.asarray(action_mask, dtype=bool)[None])[0]
        chosen = logits[legal]
        if np.isnan(chosen).any() or not np.isfinite(chosen.max()):
            raise CheckpointError(f"{self.policy.path}: the network's {LOGITS} at the legal actions are "
                                  f"{chosen.tolist()}; allowed: finite numbers (-inf only where another is finite)")
        return choose_action(logits, legal, self.greedy, self.rng)


class OnnxAgent(PortableAgent):
    """An ONNX policy file run by onnxruntime (data: no code from the file runs)."""

    name = "onnx"
    param_help = {"path": f"the path of an ONNX file ({CONTRACT})"}


class TorchScriptAgent(PortableAgent):
    """A TorchScript policy file (``torch.jit.save``), loaded onto the CPU. A TorchScript file is a program
    restricted to TorchScript's operators: no Python runs, but it can read files and loop; play only files
    whose source you trust."""

    name = "torchscript"
    param_help = {"path": f"the path of a TorchScript file ({CONTRACT})"}


class BatchedPortable:
    """The tensor form of :class:`OnnxAgent` and :class:`TorchScriptAgent` over ``(obs, mask)`` batches, for the
    batched engine's tables; it plays as :class:`agents.learned.BatchedLearned` does (greedy argmax, a
    generator seeded with ``seed``, or given uniforms ``u``), from the file's logits."""

    def __init__(self, kind: str, game: Game, device: torch.device | str = "cpu", seed: int = 0, path: str = "",
                 greedy: bool = False) -> None:
        from agents.tensor.batched_expert import seeded_generator

        if not isinstance(greedy, bool):
            raise ValueError(f"greedy={greedy!r} is not allowed; allowed: true or false")
        self.name = kind
        self.policy = open_policy_file(kind, path)
        self.policy.check(game)
        self.device, self.generator = seeded_generator(seed, device)
        self.greedy = greedy
        self.num_actions = game.num_actions

    def act(self, obs: torch.Tensor, mask: torch.Tensor, u: torch.Tensor | None = None) -> torch.Tensor:
        """obs float[B, D], mask bool[B, A] -> int64[B]; ``u`` as for :meth:`agents.learned.BatchedLearned.act`."""
        from agents.learned.network import sample_actions, sample_by_uniform

        mask = mask.to(self.device, torch.bool)
        if mask.dim() != 2 or mask.shape[1] != self.num_actions:
            raise ValueError(f"mask has shape {tuple(mask.shape)}; allowed: [B, {self.num_actions}]")
        raw = self.policy.logits(obs.detach().to("cpu", torch.float32).numpy(), mask.cpu().numpy())
        logits = torch.from_numpy(raw).to(self.device)
        legal_max = torch.where(mask, logits, -torch.inf).amax(dim=1)
        if bool(torch.isnan(torch.where(mask, logits, 0.0)).any()) or not bool(torch.isfinite(legal_max).all()):
            raise CheckpointError(f"{self.policy.path}: the network's {LOGITS} at the legal actions hold NaN or no "
                                  "finite value; allowed: finite numbers")
        logits = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
        if self.greedy:
            return logits.argmax(dim=1)
        if u is None:
            return sample_actions(logits, self.generator)
        return sample_by_uniform(logits, u.to(self.device))
