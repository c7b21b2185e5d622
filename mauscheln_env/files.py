"""Atomic file writes (a temporary file beside the target, then one rename) and strict JSON text.

A reader (or a run resumed after a crash) sees the old file or the new one,
never half of one; the temporary file is removed when the write fails. Every
JSON file and page the project writes goes through :func:`strict_json`.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mauscheln_env.errors import MauschelnError


def atomic_write(path: str | Path, write: Callable[[Path], object], mode: int = 0o644) -> Path:
    """Call ``write(tmp)`` to fill a temporary file beside ``path``, then rename it over ``path``."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, mode)  # mkstemp makes the file private; results and policies are meant to be shared
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def finite_or_none(value: Any) -> Any:
    """``value`` with every float that is not finite (NaN, ±infinity: an interval that one deal leaves
    undefined, a mean of nothing) replaced by None, through dicts, lists and tuples; the rest unchanged."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value


def strict_json(value: Any, **kwargs: Any) -> str:
    """``json.dumps`` for files and pages: strict JSON (RFC 8259), which browsers and most languages parse.

    Python writes NaN and infinity as the bare words ``NaN``/``Infinity`` by default, which no strict parser
    (``JSON.parse`` among them) accepts; here they are written as ``null`` (:func:`finite_or_none`), and
    ``allow_nan=False`` turns any that still reached the encoder (from a ``default=`` hook) into an error
    instead of a bad file.
    Readers take ``null`` for an undefined number; Python's ``json`` still reads files with the bare words.
    """
    return json.dumps(finite_or_none(value), allow_nan=False, **kwargs)


def check_output_path(path: str | Path, flag: str, *, folder: bool = False) -> Path:
    """``path`` as the output of a command, refused before any work when nothing can be written there as asked:
    empty text, a folder where a file is wanted (``folder=False``) or a file where a folder is, or a path below an
    existing file. Raises :class:`~mauscheln_env.errors.MauschelnError` naming ``flag``. Whether an existing
    output may be replaced is each command's own rule."""
    if not str(path).strip():
        raise MauschelnError(f"{flag} is empty; allowed: a {'folder' if folder else 'file'} path")
    path = Path(path)
    if path.exists():
        if folder and not path.is_dir():
            raise MauschelnError(f"{flag} {path} is a file; allowed: a folder")
        if not folder and path.is_dir():
            raise MauschelnError(f"{flag} {path} is a folder; allowed: a file path")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise MauschelnError(f"{flag} {path}: {parent} is a file, not a folder; allowed: a path whose "
                                     "folders are folders")
            break
    where = path if folder and path.is_dir() else next((p for p in path.parents if p.is_dir()), Path("."))
    if not os.access(where, os.W_OK | os.X_OK):
        raise MauschelnError(f"{flag} {path}: the folder {where} cannot be written here; allowed: a path in a "
                             "writable folder")
    return path
