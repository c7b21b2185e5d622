"""Compiled builds of the pure-Python hot paths: the same modules through Cython, the same decisions, faster.

The search (``pimc``), the scripted agents' card model and the reference engine are plain Python, and the
benchmark's searching agents spend their time there. ``mauscheln compile build`` compiles the
modules of :data:`MODULES` with Cython (the ``compiled`` extra; a C compiler) into ``.compiled/`` beside the
packages, and records the SHA-256 of each source it compiled. :func:`install` (run by the packages on import)
then puts a finder first on ``sys.meta_path`` that loads a listed module from its build only while the source
on disk still has the recorded hash: an edited module loads from its ``.py`` until the next build, so a stale
build never runs. Without a build, or with ``MAUSCHELN_PURE=1`` in the environment, everything is pure Python.
Importing this module installs the finder; ``mauscheln_env`` imports it first, and ``agents`` imports
``mauscheln_env`` first.

The build keeps Python's semantics (:data:`DIRECTIVES`): no C types are inferred from literals or taken from
annotations, so every value stays the Python object it is in the interpreter (an ``int``-annotated argument
that is passed ``1.5`` stays ``1.5``) and every float operation rounds as it does there. Hence the same seeds
give the same games, compiled or not; ``tests/test_compiled.py`` plays every ruleset's scripted agents and
``pimc`` both ways and compares the traces.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mauscheln_env.files import atomic_write_text

MODULES = (
    "agents.search.pimc",
    "agents.base",
    "agents.knowledge",
    "agents.views",
    "agents.scripted.common",
    "agents.scripted.baselines",
    "agents.scripted.mauscheln",
    "agents.scripted.classic",
    "agents.scripted.mousel",
    "agents.scripted.mouche",
    "agents.scripted.muschka",
    "mauscheln_env.tricks",
    "mauscheln_env.engine",
    "mauscheln_env.observation",
    "mauscheln_env.rulesets.base",
    "mauscheln_env.rulesets.mauscheln",
    "mauscheln_env.rulesets.mauscheln_classic",
    "mauscheln_env.rulesets.mousel",
    "mauscheln_env.rulesets.mouche",
    "mauscheln_env.rulesets.muschka",
)
"""The modules that are compiled: where the searching and scripted agents spend their time (the search, the
scripted agents, the seat's view, the reference engine and its rule objects)."""

CFLAGS = ["-O2", "-g0"]
"""The C compiler's flags after Python's own (the last wins): optimised, without debug information, which
halves the build's time against Python's ``-g -O3`` for the same speed."""

DIRECTIVES = {"language_level": 3, "binding": True, "infer_types": False, "annotation_typing": False}
"""Cython's directives: Python 3 semantics, functions that introspect as Python's (signatures, docstrings),
and no C types inferred or read from annotations, so that the compiled code computes exactly what the
interpreter does."""

PURE_ENV = "MAUSCHELN_PURE"
"""Set to ``1`` to load every module from its source, whatever is built."""

ROOT = Path(__file__).resolve().parent.parent
"""The folder that holds the packages (``mauscheln_env``, ``agents``)."""


def _pure() -> bool:
    return os.environ.get(PURE_ENV, "").strip().lower() in ("1", "true", "yes")


class CompiledError(ValueError):
    """A build that cannot be made as asked (no Cython, an unknown module, a compiler error)."""


def build_dir(root: Path = ROOT) -> Path:
    """Where the builds for this interpreter and platform live (one folder per extension suffix)."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return root / ".compiled" / suffix.strip(".").rsplit(".", 1)[0]


def source_of(module: str, root: Path = ROOT) -> Path:
    return root.joinpath(*module.split(".")).with_suffix(".py")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """``{module: {"sha256": source hash at build time, "file": the extension, relative to the build dir}}``;
    empty when nothing is built or the manifest cannot be read (then nothing loads compiled)."""
    try:
        data = json.loads((build_dir(root) / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {m: e for m, e in data.items() if isinstance(e, dict) and isinstance(e.get("sha256"), str)
            and isinstance(e.get("file"), str)}


def status(root: Path = ROOT) -> dict[str, str]:
    """Each module of :data:`MODULES`: ``compiled`` (its build matches the source), ``stale`` (the source
    changed since the build: it loads from the source) or ``not built``."""
    manifest = read_manifest(root)
    out = {}
    for module in MODULES:
        entry = manifest.get(module)
        if entry is None or not (build_dir(root) / entry["file"]).is_file():
            out[module] = "not built"
        elif entry["sha256"] != _sha256(source_of(module, root)):
            out[module] = "stale"
        else:
            out[module] = "compiled"
    return out


class CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds those of ``modules`` whose build's source still has the hash recorded at build time (a module
    that has left :data:`MODULES` since a build loads from its source)."""

    def __init__(self, root: Path = ROOT, modules: Sequence[str] = MODULES) -> None:
        self.root = self.mauscheln_root = root
        self.manifest = {m: e for m, e in read_manifest(root).items() if m in modules}

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: object = None) -> importlib.machinery.ModuleSpec | None:
        entry = self.manifest.get(fullname)
        if entry is None:
            return None
        source = source_of(fullname, self.root)
        binary = build_dir(self.root) / entry["file"]
        try:
            if not binary.is_file() or _sha256(source) != entry["sha256"]:
                return None
        except OSError:
            return None
        loader = importlib.machinery.ExtensionFileLoader(fullname, str(binary))
        return importlib.util.spec_from_file_location(fullname, binary, loader=loader)


def install(root: Path = ROOT, modules: Sequence[str] = MODULES) -> CompiledFinder | None:
    """Put the finder of ``root``'s build first on ``sys.meta_path`` (once); None when nothing is built or
    ``MAUSCHELN_PURE`` is set."""
    if _pure():
        return None
    for finder in sys.meta_path:
        if getattr(finder, "mauscheln_root", None) == root:  # also one installed by another copy of this module
            return finder
    finder = CompiledFinder(root, modules)
    if not finder.manifest:
        return None
    sys.meta_path.insert(0, finder)
    return finder


def loaded() -> list[str]:
    """The modules of :data:`MODULES` imported in this process from a compiled build."""
    return [m for m in MODULES if m in sys.modules
            and not str(getattr(sys.modules[m], "__file__", "") or "").endswith(".py")]


def build(modules: Sequence[str] = MODULES, root: Path = ROOT, jobs: int = 2, quiet: bool = True,
          force: bool = False) -> Path:
    """Compile those of ``modules`` whose build is missing or stale (every one with ``force``) into
    :func:`build_dir` and write its manifest (atomically, after every module is built: a failed build leaves
    the previous one). Returns the build folder."""
    try:
        from Cython.Build import cythonize
        from setuptools import Distribution
    except ImportError as exc:
        raise CompiledError("building needs Cython and setuptools; allowed: pip install -e '.[compiled]' "
                            f"(and a C compiler) first ({exc})") from exc
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise CompiledError(f"jobs={jobs!r} is not allowed; allowed: a whole number >= 1")
    unknown = sorted(set(modules) - set(MODULES))
    if unknown:
        raise CompiledError(f"cannot compile {', '.join(unknown)}; allowed: {', '.join(MODULES)}")
    out = build_dir(root)
    current = status(root)
    modules = [m for m in modules if force or current[m] != "compiled"]
    if not modules:
        return out
    out.mkdir(parents=True, exist_ok=True)
    hashes = {m: _sha256(source_of(m, root)) for m in modules}
    # built beside the build folder, then moved in: a process that has the old files loaded keeps them intact
    with tempfile.TemporaryDirectory(prefix="tmp-", dir=out.parent) as tmp:
        from setuptools import Extension

        exts = [Extension(m, [str(source_of(m, root).relative_to(root))], extra_compile_args=CFLAGS) for m in modules]
        cwd = os.getcwd()
        os.chdir(root)  # the extensions' sources are named relative to the packages' folder
        try:
            ext_modules = cythonize(exts, compiler_directives=DIRECTIVES, build_dir=str(Path(tmp) / "c"),
                                    quiet=quiet, nthreads=0, force=True)
            dist = Distribution({"ext_modules": ext_modules, "script_name": "mauscheln_env.compiled"})
            cmd = dist.get_command_obj("build_ext")
            cmd.build_lib = str(Path(tmp) / "lib")
            cmd.build_temp = str(Path(tmp) / "o")
            cmd.parallel = jobs
            cmd.inplace = False
            dist.verbose = 0 if quiet else 1
            cmd.ensure_finalized()
            cmd.run()
        except Exception as exc:  # a compiler or Cython error: keep the previous build
            raise CompiledError(f"the build failed: {exc}; allowed: a C compiler and Cython>=3 (pure Python "
                                "runs without a build)") from exc
        finally:
            os.chdir(cwd)
        manifest = read_manifest(root)
        for ext in ext_modules:
            built = Path(cmd.get_ext_fullpath(ext.name)).resolve()
            rel = built.relative_to((Path(tmp) / "lib").resolve())
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.replace(built, out / rel)
            manifest[ext.name] = {"sha256": hashes[ext.name], "file": str(rel)}
    atomic_write_text(out / "manifest.json", json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``mauscheln compile build`` (then the status) or ``mauscheln compile status``."""
    from mauscheln_env.ruleargs import ArgumentParser

    p = ArgumentParser(prog="mauscheln compile", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="compile the modules (Cython and a C compiler needed)")
    b.add_argument("--jobs", type=int, default=2, help="parallel compiler processes")
    b.add_argument("--force", action="store_true", help="compile every module again (default: the stale ones)")
    sub.add_parser("status", help="which modules load compiled")
    args = p.parse_args(argv)
    if args.command == "status":
        if _pure():
            print(f"{PURE_ENV} is set: every module loads from its source, whatever is built")
        for module, state in status().items():
            print(f"{module}: {state}")
        return 0
    if args.jobs < 1:
        p.error(f"--jobs {args.jobs} is not allowed; allowed: a whole number >= 1")
    try:
        out = build(jobs=args.jobs, force=args.force)
    except CompiledError as exc:
        print(f"mauscheln compile: {exc}", file=sys.stderr)
        return 2
    print(f"the compiled build is current in {out} ({len(MODULES)} modules)")
    return 0


install()
