"""The project's docstring dialect, turned into reST before autodoc parses it.

The docstrings are reST (``:class:`...``` roles, ``literal`` text, bullet lists) written to read well as
plain text too, so some use Markdown's forms: ``## Heading`` lines, pipe tables, fenced code, and a
block indented four spaces under a paragraph for commands. This hook rewrites those as a rubric, a
``list-table``, a ``code-block`` and a literal block, and escapes the ``*`` of a glob (``rules/*.yaml``)
and the ``|`` of a size (``|D|``) outside literals. Single backticks are code through ``default_role``
in conf.py. The module docstring of :mod:`mauscheln_env.env` is the environment page itself
(``docs/environment/index.md``), so its API entry links there instead.

Annotations: a class a module imports only for type checking (``if TYPE_CHECKING: from x import Args``) cannot
be resolved at import, so autodoc writes the bare name, an ambiguous reference where two modules define a class
of that name; a reference from such a module to such a name points at the class its ``TYPE_CHECKING`` import
names.
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import sys

from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

PAGE_DOCSTRINGS = {
    "mauscheln_env.env": "The module docstring is the environment page: :doc:`/environment/index`.",
}
_RULE = re.compile(r"^\|(\s*:?-{3,}:?\s*\|)+\s*$")
_LITERAL = re.compile(r"(``.+?``|:\w+(?::\w+)?:`[^`]+`|`[^`]+`)")
_LIST = re.compile(r"^\s*([*+-]|\d+[.)]|#\.)\s")


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:-1] if inner.endswith("|") else inner[1:]
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", inner)]


def _table(rows: list[str], indent: str) -> list[str]:
    header, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
    out = [f"{indent}.. list-table::", f"{indent}   :header-rows: 1", ""]
    for row in [header, *body]:
        row = (row + [""] * len(header))[: len(header)]
        for i, cell in enumerate(row):
            out.append(f"{indent}   {'* -' if i == 0 else '  -'} {_escape(cell)}".rstrip())
    return out + [""]


def _escape(text: str) -> str:
    """Escape a glob's ``*`` and a size's ``|x|`` in the parts of ``text`` outside literals and roles."""
    parts = _LITERAL.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = re.sub(r"(?<=[/\w])\*(?=[./\w])|(?<=/)\*", r"\\*", parts[i])
        parts[i] = re.sub(r"(?<![|\w\\])\|([^|\s][^|]*?)\|(?![|\w])", r"\\|\1\\|", parts[i])
    return "".join(parts)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def convert(lines: list[str]) -> list[str]:
    """Rewrite the Markdown forms of one docstring as reST."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        indent = line[: _indent(line)]
        if re.match(r"#{1,6} ", stripped):
            out += [f"{indent}.. rubric:: {stripped.lstrip('#').strip()}", ""]
            i += 1
            continue
        if stripped.startswith("|") and i + 1 < len(lines) and _RULE.match(lines[i + 1].strip()):
            j = i
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                j += 1
            if out and out[-1].strip():
                out.append("")
            out += _table(lines[i:j], indent)
            i = j
            continue
        if stripped.startswith("```"):
            lang = stripped[3:].strip() or "text"
            j = i + 1
            while j < len(lines) and not lines[j].lstrip().startswith("```"):
                j += 1
            if out and out[-1].strip():
                out.append("")
            out += [f"{indent}.. code-block:: {lang}", ""]
            out += [f"{indent}   {b[len(indent):] if b.startswith(indent) else b}".rstrip() for b in lines[i + 1:j]]
            out.append("")
            i = j + 1
            continue
        if stripped and not line.startswith(" ") and not _LIST.match(line) and not stripped.startswith(".."):
            # a top-level paragraph: a block indented by four or more after it is code (Markdown's rule)
            j = i
            while j < len(lines) and lines[j].strip():
                j += 1
            para = lines[i:j]
            k = j
            while k < len(lines) and not lines[k].strip():
                k += 1
            out += [_escape(p) for p in para]
            if (k > j and k < len(lines) and _indent(lines[k]) >= 4 and not para[-1].rstrip().endswith("::")
                    and not any(p.lstrip().startswith(("..", ":")) for p in para)):
                out += ["", "::", ""]
                while k < len(lines) and (not lines[k].strip() or _indent(lines[k]) >= 4):
                    out.append(lines[k])
                    k += 1
                i = k
            else:
                i = j
            continue
        out.append(_escape(line))
        i += 1
    return out


def process(app: Sphinx, what: str, name: str, obj: object, options: object, lines: list[str]) -> None:
    if what == "module" and name in PAGE_DOCSTRINGS:
        lines[:] = [PAGE_DOCSTRINGS[name]]
        return
    lines[:] = convert(lines)


@functools.cache
def _type_checking_imports(module: str) -> dict[str, str]:
    """``{name: "package.module.name"}`` for the names ``module`` imports under ``if TYPE_CHECKING:``."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError, SyntaxError):
        return {}
    names: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for imp in node.body:
                if isinstance(imp, ast.ImportFrom) and imp.module and imp.level == 0:
                    names.update({a.asname or a.name: f"{imp.module}.{a.name}" for a in imp.names})
    return names


class QualifyTypeCheckingNames(SphinxPostTransform):
    """Point a reference to a name a module imports only for type checking at the class it imports."""

    default_priority = 5  # before Sphinx's ReferencesResolver

    def run(self, **kwargs: object) -> None:
        for node in self.document.findall(pending_xref):
            if node.get("refdomain") != "py":
                continue
            full = _type_checking_imports(node.get("py:module") or "").get(node.get("reftarget", ""))
            if full:
                node["reftarget"] = full
                node["refspecific"] = False


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("autodoc-process-docstring", process)
    app.add_post_transform(QualifyTypeCheckingNames)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
