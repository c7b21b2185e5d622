#!/usr/bin/env bash
# Set up with the dev, train, plot, pipeline (OpenSpiel too), cluster (Ray Train), llm, onnx, docs, web and compiled
# extras (the compiled build of the search and the scripted agents, which the tests compare with pure Python),
# lint, build the documentation site (warnings are errors), and run the full (non-slow) test suite on both cores.
# The pipeline extras (RLlib, TorchRL, Tianshou, OpenSpiel) install after torch, so they reuse the CPU build.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh dev,train,plot,rllib,cluster,torchrl,tianshou,bench,openspiel,llm,onnx,docs,web,compiled
.venv/bin/python -c "import torch; assert torch.__version__.endswith('+cpu'), torch.__version__"
.venv/bin/ruff check .
bash scripts/docs.sh
exec .venv/bin/python -m pytest -n 2 -q "$@"
