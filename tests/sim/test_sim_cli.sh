#!/usr/bin/env bash
# End-to-end checks of `llmesh sim` through the real binary: help, a run with
# all outputs, the avalanche contrast, a sweep, trace replay, fit, and errors.
set -euo pipefail
: "${LLMESH:?set LLMESH to the llmesh binary}"
cd "${LLMESH_SOURCE_DIR:-$(dirname "$0")/../..}"
PY=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --help teaches the config sections and shows an example command.
help=$("$LLMESH" sim --help)
for word in "[hardware]" "[model]" "[deployment]" "[cache]" "[scheduler]" "[routing]" "[workload]" "[step_time]" \
            "dp_attention" "llmesh sim --config" "--sweep"; do
  grep -qF -- "$word" <<<"$help" || fail "sim --help does not mention $word"
done

# A run writes every output; the numbers are sane.
"$LLMESH" sim --config examples/sim/avalanche.toml --out "$work/good" > "$work/good.txt"
for f in summary.json workers.csv turns.csv timeline.csv report.html; do
  [ -s "$work/good/$f" ] || fail "missing $f"
done
grep -q "<svg" "$work/good/report.html" || fail "report.html has no inline SVG"
grep -q "makespan" "$work/good.txt" || fail "no summary on stdout"
[ "$(wc -l < "$work/good/workers.csv")" -eq 17 ] || fail "workers.csv should list 16 workers"

# Round robin + prefill first: several times lower utilization (the avalanche).
"$LLMESH" sim --config examples/sim/avalanche.toml --set routing.policy=round_robin \
  --set scheduler.phase_policy=prefill_first --out "$work/bad" > /dev/null
$PY - "$work/good/summary.json" "$work/bad/summary.json" <<'PYEOF'
import json, sys
good, bad = (json.load(open(p)) for p in sys.argv[1:3])
assert 0 < good["utilization"] <= 1 and 0 < bad["utilization"] <= 1
assert good["utilization"] > 3 * bad["utilization"], (good["utilization"], bad["utilization"])
assert good["cache_hit_rate"] > bad["cache_hit_rate"]
for s in (good, bad):
    total = s["prefill_fraction"] + s["decode_fraction"] + s["waiting_fraction"] + s["idle_fraction"]
    assert abs(total - 1) < 1e-6, total
    assert s["prompt_tokens"] == s["hit_tokens"] + s["restored_tokens"] + s["prefill_computed_tokens"]
PYEOF

# A sweep writes a table and a chart.
"$LLMESH" sim --config examples/sim/avalanche.toml --sweep cache.kv_capacity_tokens=250000,400000 \
  --set workload.num_agents=16 --out "$work/sweep" > "$work/sweep.txt"
[ "$(wc -l < "$work/sweep/sweep.csv")" -eq 3 ] || fail "sweep.csv should have a header and 2 rows"
grep -q "<polyline" "$work/sweep/sweep.html" || fail "sweep.html has no chart"
grep -q "400000" "$work/sweep.txt" || fail "sweep table not printed"

# Fit step times from measured points, then replay a trace with them.
"$LLMESH" sim fit --csv examples/sim/measured_steps_example.csv --out "$work/calibration.json" > /dev/null
$PY -c "import json,sys; c=json.load(open(sys.argv[1])); assert c['decode']['per_context_token_s'] > 0" \
  "$work/calibration.json"
"$LLMESH" sim --config examples/sim/trace_replay.toml --set "step_time.calibration_file=$work/calibration.json" \
  --out "$work/trace" > /dev/null
$PY -c "import json,sys; s=json.load(open(sys.argv[1])); assert s['num_sessions']==3 and s['num_requests']==8, s" \
  "$work/trace/summary.json"

# Other deployments run.
"$LLMESH" sim --config examples/sim/disaggregated.toml --out "$work/pd" > /dev/null
"$LLMESH" sim --config examples/sim/single_gpu.toml --out "$work/one" > /dev/null

# Bad input: exit status 1 and a message naming the problem.
printf '[cache]\nkv_capacity_tokenz = 5\n' > "$work/typo.toml"
if "$LLMESH" sim --config "$work/typo.toml" --out "$work/x" 2> "$work/err.txt"; then fail "typo accepted"; fi
grep -q "cache.kv_capacity_tokenz" "$work/err.txt" || fail "error does not name the key: $(cat "$work/err.txt")"
if "$LLMESH" sim --out "$work/x" 2> "$work/err2.txt"; then fail "missing --config accepted"; fi
grep -q -- "--config" "$work/err2.txt" || fail "missing --config not explained"
# model.plan_file: the model's shape and a multi-rank job's traffic from `llmesh inspect --plan --json`;
# a slower link makes the same run take longer, and a broken plan is a clear error.
MODEL="${LLMESH_BINARY_DIR:?}/models/tiny-qwen3-f32.gguf"
"$LLMESH" inspect --model "$MODEL" --plan --json --tp 2 > "$work/plan.json"
cat > "$work/planned.toml" <<'EOF'
name = "planned"
[hardware]
num_gpus = 2
[model]
plan_file = "plan.json"
[deployment]
mode = "tp"
tp_size = 2
[workload]
num_agents = 2
turns = [3, 3]
input_tokens = [500, 500]
output_tokens = [100, 100]
think_time_s = [1, 1]
EOF
for link in 0.01 100; do
  "$LLMESH" sim --config "$work/planned.toml" --set hardware.interconnect_gb_per_s=$link --out "$work/plan-$link" > /dev/null
done
$PY - "$work/plan-0.01/summary.json" "$work/plan-100/summary.json" <<'PYEOF'
import json, sys
slow, fast = (json.load(open(p)) for p in sys.argv[1:3])
assert slow["makespan_s"] > fast["makespan_s"], (slow["makespan_s"], fast["makespan_s"])
PYEOF
echo '{"parameters": 1}' > "$work/plan.json"
if "$LLMESH" sim --config "$work/planned.toml" --out "$work/x" 2> "$work/err3.txt"; then fail "a broken plan accepted"; fi
grep -q "llmesh inspect" "$work/err3.txt" || fail "a broken plan is not explained: $(cat "$work/err3.txt")"
echo "sim CLI: all checks passed"
