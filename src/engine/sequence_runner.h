// Generation for a single sequence, as `llmesh run` needs it: chunked prefill
// then decode, over the same paged-KV forward pass the server batches.
//
// The runner keeps the tokens whose K/V it holds, so a follow-up prompt that
// extends the previous one (an interactive chat) only prefills the new part.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "engine/finish_reason.h"
#include "engine/loaded_model.h"
#include "engine/sampling_params.h"
#include "kv/block_pool.h"
#include "kv/kv_pool.h"

namespace llmesh {

struct GenerateOptions {
  int64_t max_tokens = 256;
  SamplingParams sampling;
  bool ignore_eos = false;
  int64_t prefill_chunk_tokens = 512;  // tokens per forward pass while prefilling
};

struct GenerateResult {
  std::vector<int32_t> output_ids;
  FinishReason finish_reason = FinishReason::None;
  int64_t num_prompt_tokens = 0;
  int64_t num_cached_tokens = 0;  // prompt tokens whose K/V were reused
  double prefill_seconds = 0;     // until the first token's logits
  double decode_seconds = 0;      // the remaining tokens
  std::vector<float> first_logits;  // logits at the last prompt position (when asked)
};

class SequenceRunner {
 public:
  // The KV pool holds `context_tokens` positions (rounded up to whole blocks).
  SequenceRunner(LoadedModel& model, int64_t context_tokens, int64_t block_size = 16);

  int64_t context_tokens() const { return context_tokens_; }

  // on_token(id) is called for every generated token as soon as it is sampled;
  // returning false stops generation (FinishReason::Aborted).
  GenerateResult generate(const std::vector<int32_t>& prompt_ids, const GenerateOptions& options,
                          const std::function<bool(int32_t)>& on_token, bool keep_first_logits = false);

 private:
  // Runs tokens [begin, end) of `tokens_` through the model; returns the logits
  // of the last one when `want_logits`.
  void forward(int64_t begin, int64_t end, bool want_logits);

  LoadedModel& model_;
  int64_t context_tokens_;
  std::unique_ptr<KvPool> kv_;
  BlockPool blocks_;
  BlockTable table_;
  std::vector<int32_t> tokens_;       // tokens whose K/V are (or are being) computed
  int64_t num_computed_tokens_ = 0;
  StepInput step_;
  std::vector<float> logits_;         // [vocab]
};

}  // namespace llmesh
