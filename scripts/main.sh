#!/usr/bin/env bash
# The main job: set up (with the training and plotting extras), train a policy by self-play for a few minutes,
# and print its duplicate evaluation against the scripted baselines and where the TensorBoard logs are.
# Extra arguments are passed to the trainer, e.g. `bash scripts/main.sh --total-decisions 1000000`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh train,plot
exec .venv/bin/mauscheln train --config configs/train/quick.yaml "$@"
