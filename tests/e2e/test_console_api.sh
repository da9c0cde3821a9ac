#!/usr/bin/env bash
# The console's JSON endpoints (docs/console.md) against a known workload, on
# a real `serve` with an API key and a model library, then through a real
# `route` in front of it: the page is public, the data takes the key; the
# request ring holds each request with the token counts its response
# reported and a timeline whose chunks add up; the history's token rates add
# up to the tokens served; the node view shows the pool and tiers.
source "$(dirname "$0")/route_common.sh"
library="$E2E_TMP/library"
mkdir -p "$library/nested"
ln -s "$(realpath "$TINY_MODEL")" "$library/tiny.gguf"
head -c 100 "$TINY_MODEL" >"$library/nested/truncated.gguf"  # listed with its error, never a crash
start_server A --api-key console-key --models-dir "$library" --max-batched-tokens 64 --console-requests 50
start_router R --upstream "$A_URL,name=box1,api_key=console-key" --api-key route-key
/usr/bin/python3 "$(dirname "$0")/console_checks.py" "$A_URL" console-key "$R_URL" route-key ||
  fail "console endpoints"
echo "PASS: console endpoints"
