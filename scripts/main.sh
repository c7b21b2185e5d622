#!/usr/bin/env bash
# The main job: set up, then play and render a short session between random agents.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/mauscheln demo "$@"
