"""Sphinx configuration of the mauscheln documentation site (Sphinx + MyST-Parser + Furo).

Build it with ``bash scripts/docs.sh`` (warnings are errors). Pages are Markdown (MyST); the API pages
render the package docstrings through ``sphinx.ext.autodoc`` inside ``{eval-rst}`` blocks, as Gymnasium's
site does. The optional libraries (torch, ray, OpenSpiel, ...) are mocked, so the site builds with the
``docs`` extra alone and importing a module for its docstrings runs nothing heavy.
"""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

from sphinx.ext.autodoc.mock import _MockModule

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "mauscheln"
author = "the mauscheln authors"
copyright = "the mauscheln authors"  # noqa: A001 (Sphinx's name)

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "docstrings",
    "repolinks",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}  # .rst: autosummary's generated API pages
templates_path = ["_templates"]
root_doc = "index"
exclude_patterns = [
    "_build",
    "_ext",
    "_templates",
    "results/series/**",
    # the verbatim copies of the shared specification, brought in by rulesets/rules.md and environment/api.md
    "RULES.md",
    "ENV_CONTRACT.md",
]

myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3

# The docstrings' single backticks mean code, as in the Markdown pages.
default_role = "code"

# A package's page shows what the package itself defines; the names it re-exports have their own modules' pages.
autodoc_default_options = {"members": True, "show-inheritance": True, "ignore-module-all": True}
# Only the project's own docstrings: an override without one does not borrow gymnasium's or PettingZoo's.
autodoc_inherit_docstrings = False
autodoc_member_order = "bysource"
# In the signature: "description" turns a short name such as ``Rules`` into an ambiguous cross-reference.
autodoc_typehints = "signature"
autodoc_typehints_format = "short"
autodoc_preserve_defaults = True
# Optional libraries, mocked whether or not they are installed: the pages are the same everywhere and
# importing a module for its docstrings never loads torch or starts ray.
autodoc_mock_imports = [
    "torch", "tensordict", "torchrl", "tianshou", "ray", "open_spiel",
    "stable_baselines3", "sb3_contrib", "safetensors", "onnxruntime", "onnx", "onnxscript", "matplotlib",
    "tensorboard", "tyro", "tqdm", "selenium", "pexpect", "httpx", "starlette", "uvicorn", "anyio",
]

# OpenSpiel's module-level constants are read at import (``int(pyspiel.PlayerId.CHANCE)``): the mocked
# module carries the two it reads.
_pyspiel = _MockModule("pyspiel")
_pyspiel.PlayerId = SimpleNamespace(CHANCE=-1, TERMINAL=-4)
sys.modules["pyspiel"] = _pyspiel

autosummary_generate = True
# ``python -m mauscheln`` runs the command when imported: autosummary walks past it as a mocked module.
autosummary_mock_imports = [*autodoc_mock_imports, "mauscheln.__main__"]
autosummary_ignore_module_all = True

html_theme = "furo"
html_title = "mauscheln"
html_static_path: list[str] = []
html_theme_options = {
    "source_repository": "",
    "navigation_with_keys": True,
}
