#!/usr/bin/env bash
# Served-batch goldens (tools/check_served_batch.py): the engine batching many
# requests (token budgets 16/64/512, prefix cache on/off, preemption forced by
# a small pool) gives each the reference's logits and greedy tokens, and the
# same logits as that prompt run alone.
set -euo pipefail
cd "${LLMESH_SOURCE_DIR:-$(dirname "$0")/../..}"
: "${LLMESH:?set LLMESH to the llmesh binary}"
models_dir="${LLMESH_BINARY_DIR:-build}/models"
mkdir -p "$models_dir"
exec 9>"$models_dir/.lock"   # one golden script at a time generates / reads the models
flock 9
exec /usr/bin/python3 tools/check_served_batch.py --llmesh "$LLMESH" --models "$models_dir"
