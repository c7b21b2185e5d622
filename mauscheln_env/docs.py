"""Write the documentation pages that are generated from code.

    python -m mauscheln_env.docs          # rewrites docs/environment.md
    python -m mauscheln_env.docs --check  # exits 1 when the page is stale

The environment page is the env module's docstring (its layout table is built
from the observation pieces), so the docs and the code cannot drift apart.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mauscheln_env import env as env_module

PAGE = Path(__file__).resolve().parents[1] / "docs" / "environment.md"


def environment_page() -> str:
    return env_module.__doc__.strip() + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    text = environment_page()
    if args.check:
        if not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python -m mauscheln_env.docs", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
