"""The ``mauscheln`` command: one entry point, one subcommand per job.

``mauscheln demo`` plays and renders a short session between random agents.
"""

from __future__ import annotations

import argparse
import importlib
import sys

# Subcommands that live in other packages are imported only when used.
SUBCOMMANDS = {
    "demo": ("mauscheln_env.demo", "Play and render a short session between random agents."),
}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    available = {name: spec for name, spec in SUBCOMMANDS.items() if _importable(spec[0])}
    parser = argparse.ArgumentParser(prog="mauscheln", description="Mauscheln RL environment and tools.")
    parser.add_argument("command", choices=sorted(available), help="; ".join(f"{k}: {v[1]}" for k, v in available.items()))
    if not argv or argv[0] in ("-h", "--help"):
        parser.print_help()
        return 0
    args, rest = parser.parse_known_args(argv[:1])
    module = importlib.import_module(available[args.command][0])
    return int(module.main(argv[1:]) or 0)


def _importable(module: str) -> bool:
    return importlib.util.find_spec(module.rsplit(".", 1)[0]) is not None


if __name__ == "__main__":
    raise SystemExit(main())
