#!/usr/bin/env bash
# Build the documentation site (Sphinx + MyST + Furo) into docs/_build/html with warnings as errors.
# Installs the `docs` extra through scripts/setup.sh (the optional libraries are mocked, so nothing else is
# needed), checks that the generated pages are current, and prints the path of the built index.html last.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh docs
.venv/bin/python -m mauscheln_env.docs --check
rm -rf docs/_build/html docs/api/generated
.venv/bin/python -m sphinx -b html -W --keep-going -E -q -j auto docs docs/_build/html
echo "$(pwd)/docs/_build/html/index.html"
