#!/usr/bin/env bash
# During a long prefill a stream sends keep-alive comments (so proxies and
# clients with read timeouts keep the connection), and a client that goes away
# is noticed: the engine stops long before the ~39K-token prompt is prefilled.
source "$(dirname "$0")/serve_common.sh"

start_server s --max-batched-tokens 512
num_words=39000
/usr/bin/python3 - "$num_words" > "$E2E_TMP/long.json" <<'PY'
import json, sys
words = " ".join(["hello"] * int(sys.argv[1]))
print(json.dumps({"model": "tiny", "messages": [{"role": "user", "content": words}], "max_tokens": 1, "stream": True}))
PY

metric() {  # metric NAME -> its value (the first sample)
  local text
  text=$(curl -s "$s_URL/metrics")  # read it whole: awk quitting early would fail curl under pipefail
  awk -v name="$1" '$1 ~ "^"name"({|$)" {print $2; exit}' <<<"$text"
}

start=$(date +%s.%N)
curl -s -N --max-time 4.5 "$s_URL/v1/chat/completions" -H 'Content-Type: application/json' \
  --data-binary @"$E2E_TMP/long.json" > "$E2E_TMP/stream.txt" || true   # curl gives up after 4.5 s, after a keep-alive or two
idle=""
for _ in $(seq 1 60); do
  running=$(metric 'llmesh:num_requests_running')
  waiting=$(metric 'llmesh:num_requests_waiting')
  if [ "${running%.*}" = 0 ] && [ "${waiting%.*}" = 0 ]; then idle=1; break; fi
  sleep 0.5
done
[ -n "$idle" ] || fail "the engine still works for a client that left 30 s ago"
elapsed=$(/usr/bin/python3 -c "import time; print(round(time.time() - $start, 1))")
prompt_tokens=$(metric 'llmesh:prompt_tokens_total')
echo "idle ${elapsed} s after the request; ${prompt_tokens%.*} of ~${num_words} prompt tokens prefilled"
[ "${prompt_tokens%.*}" -lt "$num_words" ] || fail "the whole prompt was prefilled for a client that had left"
grep -q '^: keepalive' "$E2E_TMP/stream.txt" || fail "no keep-alive comment during the prefill: $(head -c 300 "$E2E_TMP/stream.txt")"

# The server keeps serving.
expect_status 200 POST "$s_URL/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model":"tiny","messages":[{"role":"user","content":"hi"}],"max_tokens":4}'
echo "PASS"
