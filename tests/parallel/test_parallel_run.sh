#!/usr/bin/env bash
# `llmesh run` on real MPI ranks (loopback, 1 thread each) gives the tokens and
# logits of the single-process run, for tensor, pipeline and expert parallel
# and their combinations, on a dense and a MoE model, F32 and Q8_0, with
# batching, prefix caching, chunked prefill and preemption; uneven splits give
# the same tokens; bad layouts fail with one clear line and never hang.
set -euo pipefail
source "$(dirname "$0")/mpi_common.sh"
export M="$LLMESH_BINARY_DIR/models"
exec /usr/bin/python3 "$(dirname "$0")/parallel_run_checks.py"
