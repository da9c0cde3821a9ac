#!/usr/bin/env bash
# `llmesh bench run --mode soak` in miniature against the real server: agent
# sessions with sub-agents and compaction for 25 s; no errors, the server's
# RSS and KV blocks sampled over time, reuse per turn, and the KV blocks held
# by requests back at the baseline once idle. Also the scenario-file form.
source "$(dirname "$0")/bench_common.sh"
start_server S --ctx-size 8192 --max-running-requests 8
OUT="$E2E_TMP/soak"
cat >"$E2E_TMP/soak.toml" <<'TOML'
[[point]]
kind = "soak"
sessions = 3
duration_s = 25
shared_prefix_tokens = 256
tool_tokens_min = 100
tool_tokens_max = 400
output_tokens_min = 8
output_tokens_max = 24
think_s_min = 0
think_s_max = 0.2
subagent_every_turns = 3
subagent_turns = 2
compact_at_tokens = 1500
sample_every_s = 2
TOML
run_bench "$OUT" --scenarios "$E2E_TMP/soak.toml" --strict >"$E2E_TMP/soak.log" 2>&1 ||
  { cat "$E2E_TMP/soak.log"; fail "soak run failed"; }
grep -q "## Soak" "$OUT/report.md" || fail "no soak table in report.md"
grep -q "Soak: server RSS" "$OUT/report.html" || fail "no RSS chart in report.html"
check_py "$OUT" '
p = by_kind("soak")[0]
assert p["valid"], p["invalid_reasons"]
assert p["num_errors"] == 0 and p["metrics"]["num_ok"] >= 20, (p["num_errors"], p["metrics"]["num_ok"])
assert p["num_compactions"] >= 1, p["num_compactions"]
assert len(p["samples"]) >= 8 and all(s["rss_bytes"] > 1e6 for s in p["samples"]), p["samples"][:3]
assert p["kv_blocks_used_idle"] == p["kv_blocks_used_baseline"] == 0, (p["kv_blocks_used_idle"], p["kv_blocks_used_baseline"])
assert p["rss_mib_last"] > 0 and p["rss_slope_mib_per_hour"] is not None
assert 0.5 < p["reuse"]["median"] <= 1 and p["reuse"]["worst"] <= p["reuse"]["p5"] <= p["reuse"]["median"], p["reuse"]
assert len(p["windows"]) == 4 and sum(w["num_ok"] for w in p["windows"]) == p["metrics"]["num_ok"], p["windows"]
roles = {r["role"] for r in records()}
assert {"session", "subagent", "compaction"} <= roles, roles
sub = [r for r in records() if r["role"] == "subagent"]
assert len({r["session_id"] for r in sub}) >= 2, "sub-agents run in pairs"
'
echo "PASS test_bench_soak"
