"""Progress of a run of duplicate pairings, with the time left, on stderr.

A run (``mauscheln eval``, ``mauscheln bench run``) plays its pairings one after
another, each over a number of deals. :class:`RunProgress` counts the deals
done in the pairing in play and overall, the time elapsed, and estimates the
time left: the pairing in play at its own pace so far (as of its last deals
done, less the time since), and a pairing not yet begun by its ``cost`` (seconds
of one process per deal, e.g. timed on one deal before the run), scaled by how
the pairings played so far compared with their costs once those add up to
:data:`SCALE_AFTER`, else at the pace of the deals played so far. Pairings
differ in cost by orders of magnitude (``random`` against ``pimc``), so the
deals left alone would mislead.

Where stderr is a terminal and tqdm is installed it shows one bar over every
deal of the run; otherwise it writes a line every :data:`EVERY` seconds (none for
a run shorter than that) and one when the run ends.
"""

from __future__ import annotations

import importlib.util
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any, TextIO

EVERY = 5.0
"""Seconds between progress lines where no bar is shown."""
SCALE_AFTER = 30.0
"""Seconds of cost the pairings played so far must add up to before their pace rescales the costs of the later
ones (a short pairing's time is mostly starting its workers)."""


def duration(seconds: float) -> str:
    """``1h02m03s``, ``4m05s`` or ``6s``."""
    s = max(0, int(round(seconds)))
    h, rest = divmod(s, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m{s:02d}s"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


class RunProgress:
    """Deals done per pairing and overall, elapsed time and the time left (see the module docstring).

    ``pairings``: ``(label, deals)`` in the order they are played; ``costs``: per pairing, seconds per deal of
    one process, or None where unknown; ``workers``: processes that share a pairing's deals. ``clock`` and
    ``stream`` can be replaced (tests); ``bar``: None chooses a tqdm bar where ``stream`` is a terminal and tqdm
    is installed.
    """

    def __init__(self, pairings: Sequence[tuple[str, int]], *, costs: Sequence[float | None] | None = None,
                 workers: int = 1, enabled: bool = True, title: str = "", every: float | None = None,
                 clock: Callable[[], float] = time.monotonic, stream: TextIO | None = None,
                 bar: bool | None = None) -> None:
        self.labels = [label for label, _ in pairings]
        self.totals = [int(n) for _, n in pairings]
        self.costs = list(costs) if costs is not None else [None] * len(self.totals)
        if len(self.costs) != len(self.totals):
            raise ValueError(f"{len(self.costs)} costs for {len(self.totals)} pairings; allowed: one per pairing")
        self.workers = max(1, int(workers))
        self.enabled = enabled
        self.title = title
        self.every = EVERY if every is None else every
        self.clock = clock
        self.stream = sys.stderr if stream is None else stream
        self.done = [0] * len(self.totals)
        self.seconds = [0.0] * len(self.totals)
        self.current: int | None = None
        self.start = clock()
        self._began = self.start
        self._last = self.start
        self._updated = self.start
        self._bar: Any = None
        if bar is None:
            bar = enabled and importlib.util.find_spec("tqdm") is not None and _is_tty(self.stream)
        if enabled and bar:
            from tqdm import tqdm

            self._bar = tqdm(total=sum(self.totals), unit="deal", file=self.stream, leave=False,
                             desc=f"{title}:" if title else None,
                             bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} deals{postfix}")

    # ------------------------------------------------------------------ counting
    def begin(self, index: int) -> None:
        """Pairing ``index`` starts."""
        if not 0 <= index < len(self.totals):
            raise ValueError(f"pairing {index} is not allowed; allowed: 0..{len(self.totals) - 1}")
        self.current = index
        self._began = self.clock()
        self._show(force=False)

    def update(self, deals: int) -> None:
        """``deals`` more deals of the pairing in play are done."""
        i = self.current
        if i is None:
            raise ValueError("call begin(index) before update()")
        self.done[i] += deals
        self._updated = self.clock()
        self.seconds[i] = self._updated - self._began
        if self._bar is not None:
            self._bar.update(deals)
        self._show(force=False)

    def tick(self) -> None:
        """Time passes with no deal done (a line is due every few seconds all the same)."""
        self._show(force=False)

    def end(self) -> None:
        """The pairing in play is done (also when some of its deals were skipped)."""
        i = self.current
        if i is not None:
            self.seconds[i] = self.clock() - self._began
            self.current = None

    def close(self) -> None:
        """The run is over: the bar goes, or a last line says how long it took (if any line was written)."""
        self.end()
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self.enabled and self._last > self.start:
            self._write(f"{self._prefix()}done: {sum(self.done)} deals in {duration(self.clock() - self.start)}")

    # ------------------------------------------------------------------ the estimate
    def left(self) -> tuple[float | None, float | None]:
        """Seconds left in the pairing in play and in the whole run (None while nothing tells yet)."""
        now = self.clock()
        i = self.current
        pairing = None
        if i is not None and self.done[i]:
            # the pace as of the last deals done, less the time since (the estimate falls between results)
            pace = self.seconds[i] / self.done[i]
            pairing = max(0.0, pace * (self.totals[i] - self.done[i]) - (now - self._began - self.seconds[i]))
        # how fast this machine plays against the costs known before the run: measured over pairings with a cost
        spent = sum(self.seconds[j] for j in range(len(self.totals)) if self.costs[j] and self.done[j])
        planned = sum(self.done[j] * self.costs[j] / self.workers for j in range(len(self.totals))
                      if self.costs[j] and self.done[j])
        scale = spent / planned if planned >= SCALE_AFTER and spent > 0 else 1.0
        played = sum(self.done)
        pace_all = (self._updated - self.start) / played if played else None
        total = pairing if pairing is not None else 0.0
        for j in range(len(self.totals)):
            if j == i and pairing is not None:
                continue
            remaining = self.totals[j] - self.done[j]
            if remaining <= 0 or (i is not None and j < i):
                continue
            if self.costs[j]:
                total += remaining * self.costs[j] / self.workers * scale
            elif pace_all is not None:
                total += remaining * pace_all
            else:
                return pairing, None
        return pairing, total

    def line(self, overall: bool = True) -> str:
        """The status line: the pairing in play, deals overall (unless a bar shows them), elapsed, time left; a run
        of one pairing names it once and counts its deals once."""
        now = self.clock()
        parts = []
        i = self.current
        single = len(self.totals) == 1  # the pairing is the run: its label once, its deals once, one ETA
        if single:
            if overall:
                label = "" if self.labels[0] == self.title else f"{self.labels[0]}: "
                parts.append(f"{label}{self.done[0]}/{self.totals[0]} deals")
        else:
            if i is not None:
                parts.append(f"pairing {i + 1}/{len(self.totals)} {self.labels[i]}: "
                             f"{self.done[i]}/{self.totals[i]} deals")
            if overall:
                parts.append(f"overall {sum(self.done)}/{sum(self.totals)} deals")
        parts.append(f"elapsed {duration(now - self.start)}")
        pairing, total = self.left()
        eta = []
        if pairing is not None and not single:
            eta.append(f"pairing {duration(pairing)}")
        left = "?" if total is None else duration(total)
        eta.append(left if single else f"overall {left}")
        parts.append("ETA " + ", ".join(eta))
        return (self._prefix() if overall else "") + " | ".join(parts)

    # ------------------------------------------------------------------ output
    def _prefix(self) -> str:
        return f"{self.title}: " if self.title else ""

    def _show(self, force: bool) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.set_postfix_str(self.line(overall=False), refresh=True)
            return
        now = self.clock()
        if force or now - self._last >= self.every:
            self._last = now
            self._write(self.line())

    def _write(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


def _is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
