#include "engine/step_builder.h"

namespace llmesh::engine {

void build_step_input(const ScheduledBatch& batch, model::StepInput& step, std::vector<Sequence*>& sampled) {
  step.clear();
  sampled.clear();
  for (size_t s = 0; s < batch.size(); ++s) {
    Sequence* seq = batch[s].sequence;
    const int64_t begin = seq->num_computed_tokens, end = begin + batch[s].num_new_tokens;
    for (int64_t p = begin; p < end; ++p) {
      step.token_ids.push_back(seq->tokens[size_t(p)]);
      step.positions.push_back(int32_t(p));
      step.seq_index.push_back(int32_t(s));
      step.slot_mapping.push_back(seq->block_table.slot(p));
    }
    step.add_sequence(seq->block_table.block_ids());
    if (end == seq->num_tokens()) {  // caught up: sample the next token
      step.logits_indices.push_back(int32_t(step.token_ids.size() - 1));
      sampled.push_back(seq);
    }
  }
}

}  // namespace llmesh::engine
