#include "engine/executor.h"

#include "core/error.h"
#include "kernels/ops.h"

namespace llmesh::engine {

namespace {

class LocalExecutor : public Executor {
 public:
  explicit LocalExecutor(model::Model& model) : model_(model) {}

  const model::ModelConfig& config() const override { return model_.config(); }
  void reserve(const kv::KvCacheShape& kv, const model::StepShape& max_step) override {
    check(kernels::is_kv_dtype(kv.dtype), "{} is not a KV cache dtype (f32, f16, bf16, q8_0)", dtype_name(kv.dtype));
    kv_ = std::make_unique<kv::KvPool>(kv);
    workspace_ = model_.make_workspace(max_step);
  }

  StepOutput& execute(const model::StepInput& step) override {
    check(kv_ != nullptr, "executor: reserve() was not called");
    output_.vocab_size = model_.config().vocab_size;
    output_.logits.resize(step.logits_indices.size() * size_t(output_.vocab_size));
    model_.forward(step, *kv_, *workspace_, output_.logits.data());
    return output_;
  }

  int64_t bytes_per_block() const override { return kv_->shape().bytes_per_block(); }
  void read_block(int32_t block_id, std::span<std::byte> out) const override { kv_->read_block(block_id, out); }
  void write_block(int32_t block_id, std::span<const std::byte> in) override { kv_->write_block(block_id, in); }

 private:
  model::Model& model_;
  std::unique_ptr<kv::KvPool> kv_;
  std::unique_ptr<model::Workspace> workspace_;  // the step's activations; grows to the largest step seen
  StepOutput output_;
};

}  // namespace

std::unique_ptr<Executor> make_local_executor(model::Model& model) { return std::make_unique<LocalExecutor>(model); }

}  // namespace llmesh::engine
