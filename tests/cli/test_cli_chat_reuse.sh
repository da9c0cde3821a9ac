#!/usr/bin/env bash
# `llmesh run --chat` is a client of the serving engine: the second turn of an
# interactive chat reuses the first turn's K/V through the prefix cache.
set -euo pipefail
model="$LLMESH_BINARY_DIR/models/tiny-qwen3-q8_0.gguf"
stats=$(printf 'Hello there, how are you today?\nTell me more about that please.\n' |
  "$LLMESH" run --model "$model" --chat --max-tokens 8 --temperature 0 --enable-thinking false 2>&1 >/dev/null |
  grep '^\[prompt')
echo "$stats"
[ "$(echo "$stats" | wc -l)" -eq 2 ] || { echo "FAIL: expected two turns' stats lines"; exit 1; }
first=$(echo "$stats" | sed -n 1p | sed -E 's/.*\(([0-9]+) cached\).*/\1/')
second=$(echo "$stats" | sed -n 2p | sed -E 's/.*\(([0-9]+) cached\).*/\1/')
[ "$first" -eq 0 ] || { echo "FAIL: the first turn had $first cached tokens"; exit 1; }
[ "$second" -ge 16 ] || { echo "FAIL: the second turn reused $second tokens, expected at least one 16-token block"; exit 1; }
echo "ok: the second turn reused $second cached tokens"
