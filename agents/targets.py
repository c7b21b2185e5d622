"""Agents named by where their code lives: a file, a module, or an installed package's entry point.

An agent spec (:func:`agents.base.parse_agent_spec`) names an agent in one of these forms:

=====================================  ===========================================================
``NAME`` / ``NAME:k=v,...``            a built-in or registered name (:data:`agents.base.AGENTS`,
                                       :func:`agents.base.register_agent`), or the name of an entry
                                       point of the group ``mauscheln.agents``
``path/to/file.py:Name[:k=v,...]``     class or factory ``Name`` of a Python file
``package.module:Name[:k=v,...]``      class or factory ``Name`` of an importable module
``module:Name[:k=v,...]``              the same for a top-level module (``Name`` has no ``=``)
=====================================  ===========================================================

How a spec is read: its first part (up to the first ``:``) is a **file** when it contains ``/`` or
``\\`` or ends with ``.py``; a **module** when it contains ``.``; otherwise a **name** when it is a
known name or what follows it is ``key=value`` parameters, and a top-level **module** when what
follows is a Python name. The parameters of a file or module spec come after a further ``:``. A path
that holds ``:`` (a Windows drive letter, ``dir:x/agent.py``) cannot be told from the separator and
is refused with an error that says so. A file spec is kept with its absolute path (:func:`split`), so
a worker process whose working directory or ``sys.path`` differ loads the same file.

A file is loaded as a module of its own (named after the file and a hash of its path, never put on
``sys.path``), once per process and again when the file changes. Entry points: a package declares
``[project.entry-points."mauscheln.agents"] mybot = "mypkg.bots:MyBot"``, and ``mybot`` is then an agent
name like ``expert`` (a built-in or registered name of the same spelling wins).

What played is recorded by :func:`provenance`: the spec, the class (``module:qualname``; for a class
of a spec'd file, ``path:qualname``) and the SHA-256 of the code (the file of a file spec, the module's
file of a module spec or entry point; none for the built-in agents, whose code is the project's).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.errors import AgentError
from mauscheln_env.errors import MauschelnError

ENTRY_POINT_GROUP = "mauscheln.agents"
"""The entry-point group through which an installed package names its agents."""
FORMS = ("NAME[:key=value,...] (a known agent), path/to/file.py:Name[:key=value,...] or "
         "package.module:Name[:key=value,...]")
"""The spec forms, for error messages."""


def _error(text: str) -> MauschelnError:
    return AgentError(text)


# ---------------------------------------------------------------------- reading a spec
def split(text: str, known: Callable[[str], bool]) -> tuple[str, str, str]:
    """``(kind, target, params)`` of spec ``text``: kind ``name``, ``file`` or ``module``; target the name, or
    ``/absolute/path.py:Name`` / ``package.module:Name``; params the text after it (``key=value,...``, maybe
    empty). ``known(word)`` says whether a plain word is an agent name. Raises AgentError for a spec of no form."""
    head, _, rest = text.partition(":")
    if _looks_like_path(head):
        kind = "file"
    elif "." in head:
        kind = "module"
    elif not rest:
        return "name", head, ""
    else:
        first = rest.partition(":")[0]
        if "=" in first or known(head) or not first:
            return "name", head, rest
        kind = "module"  # module:Name with a top-level module
    attr, _, params = rest.partition(":")
    if not attr:
        what = "a file" if kind == "file" else "a module"
        raise _error(f"agent spec {text!r} names {what} but no class or function in it; allowed: {FORMS}")
    if not all(part.isidentifier() for part in attr.split(".")):
        if _looks_like_path(attr) or _looks_like_path(head + ":" + attr):
            raise _error(f"agent spec {text!r}: a path that holds ':' (such as a Windows drive letter) cannot be "
                         "named in a spec, ':' separates its parts; allowed: a path without ':', e.g. relative "
                         "to the working directory")
        raise _error(f"agent spec {text!r}: {attr!r} is not a Python name; allowed: {FORMS}")
    if kind == "file":
        if not head.endswith(".py"):
            raise _error(f"agent spec {text!r}: {head!r} is not a .py file; allowed: path/to/file.py:Name, "
                         "or package.module:Name with dots")
        path = os.path.abspath(os.path.expanduser(head))
        if ":" in path:
            raise _error(f"agent spec {text!r}: the file's absolute path {path!r} holds ':', which separates the "
                         "parts of a spec; allowed: a file whose path has no ':'")
        return kind, f"{path}:{attr}", params
    if not all(part.isidentifier() for part in head.split(".")):
        raise _error(f"agent spec {text!r}: {head!r} is not a module path (dotted Python names); allowed: {FORMS}")
    return kind, f"{head}:{attr}", params


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.endswith(".py")


def is_target(name: str) -> bool:
    """Whether a name as :func:`split` returns it is a file or module target (else a registry name)."""
    return ":" in name


def display(text: str, known: Callable[[str], bool]) -> str:
    """A spec as people read it: a file spec with the file's name instead of its path."""
    try:
        kind, target, params = split(text, known)
    except MauschelnError:
        return text
    if kind != "file":
        return text
    path, _, attr = target.rpartition(":")
    return f"{os.path.basename(path)}:{attr}" + (f":{params}" if params else "")


# ---------------------------------------------------------------------- loading
_FILES: dict[str, tuple[tuple[int, int], types.ModuleType]] = {}
"""Loaded files by absolute path: ``((mtime_ns, size), module)``."""
_FILE_OF_MODULE: dict[str, str] = {}
"""The path of each module loaded from a spec'd file, by module name."""


def load(target: str, base: type, names: Callable[[], list[str]]) -> Callable[..., Any]:
    """The class or factory a file or module target names, checked to be a subclass of ``base``
    (:class:`agents.base.Agent`, passed in: this module is below agents.base) or a function; raises
    AgentError saying what was looked for (``names()``: the known agent names, for the message)."""
    where, _, attr = target.rpartition(":")
    module = _load_file(where) if where.endswith(".py") else _import(where, target, names)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            found = _candidates(module, base)
            raise _error(f"agent {target!r}: {where} has no {attr!r}; allowed: "
                         + (f"one of its agents: {', '.join(found)}" if found else
                            "the name of a class derived from agents.base.Agent, or of a function returning one "
                            "(there is none in it)"))
        obj = getattr(obj, part)
    if isinstance(obj, type):
        if not issubclass(obj, base):
            raise _error(f"agent {target!r}: {attr} is a class but not derived from agents.base.Agent; allowed: a "
                         "subclass of Agent, or a function that returns an Agent")
    elif not callable(obj):
        raise _error(f"agent {target!r}: {attr} is an object of type {type(obj).__name__}, not a class or function; "
                     "allowed: a subclass of agents.base.Agent, or a function that returns an Agent")
    return obj


def _candidates(module: types.ModuleType, base: type) -> list[str]:
    return sorted(k for k, v in vars(module).items()
                  if isinstance(v, type) and issubclass(v, base) and v is not base
                  and v.__module__ == module.__name__ and not getattr(v, "__abstractmethods__", None))


def _load_file(path: str) -> types.ModuleType:
    if not os.path.isfile(path):
        raise _error(f"agent file {path} does not exist" + (" (a folder)" if os.path.isdir(path) else "")
                     + "; allowed: path/to/file.py:Name with an existing Python file")
    info = os.stat(path)
    stamp = (info.st_mtime_ns, info.st_size)
    held = _FILES.get(path)
    if held is not None and held[0] == stamp:
        return held[1]
    stem = "".join(ch if ch.isalnum() else "_" for ch in Path(path).stem)
    name = f"_agent_file_{stem}_{hashlib.sha256(path.encode()).hexdigest()[:10]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise _error(f"agent file {path} cannot be loaded as Python; allowed: a .py file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses, pickle and typing look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise _error(f"agent file {path} cannot be loaded: {_one_line(exc)}") from exc
    _FILES[path] = (stamp, module)
    _FILE_OF_MODULE[name] = path
    return module


def _import(module: str, target: str, names: Callable[[], list[str]]) -> types.ModuleType:
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise _error(f"agent {target!r}: no module {module!r} can be imported here; allowed: a known agent "
                         f"name ({', '.join(names())}), a module on the Python path (PYTHONPATH), or "
                         "path/to/file.py:Name") from exc
        raise _error(f"agent {target!r}: importing {module} failed: {_one_line(exc)}") from exc
    except Exception as exc:  # noqa: BLE001 - the user's module failing to import is the user's error
        raise _error(f"agent {target!r}: importing {module} failed: {_one_line(exc)}") from exc


def _one_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())


# ---------------------------------------------------------------------- entry points
def entry_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed entry points of :data:`ENTRY_POINT_GROUP` by name (the first of a name, in the order the
    distributions are found; names that are not plain words are left out)."""
    out: dict[str, importlib.metadata.EntryPoint] = {}
    for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name and not any(ch in ep.name for ch in " :,=()./\\") and ep.name not in out:
            out[ep.name] = ep
    return out


def entry_point_doc(ep: importlib.metadata.EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return f"{ep.value} (entry point of the installed package {dist.name})" if dist else f"{ep.value} (entry point)"


def load_entry_point(name: str, ep: importlib.metadata.EntryPoint, base: type,
                     names: Callable[[], list[str]]) -> Callable[..., Any]:
    """The class or factory an entry point names, checked as :func:`load` checks a module target."""
    module, _, attr = ep.value.partition(":")
    if not attr:
        raise _error(f"agent {name!r}: its entry point {ep.value!r} names no class; allowed: module:Name")
    return load(f"{module.strip()}:{attr.strip()}", base, names)


# ---------------------------------------------------------------------- provenance
def file_sha256(path: str | Path) -> str:
    """``sha256:<hex>`` of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def code_file(name: str, builtin: Callable[[str], bool]) -> str | None:
    """The file of the code an agent built as ``name`` (:attr:`agents.base.Agent.built_as`) runs: the file of
    a file target, the module's file of a module target or entry point; None for the built-in and registered
    agents."""
    if is_target(name):
        where = name.rpartition(":")[0]
        if where.endswith(".py"):
            return where
        return _module_file(where)
    if builtin(name):
        return None
    ep = entry_points().get(name)
    return None if ep is None else _module_file(ep.value.partition(":")[0].strip())


def _module_file(module: str) -> str | None:
    mod = sys.modules.get(module)
    path = getattr(mod, "__file__", None)
    if path is None:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            return None
        path = spec.origin if spec is not None else None
    return path if path and os.path.isfile(path) else None


def code_hash(name: str, builtin: Callable[[str], bool]) -> str | None:
    """``sha256:<hex>`` of :func:`code_file`, or None."""
    path = code_file(name, builtin)
    return None if path is None else file_sha256(path)


def class_name(cls: type) -> str:
    """``module:qualname`` of a class; for a class of a spec'd file, ``/path/to/file.py:qualname``."""
    module = _FILE_OF_MODULE.get(cls.__module__, cls.__module__)
    return f"{module}:{cls.__qualname__}"


def provenance(agent: Any, spec: str | None, builtin: Callable[[str], bool]) -> dict[str, Any]:
    """What a result record says about an agent: ``spec`` (the text that rebuilds it, files by absolute path),
    ``class`` and ``source`` (:func:`code_hash`, None for the project's own agents)."""
    built = getattr(agent, "built_as", None)
    return {"spec": spec if spec is not None else agent.spec_text(),
            "class": class_name(type(agent)),
            "source": None if built is None else code_hash(built, builtin)}


def stamp(name: str) -> tuple[int, int] | None:
    """``(mtime_ns, size)`` of a file target's file (what a cache of agents built from it keys on), else None."""
    if not is_target(name):
        return None
    where = name.rpartition(":")[0]
    if not where.endswith(".py") or not os.path.isfile(where):
        return None
    info = os.stat(where)
    return info.st_mtime_ns, info.st_size
