#!/usr/bin/env bash
# Create .venv (once) and install the project with the given extras, e.g. `scripts/setup.sh dev,train`.
# Where a CPU build of torch lies in pip's find-links folder, it is installed first, so that the
# `torch>=2.3` requirement is met without pulling a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
extras="${1:-}"
python="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
pip=(.venv/bin/python -m pip --disable-pip-version-check -q)
if [[ ",$extras," == *",train,"* ]] && ! .venv/bin/python -c "import torch" 2>/dev/null; then
  for dir in ${PIP_FIND_LINKS:-} /opt/wheels; do
    wheel=$(ls "$dir"/torch-*+cpu-cp3*.whl 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -n "$wheel" ]; then
      echo "installing the local CPU build of torch: $wheel"
      "${pip[@]}" install "$wheel"
      break
    fi
  done
fi
target="."
[ -n "$extras" ] && target=".[${extras}]"
"${pip[@]}" install -e "$target"
if [[ ",$extras," == *",compiled,"* ]]; then
  # the search's and the scripted agents' modules through Cython (mauscheln_env/compiled.py); stale ones only
  .venv/bin/mauscheln compile build
fi
