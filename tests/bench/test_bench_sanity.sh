#!/usr/bin/env bash
# `llmesh bench run --sanity` against the real server with the tiny model:
# exact lengths verified from usage, cold verified, every results file parses,
# `bench report` rebuilds the same numbers, `bench compare`, skips, timeouts
# and failures counted, errors for bad input.
source "$(dirname "$0")/bench_common.sh"
start_server S --ctx-size 4096 --max-running-requests 8
OUT="$E2E_TMP/sanity"

run_bench "$OUT" --sanity --strict >"$E2E_TMP/sanity.log" 2>&1 || { cat "$E2E_TMP/sanity.log"; fail "sanity run failed"; }
grep -q "\[4/4\] 256->32 C4: valid" "$E2E_TMP/sanity.log" || fail "no per-point line: $(cat "$E2E_TMP/sanity.log")"
for f in run_manifest.json requests.jsonl summary.csv summary.jsonl report.md report.html; do
  [ -s "$OUT/$f" ] || fail "missing $f"
done
check_py "$OUT" '
s = summary()
assert [p["name"] for p in s] == ["128->1 C1", "1K->1 C1", "128->32 C1", "256->32 C4"], [p["name"] for p in s]
for p in s:
    assert p["valid"], p
    assert p["metrics"]["num_ok"] == p["metrics"]["num_requests"] > 0
    assert p["metrics"]["ttft_ms"]["p50"] > 0 and p["metrics"]["e2e_ms"]["p99"] >= p["metrics"]["e2e_ms"]["p50"]
assert s[2]["metrics"]["tpot_ms"]["count"] == 2 and s[0]["metrics"]["tpot_ms"]["count"] == 0
# Exact lengths and coldness, straight from the raw records.
measured = [r for r in records() if r["role"] == "measured"]
assert len(measured) == 4 + 2 + 2 + 8
for r in measured:
    assert r["prompt_tokens"] == r["expected_prompt_tokens"], r
    assert r["completion_tokens"] == r["expected_output_tokens"], r
    assert r["cached_tokens"] == 0, r
    assert r["first_token_s"] <= r["end_s"] and r["chunk_s"] == sorted(r["chunk_s"])
# 32 output tokens stream as chunks; the throughput is over the window.
p = s[3]["metrics"]
assert abs(p["output_tokens_per_s"] - 8 * 32 / p["duration_s"]) < 1e-6 * p["output_tokens_per_s"]
m = manifest()
assert m["url"].startswith("http://127.0.0.1:") and m["model"] == "tiny" and m["context_limit"] == 4096
assert m["server_models"]["data"][0]["id"] == "tiny" and m["flush_endpoint"] == "/flush_cache"
assert m["start_time"] <= m["end_time"] and "bench run" in m["command_line"]
rows = list(csv.DictReader(open(d + "/summary.csv")))
assert len(rows) == 4 and rows[3]["status"] == "valid" and float(rows[3]["output_tokens_per_s"]) > 0
html = open(d + "/report.html").read()
assert html.count("<svg") >= 3 and "<script" not in html and "TPOT" in html
md = open(d + "/report.md").read()
assert "| 256->32 C4 | 256 | 32 | 4 | 8 / 8 |" in md and "linear interpolation" in md
'

# `bench report` rebuilds the same summary from requests.jsonl alone.
cp "$OUT/summary.jsonl" "$E2E_TMP/summary.before"
rm "$OUT"/summary.* "$OUT"/report.*
"$LLMESH" bench report "$OUT" >/dev/null || fail "bench report"
cmp -s "$OUT/summary.jsonl" "$E2E_TMP/summary.before" || fail "bench report produced a different summary.jsonl"
[ -s "$OUT/report.html" ] || fail "bench report wrote no report.html"
"$LLMESH" bench compare "$OUT" "$OUT" >"$E2E_TMP/compare.md" || fail "bench compare"
grep -q "| 256->32 C4 | output tok/s | .* | 1.000 |" "$E2E_TMP/compare.md" || fail "compare: $(cat "$E2E_TMP/compare.md")"

# A TSV scenario: a point over the server context is skipped with a note; a
# per-request timeout makes failures that are counted and shown, not dropped.
printf 'name\tisl\tosl\tconcurrency\trequests\twarmups\n' >"$E2E_TMP/s.tsv"
printf 'too long\t8000\t1\t1\t1\t0\nslow\t3000\t1\t1\t2\t0\n' >>"$E2E_TMP/s.tsv"
set +e
run_bench "$E2E_TMP/tsv" --scenarios "$E2E_TMP/s.tsv" --timeout 0.001 --strict >"$E2E_TMP/tsv.log" 2>&1
rc=$?
set -e
[ "$rc" = 2 ] || fail "strict run with failures: exit $rc, want 2: $(cat "$E2E_TMP/tsv.log")"
grep -q "too long: skipped" "$E2E_TMP/tsv.log" || fail "no skip line: $(cat "$E2E_TMP/tsv.log")"
grep -q "2 request(s) failed (first: HTTP: .*--timeout" "$E2E_TMP/tsv.log" || fail "failures not shown: $(cat "$E2E_TMP/tsv.log")"
check_py "$E2E_TMP/tsv" '
s = summary()
assert "exceeds the server" in s[0]["skipped"], s[0]
assert not s[1]["valid"] and s[1]["metrics"]["num_failed"] == 2, s[1]
assert "2 / 0" not in open(d + "/report.md").read()
'

# --api anthropic drives /v1/messages with the same exact-length and cold checks.
if [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$S_URL/v1/messages" -d '{}')" != 404 ]; then
  run_bench "$E2E_TMP/anthropic" --sanity --api anthropic --strict >"$E2E_TMP/anthropic.log" 2>&1 ||
    { cat "$E2E_TMP/anthropic.log"; fail "anthropic sanity run failed"; }
  check_py "$E2E_TMP/anthropic" '
assert manifest()["api"] == "anthropic" and all(p["valid"] for p in summary())
measured = [r for r in records() if r["role"] == "measured"]
assert len(measured) == 16 and all(r["prompt_tokens"] == r["expected_prompt_tokens"] for r in measured)
assert all(r["completion_tokens"] == r["expected_output_tokens"] and r["cached_tokens"] == 0 for r in measured)
'
else
  echo "note: the server has no /v1/messages yet; anthropic check skipped"
fi

# Bad input: an error naming the problem, exit 1.
set +e
"$LLMESH" bench run --url "$S_URL" --out "$E2E_TMP/x" >"$E2E_TMP/err1" 2>&1; rc1=$?
"$LLMESH" bench run --url http://127.0.0.1:1 --model-path "$TINY_MODEL" --out "$E2E_TMP/x" >"$E2E_TMP/err2" 2>&1; rc2=$?
"$LLMESH" bench run --url "$S_URL" --model-path "$TINY_MODEL" --mode bogus --out "$E2E_TMP/x" >"$E2E_TMP/err3" 2>&1; rc3=$?
set -e
[ "$rc1" = 1 ] && grep -q -- "--tokenizer" "$E2E_TMP/err1" || fail "no tokenizer: exit $rc1: $(cat "$E2E_TMP/err1")"
[ "$rc2" = 1 ] && grep -q "did not answer" "$E2E_TMP/err2" || fail "dead server: exit $rc2: $(cat "$E2E_TMP/err2")"
[ "$rc3" = 1 ] && grep -q "unknown mode 'bogus'" "$E2E_TMP/err3" || fail "bad mode: exit $rc3: $(cat "$E2E_TMP/err3")"
# Through a file: `grep -q` quitting early would SIGPIPE the writer and fail the pipe under pipefail.
"$LLMESH" bench --help >"$E2E_TMP/help"
grep -q "interference" "$E2E_TMP/help" || fail "bench --help does not teach the modes"
echo "PASS test_bench_sanity"
