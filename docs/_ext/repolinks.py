"""Links from a page to a file of the repository that is not a page of the site (a data folder, a script).

MyST resolves a Markdown link to a page of the site; a link to, say, ``series/mauscheln/`` (a folder of result
files beside a results page) has no page to point to. Where the target exists in the repository, this transform
shows the link's text unlinked, before MyST's resolver would warn; a link to a path that does not exist is left
to MyST, which warns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sphinx.addnodes import pending_xref
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform


class RepositoryLinks(SphinxPostTransform):
    default_priority = 5  # before MyST's MystReferenceResolver

    def run(self, **kwargs: Any) -> None:
        root = Path(self.app.srcdir).resolve().parent
        for node in list(self.document.findall(pending_xref)):
            if node.get("reftype") != "myst" or node.get("refdomain") == "doc":
                continue
            target = str(node.get("reftarget", ""))
            if not target or "://" in target or target.startswith("#"):
                continue
            here = Path(self.env.doc2path(node.get("refdoc", self.env.docname))).parent
            path = (here / target).resolve()
            if path.exists() and path.is_relative_to(root):
                node.replace_self(node.children or [])


def setup(app: Sphinx) -> dict[str, object]:
    app.add_post_transform(RepositoryLinks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
