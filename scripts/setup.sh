#!/usr/bin/env bash
# Installs what is missing, builds, and generates the tiny default model
# (models/tiny-qwen3: random weights with the real Qwen3 tokenizer and chat
# template) so llmesh has something to run. Idempotent: with everything in
# place it only checks (a second or two). scripts/serve.sh runs it first.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
if [ ! -f models/tiny-qwen3/config.json ]; then
  echo "== generating the tiny model into models/tiny-qwen3"
  /usr/bin/python3 tools/gen_models.py --out models --only tiny-qwen3 --no-reference
fi
