#!/usr/bin/env bash
# Quick start, step 1 on a fresh Debian 12 machine: install dependencies, build,
# and generate the tiny default model (models/tiny-qwen3, random weights with the
# real Qwen3 tokenizer and chat template) so llmesh has something to run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
if [ ! -f models/tiny-qwen3/config.json ]; then
  echo "== generating tiny models into models/"
  /usr/bin/python3 tools/gen_models.py --out models
fi
echo
echo "Ready. Try:  build/llmesh run --model models/tiny-qwen3 --chat --prompt 'Hello!' --max-tokens 32"
