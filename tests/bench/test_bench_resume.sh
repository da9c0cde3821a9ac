#!/usr/bin/env bash
# Resume after a killed run (SIGKILL: no chance to clean up) and a clean stop
# with Ctrl-C (SIGINT): finished points are recomputed from their raw records,
# the cut point is run again from scratch, and nothing is counted twice.
source "$(dirname "$0")/bench_common.sh"
start_server S --max-running-requests 4
cat >"$E2E_TMP/s.toml" <<'TOML'
[[point]]
name = "first"
isl = 200
osl = 4
requests = 3
warmups = 1

[[point]]
name = "long"
isl = 300
osl = 48
requests = 40
warmups = 0

[[point]]
name = "last"
isl = 100
osl = 2
concurrency = 2
requests = 4
TOML

# wait_for FILE PATTERN COUNT: until FILE has COUNT lines matching PATTERN (30 s at most).
wait_for() {
  for _ in $(seq 1 300); do
    [ "$(cat "$1" 2>/dev/null | grep -c "$2" || true)" -ge "$3" ] && return 0
    sleep 0.1
  done
  fail "timed out waiting for $3 x '$2' in $1"
}

# 1. Kill -9 in the middle of point "long".
OUT="$E2E_TMP/killed"
# (the binary itself in the background, not a shell function, so $! is its pid)
"$LLMESH" bench run --url "$S_URL" --model-path "$TINY_MODEL" --out "$OUT" --scenarios "$E2E_TMP/s.toml" \
  >"$E2E_TMP/run1.log" 2>&1 &
pid=$!
wait_for "$OUT/requests.jsonl" '"point":"fixed isl=300.*"role":"measured"' 3
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
grep -q '"type":"point_end","point":"fixed isl=300' "$OUT/requests.jsonl" && fail "point 'long' finished before the kill"

run_bench "$OUT" --scenarios "$E2E_TMP/s.toml" --strict >"$E2E_TMP/run2.log" 2>&1 ||
  { cat "$E2E_TMP/run2.log"; fail "resumed run failed"; }
grep -q "\[1/3\] first: finished in an earlier run" "$E2E_TMP/run2.log" || fail "first point not resumed: $(cat "$E2E_TMP/run2.log")"
grep -q "\[2/3\] long: valid" "$E2E_TMP/run2.log" || fail "long point not rerun: $(cat "$E2E_TMP/run2.log")"
check_py "$OUT" '
s = summary()
assert [p["name"] for p in s] == ["first", "long", "last"] and all(p["valid"] for p in s), s
rec = records()
count = lambda name: sum(1 for r in rec if r["role"] == "measured" and r["point"] == [p["key"] for p in s if p["name"] == name][0])
assert (count("first"), count("long"), count("last")) == (3, 40, 4), (count("first"), count("long"), count("last"))
assert s[0]["metrics"]["num_ok"] == 3 and s[1]["metrics"]["num_ok"] == 40
'

# 2. Ctrl-C: exits 130, keeps and reports what was measured, and resumes.
OUT="$E2E_TMP/interrupted"
"$LLMESH" bench run --url "$S_URL" --model-path "$TINY_MODEL" --out "$OUT" --scenarios "$E2E_TMP/s.toml" \
  >"$E2E_TMP/run3.log" 2>&1 &
pid=$!
wait_for "$OUT/requests.jsonl" '"point":"fixed isl=300.*"role":"measured"' 3
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
[ "$rc" = 130 ] || fail "Ctrl-C: exit $rc, want 130: $(cat "$E2E_TMP/run3.log")"
grep -q "stopped by Ctrl-C" "$E2E_TMP/run3.log" || fail "no stop message: $(cat "$E2E_TMP/run3.log")"
check_py "$OUT" '
s = summary()
assert s[0]["valid"] and s[0]["name"] == "first"
assert s[1]["name"] == "long" and not s[1]["valid"] and not s[1]["finished"]
assert 3 <= s[1]["metrics"]["num_ok"] < 40, s[1]["metrics"]
assert "not finished" in open(d + "/report.md").read()
assert manifest()["stopped"] is True
'
run_bench "$OUT" --scenarios "$E2E_TMP/s.toml" --strict >"$E2E_TMP/run4.log" 2>&1 ||
  { cat "$E2E_TMP/run4.log"; fail "run resumed after Ctrl-C failed"; }
check_py "$OUT" '
s = summary()
assert all(p["valid"] and p["finished"] for p in s) and s[1]["metrics"]["num_requests"] == 40, s
'
echo "PASS test_bench_resume"
