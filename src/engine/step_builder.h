// Flattens a scheduled batch into a StepInput: the tokens each sequence
// computes this step, concatenated, with positions, KV slots, the block
// tables in CSR form, and a logits row for each sequence that catches up
// (its next token is sampled).
#pragma once

#include <vector>

#include "engine/scheduler.h"
#include "model/step_input.h"

namespace llmesh::engine {

// Fills `step` (cleared first); `sampled` gets the sequences of the logits rows, in row order.
void build_step_input(const ScheduledBatch& batch, model::StepInput& step, std::vector<Sequence*>& sampled);

}  // namespace llmesh::engine
