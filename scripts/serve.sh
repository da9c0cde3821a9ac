#!/usr/bin/env bash
# One command on a fresh Debian 12 machine: installs what is missing, builds,
# generates the tiny default model, then runs `llmesh serve` with the
# arguments given (without --model it serves models/tiny-qwen3):
#   scripts/serve.sh                                   # http://127.0.0.1:8080, the tiny model
#   scripts/serve.sh --model MODEL.gguf --port 9000    # any serve flags pass through
# Quick when everything is there already (the checks and a no-op build).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
model=(--model models/tiny-qwen3)
for arg in "$@"; do
  case "$arg" in
    --model | --model=* | -m | -m?*) model=() ;;
  esac
done
exec build/llmesh serve "${model[@]}" "$@"
