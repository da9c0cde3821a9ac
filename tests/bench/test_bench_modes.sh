#!/usr/bin/env bash
# The modes beyond fixed points against the real server with the tiny model:
# prefix-cache A/B, interference A/B, agent sessions with sub-agents, trace
# replay (the `llmesh sim` format), needle, and a warm fixed point, all from one
# TOML scenario file.
source "$(dirname "$0")/bench_common.sh"
start_server S --max-running-requests 8
OUT="$E2E_TMP/modes"
cat >"$E2E_TMP/trace.jsonl" <<'TRACE'
{"session_id": "a", "turn": 0, "input_tokens": 700, "output_tokens": 12, "delay_s": 0, "shared_prefix_hash_ids": [1]}
{"session_id": "a", "turn": 1, "input_tokens": 150, "output_tokens": 8, "delay_s": 0.1}
{"session_id": "b", "turn": 0, "input_tokens": 600, "output_tokens": 10, "delay_s": 0.05, "shared_prefix_hash_ids": [1]}
{"session_id": "b", "turn": 2, "input_tokens": 100, "output_tokens": 6, "delay_s": 0}
{"session_id": "b", "turn": 1, "input_tokens": 120, "output_tokens": 6, "delay_s": 0}
TRACE
cat >"$E2E_TMP/modes.toml" <<TOML
[[point]]
kind = "prefix_ab"
isl = 1500
repetitions = 3

[[point]]
kind = "interference"
isl = 256
osl = 64
concurrency = 4
requests = 8
warmups = 1
inject_isl = 6000
inject_after_s = 0.2

[[point]]
kind = "sessions"
sessions = 3
turns = 3
shared_prefix_tokens = 400
tool_tokens_min = 100
tool_tokens_max = 300
output_tokens_min = 16
output_tokens_max = 32
think_s_max = 0.2
subagent_every_turns = 2
subagent_turns = 2

[[point]]
kind = "trace"
trace = "$E2E_TMP/trace.jsonl"
trace_block_tokens = 256

[[point]]
kind = "needle"
context_lengths = [400]
depths = 3

[[point]]
isl = 300
osl = 8
concurrency = 2
requests = 4
cache = "warm"
TOML
run_bench "$OUT" --scenarios "$E2E_TMP/modes.toml" --strict >"$E2E_TMP/modes.log" 2>&1 ||
  { cat "$E2E_TMP/modes.log"; fail "modes run failed"; }
check_py "$OUT" '
s = {p["kind"] + ("warm" if p.get("cache") == "warm" else ""): p for p in summary()}
for p in s.values(): assert p["valid"], p
# Prefix A/B: P warm reuses almost all of P (whole blocks), P cold and Q cold nothing.
ab = s["prefix_ab"]["prefix_ab"]
assert ab["p_warm"]["cached_share_mean"] > 0.95, ab
assert ab["p_cold"]["cached_tokens_mean"] == 0 and ab["q_cold"]["cached_tokens_mean"] == 0, ab
assert ab["p_cold"]["ttft_ms"]["count"] == 3 == ab["p_warm"]["ttft_ms"]["count"] == ab["q_cold"]["ttft_ms"]["count"]
# Interference: the 6000-token prefill overlapped the decode background; both runs complete.
i = s["interference"]
assert i["interference"]["status"] == "OVERLAPPED", i["interference"]
assert i["interference"]["injected_ttft_ms"] > 0 and i["interference"]["injected_prompt_tokens"] == 6000
assert i["alone"]["num_ok"] == 8 and i["with_injection"]["num_ok"] == 8
assert i["interference"]["tpot_p95_change"] is not None
# Sessions: reuse measured against the previous prompt is high on llmesh (prefix cache).
ses = s["sessions"]
assert [t["turn"] for t in ses["turns"]] == [0, 1, 2], ses["turns"]
assert ses["turns"][0]["reuse_mean"] is None
assert ses["turns"][1]["reuse_mean"] > 0.9 and ses["turns"][2]["reuse_mean"] > 0.9, ses["turns"]
assert ses["subagent_reuse_mean"] > 0.9, ses
rec = records()
sub = [r for r in rec if r["role"] == "subagent"]
assert len(sub) == 3 * 2 and all("/sub" in r["session_id"] for r in sub), len(sub)
for r in rec:
    if r["role"] in ("session", "subagent"): assert r["completion_tokens"] == r["expected_output_tokens"], r
# Trace replay: every row became one turn, in turn order per session; outputs exact.
tr = [r for r in rec if r["point"].startswith("trace")]
assert len(tr) == 5, len(tr)
assert [r["turn"] for r in tr if r["session_id"] == "b"] == [0, 1, 2]
assert sorted(r["completion_tokens"] for r in tr) == [6, 6, 8, 10, 12]
# Needle: one request per depth, reported pass/fail (a random tiny model fails them).
n = s["needle"]
assert n["needle_total"] == 3 and [row["depth"] for row in n["needle"]] == [0.0, 0.5, 1.0]
# Warm fixed point: reported separately and every measured request hit the cache.
w = s["fixedwarm"]
warm = [r for r in rec if r["point"] == w["key"] and r["role"] == "measured"]
assert len(warm) == 4 and all(r["cached_tokens"] > 0 for r in warm)
md = open(d + "/report.md").read()
for title in ("Fixed points (warm)", "Interference A/B", "Prefix-cache A/B", "Needle in a haystack", "Per turn"):
    assert "## " + title in md, title
html = open(d + "/report.html").read()
assert "TTFT p50 by turn" in html and "reuse vs the previous prompt" in html
'
echo "PASS test_bench_modes"
