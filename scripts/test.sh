#!/usr/bin/env bash
# Set up with the dev, train and openspiel extras, lint, and run the full (non-slow) test suite on both cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev,train,openspiel
.venv/bin/ruff check .
exec .venv/bin/python -m pytest -n 2 -q "$@"
