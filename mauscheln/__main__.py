"""``python -m mauscheln``: the same as the ``mauscheln`` command."""

from mauscheln.cli import main

raise SystemExit(main())
