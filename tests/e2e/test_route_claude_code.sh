#!/usr/bin/env bash
# The Claude Code CLI, headless, completes a turn through `llmesh route` in
# front of two `llmesh serve` processes, unchanged: /v1/messages?beta=true
# streaming with its ~22K-token prompt. Every request of the session carries
# its metadata.user_id, so all of them land on one upstream (the request log
# shows it), and the second turn reads the first one's prefix from the cache.
source "$(dirname "$0")/route_common.sh"
skip_on_scalar_kernels "Claude Code's ~22K-token first turn within its 150 s timeout"
source "$(dirname "$0")/claude_code_common.sh"
start_server S --ctx-size 40960
start_server T --ctx-size 40960
start_router R --upstream "$S_URL,name=s" --upstream "$T_URL,name=t" --log-requests "$E2E_TMP/requests.jsonl"
claude_say_hi "$R_URL"
/usr/bin/python3 - "$E2E_TMP/requests.jsonl" <<'PY' || fail "request log: $(cat "$E2E_TMP/requests.jsonl")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
gen = [r for r in lines if r["path"] == "/v1/messages"]
assert gen, lines
assert all(r["session_source"] == "anthropic_user_id" for r in gen), gen
assert len({r["upstream"] for r in gen}) == 1, [r["upstream"] for r in gen]
assert all(r["status"] == 200 for r in gen), gen
print(f"{len(gen)} /v1/messages request(s) of one session, all on {gen[0]['upstream']}; "
      f"cached tokens {[r.get('cached_tokens') for r in gen]}")
PY
echo "PASS test_route_claude_code"
