"""Tournaments: every pairing of a set of agents, their ratings, and the files they are kept in.

Ratings
    A cross-table of mean advantages over any set of agents, and Bradley–Terry
    strengths fitted to the per-deal wins (ties count half; a weak prior of one
    tie per pairing keeps the fit finite), shown on the Elo scale
    (400 · log10), centred on the mean.

A tournament is written as ``results.json`` (the record every other tool reads and
:func:`merge_results` pools), ``results.csv`` and ``crosstable.md``; :func:`play_in_chunks` keeps a long
series in finished chunks so that a stopped run plays only what is missing. ``results.json`` names what
played under ``provenance``: for each agent as named, the spec that rebuilds it (a file by its absolute
path), its class and the SHA-256 of its code when it is not the project's own (:func:`agents.base.provenance`).
:func:`load_results` reads a results file plain or gzip-compressed (the series kept in the repository are
``.json.gz``).
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import math
import os
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.evaluation.charts import tournament_chart
from agents.evaluation.duplicate import Z95, PairResult, Settings, _is_whole, add_counts, evaluate_pair, summarize
from agents.evaluation.progress import RunProgress
from mauscheln_env.errors import ConfigError
from mauscheln_env.files import atomic_write, atomic_write_text, strict_json


@dataclass
class Tournament:
    agents: list[str]
    pairs: list[PairResult]
    ratings: dict[str, float]
    settings: dict[str, Any]
    command: str = ""
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)
    """For each agent (as named in :attr:`agents`): ``spec``, ``class`` and ``source`` (:func:`provenance_of`)."""

    def crosstable_markdown(self) -> str:
        return crosstable_markdown(self.agents, self.pairs, self.ratings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "settings": self.settings,
            "agents": self.agents,
            "ratings_elo": self.ratings,
            "provenance": self.provenance,
            "pairs": [p.to_dict() for p in self.pairs],
        }


def bradley_terry(agents: Sequence[str], pairs: Iterable[PairResult], prior: float = 0.5,
                  iterations: int = 2000) -> dict[str, float]:
    """Bradley–Terry strengths from per-deal wins (ties half), as Elo points centred on the mean.

    ``prior`` virtual wins for each side of every pairing keep a clean sweep finite.
    """
    idx = {a: i for i, a in enumerate(agents)}
    k = len(agents)
    w = np.zeros((k, k))
    for p in pairs:
        i, j = idx[p.candidate], idx[p.baseline]
        if i == j:
            continue  # an agent against itself says nothing about ratings
        w[i, j] += p.wins + 0.5 * p.ties + prior
        w[j, i] += p.losses + 0.5 * p.ties + prior
    games = w + w.T
    strength = np.ones(k)
    for _ in range(iterations):
        wins = w.sum(axis=1)
        denom = np.array([sum(games[i, j] / (strength[i] + strength[j]) for j in range(k) if j != i and games[i, j])
                          for i in range(k)])
        new = np.where(denom > 0, wins / np.where(denom > 0, denom, 1), strength)
        new = new / np.exp(np.mean(np.log(new)))
        if np.max(np.abs(new - strength)) < 1e-12:
            strength = new
            break
        strength = new
    elo = 400.0 * np.log10(strength)
    elo -= elo.mean()
    return {a: float(elo[idx[a]]) for a in agents}


def bradley_terry_intervals(agents: Sequence[str], pairs: Iterable[PairResult], ratings: dict[str, float],
                            prior: float = 0.5) -> dict[str, tuple[float, float]]:
    """95 % intervals of :func:`bradley_terry` ratings (Elo points): the normal approximation from the
    Fisher information of the fit at ``ratings``, with the same prior and the same centring (the mean
    rating is 0). Deals count as independent games; an agent linked to no other gets ``(-inf, inf)``."""
    idx = {a: i for i, a in enumerate(agents)}
    k = len(agents)
    games = np.zeros((k, k))
    for p in pairs:
        i, j = idx[p.candidate], idx[p.baseline]
        if i != j:
            games[i, j] += p.wins + p.losses + p.ties + 2 * prior
            games[j, i] = games[i, j]
    scale = 400.0 / math.log(10.0)
    theta = np.array([ratings[a] for a in agents]) / scale
    p_win = 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))
    info = games * p_win * p_win.T
    hessian = np.diag(info.sum(axis=1)) - info
    cov = np.linalg.pinv(hessian)  # the pseudo-inverse: the covariance of the centred strengths
    out = {}
    linked = games.sum(axis=1) > 0
    for a, i in idx.items():
        if not linked[i] or k < 2:
            out[a] = (float("-inf"), float("inf"))
            continue
        half = Z95 * scale * math.sqrt(max(float(cov[i, i]), 0.0))
        out[a] = (ratings[a] - half, ratings[a] + half)
    return out


def crosstable_markdown(agents: Sequence[str], pairs: Sequence[PairResult], ratings: dict[str, float]) -> str:
    """Rows beat columns by the cell's chips per deal (mean ± 95 % half-width); Elo from Bradley–Terry."""
    cell: dict[tuple[str, str], str] = {}
    for p in pairs:
        a = p.advantage
        cell[(p.candidate, p.baseline)] = a.text()
        cell[(p.baseline, p.candidate)] = a.text(-1)
    order = sorted(agents, key=lambda a: -ratings.get(a, 0.0))
    head = "| agent | Elo (BT) | " + " | ".join(f"vs {b}" for b in order) + " |"
    rule = "| --- | ---: | " + " | ".join("---:" for _ in order) + " |"
    rows = [head, rule]
    for a in order:
        cells = [("—" if a == b else cell.get((a, b), "")) for b in order]
        rows.append(f"| {a} | {ratings.get(a, 0.0):+.0f} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def pair_lines(p: PairResult) -> list[str]:
    """A readable block for one pairing."""
    lines = [
        f"{p.candidate} vs {p.baseline}: {p.deals} duplicate deals, {p.games} games, {p.seconds:.1f}s "
        f"({p.backend} backend)",
        f"  advantage (chips/deal, candidate - baseline): {p.advantage}  "
        f"[alone {p.advantage_by_format['alone']}, field {p.advantage_by_format['field']}]",
        f"  {p.candidate} chips/deal: alone {p.candidate_chips['alone']}, in the field {p.candidate_chips['field']}",
        f"  {p.baseline} chips/deal: alone {p.baseline_chips['alone']}, in the field {p.baseline_chips['field']}",
        f"  deals won/lost/tied by {p.candidate}: {p.wins}/{p.losses}/{p.ties}",
    ]
    for who, name in (("candidate", p.candidate), ("baseline", p.baseline)):
        counts = {k: v for k, v in p.roles[who].items() if v}
        total = sum(counts.values()) or 1
        lines.append(f"  roles of {name}: " + ", ".join(f"{k} {v / total:.1%}" for k, v in counts.items()))
    for who, name in (("candidate", p.candidate), ("baseline", p.baseline)):
        if p.agent_counts.get(who):
            lines.append(f"  counts of {name}: " + ", ".join(f"{k} {v}" for k, v in p.agent_counts[who].items()))
    return lines


def run_tournament(agents: Sequence[str], settings: Settings, *, pairs: Sequence[tuple[str, str]] | None = None,
                   workers: int = 1, progress: bool = False, command: str = "") -> Tournament:
    """Duplicate evaluation of every pairing (all pairs of ``agents`` unless ``pairs`` is given)."""
    agents = list(dict.fromkeys(agents))
    if pairs is None:
        pairs = [(agents[i], agents[j]) for i in range(len(agents)) for j in range(i + 1, len(agents))]
    for a, b in pairs:
        for x in (a, b):
            if x not in agents:
                agents.append(x)
    if not pairs:
        raise ConfigError("nothing to evaluate: name at least two agents or a pairing")
    provenance = {a: provenance_of(a) for a in agents}  # before playing: what is played is what is recorded
    bar = RunProgress([(f"{a} vs {b}", settings.deals) for a, b in pairs], workers=workers, enabled=progress,
                      title="mauscheln eval")
    results = []
    try:
        for i, (a, b) in enumerate(pairs):
            bar.begin(i)
            results.append(evaluate_pair(a, b, settings, workers=workers, progress=bar))
            bar.end()
    finally:
        bar.close()
    ratings = bradley_terry(agents, results)
    return Tournament(agents, results, ratings, asdict(settings), command, provenance)


def provenance_of(spec: str) -> dict[str, Any]:
    """What a results file says about the agent of ``spec``: the spec that rebuilds it, its class and the hash of
    its code (:func:`agents.base.provenance`)."""
    from agents.base import agent_from_spec, canonical_spec, provenance

    return provenance(agent_from_spec(spec), canonical_spec(spec))


def merge_results(paths: Sequence[str | Path]) -> Tournament:
    """One tournament from several ``results.json`` files (their pairings must share the rules).

    Files that hold the same pairing on different deals (``--start`` chunks, or
    other seeds) are pooled deal by deal into one estimate, in deal order. When every
    pairing covers the same unbroken run of deals of one seed, the merged settings keep
    that seed, first deal and deal count, so the merged file pools again with the
    series' later chunks; otherwise they say neither (a merged file of other spans
    pools with nothing).
    """
    pooled: dict[tuple[str, str], list[PairResult]] = {}
    covered: dict[tuple[str, str], list[tuple[Any, int, int, str]]] = {}  # (seed, first, end, file) per pairing
    agents: list[str] = []
    settings = None
    commands = []
    backends = set()
    provenance: dict[str, dict[str, Any]] = {}
    seen_in: dict[str, Path] = {}
    for path in paths:
        data = load_results(path)
        for name, held in data.get("provenance", {}).items():
            if name in provenance and provenance[name] != held:
                raise ResultsFileError(f"{path} and {seen_in[name]} name different agents {name} ({held} vs "
                                       f"{provenance[name]}: its code or class changed between the runs); cannot "
                                       "merge them")
            provenance.setdefault(name, held)
            seen_in.setdefault(name, Path(path))
        s = dict(data["settings"])
        span = (s.get("seed"), int(s.get("start", 0)), int(s.get("start", 0)) + int(s.get("deals", 0)))
        backends.add(s.get("backend"))
        for key in ("deals", "seed", "start", "backend"):
            s.pop(key, None)
        if settings is None:
            settings = s
        elif s != settings:
            raise ResultsFileError(f"{path}: rules differ from the first file ({s} vs {settings}); cannot merge")
        commands.append(data.get("command", ""))
        for a in data["agents"]:
            if a not in agents:
                agents.append(a)
        for p in data["pair_results"]:
            r = p
            key = (r.candidate, r.baseline)
            for seed, lo, hi, other in covered.get(key, []):
                if seed is None or span[0] is None or (seed == span[0] and lo < span[2] and span[1] < hi):
                    raise ResultsFileError(
                        f"{path} ({_span_text(*span)}) and {other} ({_span_text(seed, lo, hi)}) both hold "
                        f"{r.candidate} vs {r.baseline}, on overlapping deals or from a merge; merging them would "
                        "count deals twice (merge the original chunks instead)"
                    )
            covered.setdefault(key, []).append((*span, str(path)))
            pooled.setdefault(key, []).append((span[1], r))
    settings = dict(settings or {})
    runs = {_unbroken(spans) for spans in covered.values()}
    if len(runs) == 1 and None not in runs:
        ((seed, first, end),) = runs
        settings.update(seed=seed, start=first, deals=end - first)
    if len(backends) == 1 and None not in backends:
        settings["backend"] = backends.pop()
    pairs = []
    for (cand, base), held in pooled.items():
        parts = [r for _, r in sorted(held, key=lambda x: x[0])]  # deal order, whatever the files' order
        if len(parts) == 1:
            pairs.append(parts[0])
            continue
        if any(p.per_deal is None for p in parts):
            raise ResultsFileError(f"{cand} vs {base} appears in several files without per-deal data; cannot pool")
        roles: dict[str, dict[str, int]] = {"candidate": {}, "baseline": {}}
        for p in parts:
            for who in roles:
                for k, v in p.roles[who].items():
                    roles[who][k] = roles[who].get(k, 0) + v
        pooled_pair = summarize(cand, base, np.concatenate([p.per_deal for p in parts]), roles,
                                sum(p.games for p in parts), sum(p.seconds for p in parts))
        for p in parts:
            add_counts(pooled_pair.agent_counts, p.agent_counts)
        pairs.append(pooled_pair)
    ratings = bradley_terry(agents, pairs)
    # chunks of one run share its command: name each distinct command once, in the order first seen
    return Tournament(agents, pairs, ratings, settings, " ; ".join(dict.fromkeys(c for c in commands if c)),
                      provenance)


def _unbroken(spans: Sequence[tuple[Any, int, int, str]]) -> tuple[Any, int, int] | None:
    """``(seed, first, end)`` when the ``(seed, first, end, file)`` spans of one pairing are one seed's unbroken
    run of deals, else None."""
    seeds = {seed for seed, *_ in spans}
    ordered = sorted(spans, key=lambda x: x[1])
    if len(seeds) != 1 or None in seeds or any(a[2] != b[1] for a, b in zip(ordered, ordered[1:])):
        return None
    return ordered[0][0], ordered[0][1], ordered[-1][2]


class ResultsFileError(ConfigError):
    """A results.json file that is missing, not JSON, or not shaped like what ``mauscheln eval --out`` writes."""


GZIP_MAGIC = b"\x1f\x8b"
"""The first two bytes of a gzip stream: a results file that starts with them is decompressed, whatever its name."""


def load_results(path: str | Path) -> dict[str, Any]:
    """Read and check one ``results.json`` (plain, or gzip-compressed such as ``results.json.gz``); its pairings
    are parsed into ``data["pair_results"]``.

    Raises :class:`ResultsFileError` naming the file and what is wrong with it.
    """
    path = Path(path)
    allowed = "allowed: a results.json (or results.json.gz) written by mauscheln eval --out"
    try:
        raw = path.read_bytes()
        if raw[:2] == GZIP_MAGIC:
            raw = gzip.decompress(raw)
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: no such file; {allowed}") from None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise ResultsFileError(f"{path} cannot be read: {exc}") from exc
    except ValueError as exc:
        raise ResultsFileError(f"{path} is not JSON ({exc}); {allowed}") from exc
    shape = "a mapping with settings (mapping), agents (list of names) and pairs (list of pairings)"
    if (not isinstance(data, dict) or not isinstance(data.get("settings"), dict)
            or not isinstance(data.get("agents"), list) or not all(isinstance(a, str) for a in data["agents"])
            or not isinstance(data.get("pairs"), list)):
        raise ResultsFileError(f"{path} is not shaped like a results file; allowed: {shape}")
    held = data.get("provenance", {})
    if not isinstance(held, dict) or not all(isinstance(k, str) and isinstance(v, dict) for k, v in held.items()):
        raise ResultsFileError(f"{path}: provenance is not a mapping of agent names to mappings; allowed: as "
                               "mauscheln eval --out writes it (or none, in older files)")
    s = data["settings"]
    for key in ("seed", "start", "deals"):
        if s.get(key) is not None and not _is_whole(s.get(key)):
            raise ResultsFileError(f"{path}: settings {key}={s.get(key)!r}; allowed: a whole number")
    pairs = []
    for i, p in enumerate(data["pairs"]):
        try:
            if not isinstance(p, dict):
                raise TypeError(f"a JSON {type(p).__name__}, not a mapping")
            pairs.append(PairResult.from_dict(p))
        except KeyError as exc:
            raise ResultsFileError(f"{path}: pairing {i} has no {exc}; allowed: pairings as eval --out writes them"
                                   ) from exc
        except (TypeError, ValueError, AttributeError) as exc:
            raise ResultsFileError(f"{path}: pairing {i} is malformed: {exc}") from exc
    data["pair_results"] = pairs
    return data


def _span_text(seed: Any, lo: int, hi: int) -> str:
    return "a merged file" if seed is None else f"seed {seed}, deals {lo}..{hi - 1}"


# ---------------------------------------------------------------------- output
CHUNKS = "chunks"
"""The folder of ``--out`` where ``--chunk`` keeps each finished chunk's results."""


def play_in_chunks(agents: Sequence[str], settings: Settings, *, pairs: Sequence[tuple[str, str]] | None,
                   chunk: int, out: Path, workers: int = 1, progress: bool = False,
                   command: str = "") -> Tournament:
    """Play a long series in chunks of ``chunk`` deals, each written to ``out/chunks/`` once finished, and pool them.

    Run again with the same command after an interruption, it plays only the chunks not yet written (a chunk
    cut short is played again from its first deal; the series' deals do not depend on the chunking). A chunk
    file of other rules, seed, agents or deals is refused, not pooled.
    """
    agents = list(dict.fromkeys(agents))
    if pairs is None:
        pairs = [(agents[i], agents[j]) for i in range(len(agents)) for j in range(i + 1, len(agents))]
    names = sorted({a for p in pairs for a in p} | set(agents))
    want = {k: v for k, v in asdict(settings).items() if k not in ("deals", "start", "backend")}
    folder = out / CHUNKS
    paths = []
    for lo in range(settings.start, settings.start + settings.deals, chunk):
        hi = min(lo + chunk, settings.start + settings.deals)
        path = folder / f"deals_{lo:07d}_{hi:07d}.json"
        if path.is_file():
            data = load_results(path)
            have = {k: v for k, v in data["settings"].items() if k not in ("deals", "start", "backend")}
            held = {(p.candidate, p.baseline) for p in data["pair_results"]}
            span = (int(data["settings"].get("start", -1)), int(data["settings"].get("start", -1))
                    + int(data["settings"].get("deals", 0)))
            if have != json.loads(strict_json(want)) or held != set(pairs) or span != (lo, hi) \
                    or sorted(data["agents"]) != names:
                raise ConfigError(f"{path} holds another series (settings {have}, pairings {sorted(held)}, deals "
                                  f"{span[0]}-{span[1] - 1}); allowed: the same command as the run that wrote it, "
                                  "or another --out")
            print(f"chunk of deals {lo}-{hi - 1}: already played ({path})", flush=True)
        else:
            t = run_tournament(agents, replace(settings, start=lo, deals=hi - lo), pairs=pairs, workers=workers,
                               progress=progress, command=command)
            folder.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, strict_json(t.to_dict(), indent=2))
            print(f"chunk of deals {lo}-{hi - 1}: written {path}", flush=True)
        paths.append(path)
    return merge_results(paths)


def check_out_dir(out: Path, overwrite: bool = False) -> None:
    """Refuse an ``--out`` that is a file or lies below one, or a directory that already holds files (unless
    ``overwrite``)."""
    for parent in out.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ConfigError(f"--out {out}: {parent} is a file; allowed: a new or empty directory")
            break
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is an existing file; allowed: a new or empty directory")
    where = out if out.is_dir() else next((p for p in out.parents if p.is_dir()), Path("."))
    if not os.access(where, os.R_OK | os.W_OK | os.X_OK):
        raise ConfigError(f"--out {out}: {where} cannot be written here; allowed: a new or empty directory in a "
                          "writable place")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise ConfigError(f"--out {out} is not empty; allowed: a new or empty directory, or --overwrite to replace "
                          "the results in it")


CROSSTABLE_LEGEND = (
    "Each cell: the row agent's mean advantage over the column agent, in chips per deal, averaged over both "
    "duplicate formats (the agent alone against a field of the other, and as the field against one), ± the "
    "half-width of its 95 % confidence interval over deals; empty: the pair was not played. Elo (BT): "
    "Bradley–Terry rating from the per-deal wins (ties half), on the Elo scale, centred on the mean."
)


def _settings_line(t: Tournament) -> str:
    s = t.settings
    deals = sorted({p.deals for p in t.pairs})
    return (f"{s.get('ruleset', '?')}, {s.get('players', '?')} players, "
            f"{'/'.join(map(str, deals)) or '?'} duplicate deals per pairing")


def write_outputs(t: Tournament, out: Path) -> list[str]:
    """results.json, results.csv, crosstable.md and chart.png (if matplotlib is installed), each written atomically."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    atomic_write_text(out / "results.json", strict_json(t.to_dict(), indent=2))
    written.append(str(out / "results.json"))

    def write_csv(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as fh:
            wr = csv.writer(fh)
            wr.writerow([
                "candidate", "baseline", "deals", "advantage", "adv_low", "adv_high", "adv_alone", "adv_field",
                "cand_chips_alone", "cand_chips_field", "base_chips_alone", "base_chips_field", "wins", "losses",
                "ties", "elo_candidate", "elo_baseline", "games", "seconds",
            ])
            for p in t.pairs:
                wr.writerow([
                    p.candidate, p.baseline, p.deals, f"{p.advantage.mean:.4f}", f"{p.advantage.low:.4f}",
                    f"{p.advantage.high:.4f}", f"{p.advantage_by_format['alone'].mean:.4f}",
                    f"{p.advantage_by_format['field'].mean:.4f}", f"{p.candidate_chips['alone'].mean:.4f}",
                    f"{p.candidate_chips['field'].mean:.4f}", f"{p.baseline_chips['alone'].mean:.4f}",
                    f"{p.baseline_chips['field'].mean:.4f}", p.wins, p.losses, p.ties,
                    f"{t.ratings.get(p.candidate, 0):.1f}", f"{t.ratings.get(p.baseline, 0):.1f}", p.games,
                    f"{p.seconds:.2f}",
                ])

    atomic_write(out / "results.csv", write_csv)
    written.append(str(out / "results.csv"))
    atomic_write_text(out / "crosstable.md", f"{_settings_line(t)}\n\n{t.crosstable_markdown()}\n\n{CROSSTABLE_LEGEND}\n")
    written.append(str(out / "crosstable.md"))
    if importlib.util.find_spec("matplotlib") is not None:
        written.append(tournament_chart(t.ratings, t.pairs, _settings_line(t), out / "chart.png"))
    return written


