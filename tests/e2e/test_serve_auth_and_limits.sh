#!/usr/bin/env bash
# --api-key (Bearer or x-api-key on everything but /health) and the queue
# limit (429 with Retry-After), the server serving on afterwards.
source "$(dirname "$0")/serve_common.sh"

start_server A --api-key sekret --max-running-requests 1 --max-waiting-requests 1
U=$A_URL
H=(-H 'Content-Type: application/json')
BODY='{"messages":[{"role":"user","content":"hi"}],"max_tokens":3}'

expect_status 200 GET "$U/health"
expect_status 401 GET "$U/v1/models"
[ "$(json_get 'b["error"]["type"]')" = authentication_error ] || fail "401 type"
expect_status 401 GET "$U/v1/models" -H 'Authorization: Bearer wrong'
expect_status 401 GET "$U/metrics"
expect_status 401 POST "$U/v1/chat/completions" "${H[@]}" -d "$BODY"
expect_status 200 GET "$U/v1/models" -H 'Authorization: Bearer sekret'
expect_status 200 GET "$U/metrics" -H 'x-api-key: sekret'
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -H 'Authorization: Bearer sekret' -d "$BODY"

# Queue full: one running + one waiting; the rest of a burst must get 429 with Retry-After.
LONG='{"messages":[{"role":"user","content":"go"}],"max_tokens":40,"ignore_eos":true}'
burst_pids=()
for i in $(seq 1 6); do
  curl -s -o "$E2E_TMP/burst$i.body" -D "$E2E_TMP/burst$i.headers" -w '%{http_code}' "$U/v1/chat/completions" \
    "${H[@]}" -H 'x-api-key: sekret' -d "$LONG" >"$E2E_TMP/burst$i.code" &
  burst_pids+=($!)
done
wait "${burst_pids[@]}"  # not a bare `wait`: the server is a child too
codes=$(cat "$E2E_TMP"/burst*.code | tr -d '\n')
echo "burst statuses: $codes"
n429=$(cat "$E2E_TMP"/burst*.code | grep -c 429 || true)
n200=$(cat "$E2E_TMP"/burst*.code | grep -c 200 || true)
[ "$n429" -ge 1 ] || fail "no 429 in a burst of 6 with a queue of 1 ($codes)"
[ "$n200" -ge 1 ] || fail "no request of the burst succeeded ($codes)"
for i in $(seq 1 6); do
  if [ "$(cat "$E2E_TMP/burst$i.code")" = 429 ]; then
    grep -qi '^retry-after:' "$E2E_TMP/burst$i.headers" || fail "429 without Retry-After"
    grep -q '"rate_limit_error"' "$E2E_TMP/burst$i.body" || fail "429 body: $(cat "$E2E_TMP/burst$i.body")"
  fi
done
expect_status 200 POST "$U/v1/chat/completions" "${H[@]}" -H 'Authorization: Bearer sekret' -d "$BODY"
echo "PASS test_serve_auth_and_limits"
