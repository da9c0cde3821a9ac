#!/usr/bin/env bash
# `llmesh route` (session policy) in front of three real `llmesh serve`
# processes: a 3-turn session (Claude Code's metadata.user_id, or no id at all)
# always lands on the same upstream and its later turns report cached tokens;
# 30 concurrent sessions spread over all three within the load bound
# (ceil(1.25 x 30 / 3) = 13 in flight per upstream at most); /metrics, /v1/route,
# /v1/models and the request log reflect it; under cache_aware, requests that
# share a long prompt prefix follow it.
source "$(dirname "$0")/route_common.sh"

start_server A --max-running-requests 16
start_server B --max-running-requests 16
start_server C --max-running-requests 16
start_router R --upstream "$A_URL,name=a" --upstream "$B_URL,name=b" --upstream "$C_URL,name=c" \
  --log-requests "$E2E_TMP/requests.jsonl"

/usr/bin/python3 "$SOURCE_DIR/tests/e2e/route_checks.py" sessions "$R_URL" || fail "session affinity checks"
/usr/bin/python3 "$SOURCE_DIR/tests/e2e/route_checks.py" spread "$R_URL" 30 || fail "load-bound spread"

expect_status 200 GET "$R_URL/v1/models"
[ "$(json_get 'sorted(b["data"][0]["upstreams"])')" = "['a', 'b', 'c']" ] || fail "/v1/models union: $(cat "$E2E_TMP/body")"
expect_status 200 GET "$R_URL/v1/route"
[ "$(json_get 'b["policy"]')" = session ] || fail "/v1/route policy"
[ "$(json_get 'b["decisions"].get("sticky", 0) >= 8')" = True ] || fail "no sticky decisions: $(cat "$E2E_TMP/body")"
curl -s "$R_URL/metrics" > "$E2E_TMP/metrics.txt"
grep -q '^llmesh:route_requests_total{upstream="a"} [1-9]' "$E2E_TMP/metrics.txt" || fail "metrics: $(head -30 "$E2E_TMP/metrics.txt")"
grep -q '^llmesh:route_decisions_total{policy="session",reason="sticky"} [1-9]' "$E2E_TMP/metrics.txt" || fail "decision metrics"
grep -q '^llmesh:route_time_to_first_token_seconds_count{upstream="b"} [1-9]' "$E2E_TMP/metrics.txt" || fail "TTFT metrics"
grep -q '^llmesh:route_cached_tokens_total{upstream=' "$E2E_TMP/metrics.txt" || fail "cached token metrics"

# The request log: one line per request, session hashed, no prompt without --log-prompts.
/usr/bin/python3 - "$E2E_TMP/requests.jsonl" <<'PY' || fail "request log"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 45, len(lines)
for r in lines:
    for key in ("time", "path", "upstream", "status", "duration_ms", "reason"):
        assert key in r, (key, r)
    assert "prompt" not in r
cc = [r for r in lines if r.get("session_source") == "anthropic_user_id"]
assert len(cc) == 9 and all(len(r["session"]) == 16 for r in cc), cc[:2]
assert all("alpha" not in json.dumps(r) for r in cc), "the session id itself was logged"
assert any(r.get("cached_tokens", 0) > 0 for r in cc)
print(f"request log: {len(lines)} lines")
PY

# cache_aware: requests that share a long prompt prefix follow it, with no session ids.
start_router CA --upstream "$A_URL,name=a" --upstream "$B_URL,name=b" --upstream "$C_URL,name=c" --policy cache_aware
/usr/bin/python3 "$SOURCE_DIR/tests/e2e/route_checks.py" cache_aware "$CA_URL" || fail "cache_aware placement"

# Auth: a router with --api-key refuses requests without it, in each API's shape.
start_router K --upstream "$A_URL" --api-key secret
expect_status 401 POST "$K_URL/v1/messages" -H 'Content-Type: application/json' -d '{}'
[ "$(json_get 'b["type"]')" = error ] || fail "Anthropic-shaped 401: $(cat "$E2E_TMP/body")"
expect_status 401 POST "$K_URL/v1/chat/completions" -H 'Content-Type: application/json' -d '{}'
[ "$(json_get 'b["error"]["type"]')" = authentication_error ] || fail "OpenAI-shaped 401"
expect_status 200 POST "$K_URL/v1/chat/completions" -H 'Authorization: Bearer secret' -H 'Content-Type: application/json' \
  -d '{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":2}'
expect_status 200 GET "$K_URL/health"
echo "PASS test_route_sessions"
