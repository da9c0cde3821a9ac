#include "dist/sharded_executor.h"

#include <cstring>
#include <string>

#include "core/error.h"
#include "core/log.h"
#include "kernels/ops.h"

namespace llmesh::dist {

namespace {

enum class Op : uint32_t { Reserve = 1, Step = 2, ReadBlock = 3, WriteBlock = 4, Stop = 5 };

struct Header {
  Op op = Op::Stop;
  uint32_t reserved = 0;
  uint64_t payload_bytes = 0;
  int64_t arg = 0;  // block id for read / write
};

// Reserve's payload: the full KV shape and the step shape.
struct ReservePayload {
  int64_t num_layers, num_kv_heads, head_dim, block_size, num_blocks;
  int64_t dtype, shared_value_dim;
  int64_t max_tokens, max_logits;
};

// What every rank does with a command; rank 0's executor and the workers share it.
class ShardRunner {
 public:
  ShardRunner(model::Model& model, Communicator& world, const ParallelLayout& layout)
      : model_(model), world_(world), layout_(layout), shard_(layout.shard(world.rank())) {}

  void reserve(const ReservePayload& p) {
    full_kv_ = kv::KvCacheShape{p.num_layers, p.num_kv_heads, p.head_dim, p.block_size, p.num_blocks, DType(p.dtype),
                                p.shared_value_dim};
    check(kernels::is_kv_dtype(full_kv_.dtype), "{} is not a KV cache dtype (f32, f16, bf16, q8_0)",
          dtype_name(full_kv_.dtype));
    kv_ = std::make_unique<kv::KvPool>(rank_kv_shape(full_kv_, layout_, world_.rank()));
    workspace_ = model_.make_workspace({p.max_tokens, p.max_logits});
    block_counts_.clear();
    for (int r = 0; r < world_.size(); ++r)
      block_counts_.push_back(size_t(rank_kv_shape(full_kv_, layout_, r).bytes_per_block()));
    const char ready = 1;
    std::vector<char> all(size_t(world_.size()));
    world_.all_gather(&ready, 1, all.data());
  }

  // Runs this rank's stage; on rank 0 returns the logits of the whole model.
  void step(const model::StepInput& step, std::vector<float>& logits) {
    check(kv_ != nullptr, "sharded executor: reserve() was not called");
    const model::ModelConfig& config = model_.config();
    const size_t hidden = size_t(step.num_tokens() * config.hidden_size);
    const size_t num_logits = step.logits_indices.size() * size_t(config.vocab_size);
    const int rank = world_.rank(), stage = layout_.stage_of(rank), lane = layout_.lane_of(rank);
    const bool first = shard_.first_stage(), last = shard_.last_stage(config.num_layers);
    if (!first) {
      hidden_in_.resize(hidden);
      world_.recv(hidden_in_.data(), hidden * sizeof(float), layout_.rank_of(stage - 1, lane));
    }
    if (!last) hidden_out_.resize(hidden);
    const bool computes = shard_.computes_logits(config.num_layers);
    if (computes || rank == 0) logits.resize(num_logits);
    model_.forward_stage(step, *kv_, *workspace_, first ? nullptr : hidden_in_.data(),
                         last ? nullptr : hidden_out_.data(), computes ? logits.data() : nullptr);
    if (!last) world_.send(hidden_out_.data(), hidden * sizeof(float), layout_.rank_of(stage + 1, lane));
    if (computes && rank != 0) world_.send(logits.data(), num_logits * sizeof(float), 0);
    if (rank == 0 && !computes) world_.recv(logits.data(), num_logits * sizeof(float), layout_.logits_rank());
  }

  int64_t full_bytes_per_block() const { return full_kv_.bytes_per_block(); }

  void read_block(int32_t block_id, std::byte* all) {
    mine_.resize(block_counts_[size_t(world_.rank())]);
    kv_->read_block(block_id, mine_);
    world_.gather(mine_.data(), block_counts_, all, 0);
  }

  void write_block(int32_t block_id, const std::byte* all) {
    mine_.resize(block_counts_[size_t(world_.rank())]);
    world_.scatter(all, block_counts_, mine_.data(), 0);
    kv_->write_block(block_id, mine_);
  }

  Communicator& world() { return world_; }

 private:
  model::Model& model_;
  Communicator& world_;
  const ParallelLayout& layout_;
  model::ModelShard shard_;
  kv::KvCacheShape full_kv_;
  std::unique_ptr<kv::KvPool> kv_;
  std::unique_ptr<model::Workspace> workspace_;
  std::vector<float> hidden_in_, hidden_out_;
  std::vector<size_t> block_counts_;  // [world] each rank's bytes of one block
  std::vector<std::byte> mine_;
};

// Runs `fn`; a failure ends the job, since the other ranks are inside the same command.
template <typename Fn>
void or_abort(Communicator& world, const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    log_error("rank {}: {} failed: {}; ending the job (the other ranks are waiting on this one)", world.rank(), what,
              e.what());
    world.abort(1);
  }
}

class ShardedExecutor : public engine::Executor {
 public:
  ShardedExecutor(model::Model& model, Communicator& world, const ParallelLayout& layout,
                  std::function<void(const std::string&)> on_lost)
      : runner_(model, world, layout), model_(model), world_(world), on_lost_(std::move(on_lost)) {}

  // A broken job cannot be stopped politely: the workers are not in step.
  ~ShardedExecutor() override {
    if (lost_.empty()) {
      stop_shard_workers(world_);
    } else {
      log_error("ending the job: {}", lost_);
      world_.abort(3);
    }
  }

  const model::ModelConfig& config() const override { return model_.config(); }

  void reserve(const kv::KvCacheShape& kv, const model::StepShape& max_step) override {
    ReservePayload p{kv.num_layers,       kv.num_kv_heads,      kv.head_dim,         kv.block_size,
                     kv.num_blocks,       int64_t(kv.dtype),    kv.shared_value_dim, max_step.max_tokens,
                     max_step.max_logits};
    check(kernels::is_kv_dtype(kv.dtype), "{} is not a KV cache dtype (f32, f16, bf16, q8_0)", dtype_name(kv.dtype));
    const double timeout = world_.timeout();
    world_.set_timeout(0);  // see Op::Reserve
    command("reserving the KV cache", Header{Op::Reserve, 0, sizeof p}, &p, [&] { runner_.reserve(p); });
    world_.set_timeout(timeout);
  }

  engine::StepOutput& execute(const model::StepInput& step) override {
    // Checked here, where a bad id fails only this step, not inside the job's collective.
    const int64_t vocab = model_.config().vocab_size;
    for (int32_t id : step.token_ids)
      check(id >= 0 && id < vocab, "token id {} is outside the vocabulary (size {})", id, vocab);
    const std::string bytes = model::serialize(step);
    output_.vocab_size = vocab;
    command("a step", Header{Op::Step, 0, bytes.size()}, bytes.data(), [&] { runner_.step(step, output_.logits); });
    return output_;
  }

  int64_t bytes_per_block() const override { return runner_.full_bytes_per_block(); }

  void read_block(int32_t block_id, std::span<std::byte> out) const override {
    check(int64_t(out.size()) == bytes_per_block(), "read_block: {} bytes for a block of {}", out.size(),
          bytes_per_block());
    command("reading a KV block", Header{Op::ReadBlock, 0, 0, block_id}, nullptr,
            [&] { runner_.read_block(block_id, out.data()); });
  }

  void write_block(int32_t block_id, std::span<const std::byte> in) override {
    check(int64_t(in.size()) == bytes_per_block(), "write_block: {} bytes for a block of {}", in.size(),
          bytes_per_block());
    command("writing a KV block", Header{Op::WriteBlock, 0, 0, block_id}, nullptr,
            [&] { runner_.write_block(block_id, in.data()); });
  }

 private:
  // Sends a command to the workers and runs rank 0's part of it. Any failure
  // leaves the ranks out of step, so it breaks the executor for good.
  template <typename Fn>
  void command(const char* what, Header header, const void* payload, Fn&& fn) const {
    check(lost_.empty(), "the multi-rank job is broken ({}); it is ending", lost_);
    try {
      world_.broadcast(&header, sizeof header, 0);
      if (header.payload_bytes > 0) world_.broadcast(const_cast<void*>(payload), header.payload_bytes, 0);
      fn();
    } catch (const std::exception& e) {
      lost_ = fmt::format("{} failed on rank 0: {}", what, e.what());
      log_error("{}", lost_);
      if (on_lost_) on_lost_(lost_);
      throw Error(lost_);
    }
  }

  mutable ShardRunner runner_;  // read_block is const for the engine; the gather is not
  model::Model& model_;
  Communicator& world_;
  std::function<void(const std::string&)> on_lost_;
  mutable std::string lost_;  // why the job broke; empty while it works
  engine::StepOutput output_;
};

}  // namespace

void stop_shard_workers(Communicator& world) {
  try {
    Header header{Op::Stop};
    world.broadcast(&header, sizeof header, 0);
  } catch (const std::exception& e) {
    log_error("stopping the worker ranks: {}", e.what());
  }
}

kv::KvCacheShape rank_kv_shape(const kv::KvCacheShape& full, const ParallelLayout& layout, int rank) {
  kv::KvCacheShape shape = full;
  shape.num_layers = layout.stage_layers[size_t(layout.stage_of(rank))];
  shape.num_kv_heads = full.num_kv_heads / layout.sizes.tp;
  return shape;
}

std::unique_ptr<engine::Executor> make_sharded_executor(model::Model& model, Communicator& world,
                                                        const ParallelLayout& layout,
                                                        std::function<void(const std::string&)> on_lost) {
  check(world.rank() == 0, "the sharded executor runs on rank 0");
  return std::make_unique<ShardedExecutor>(model, world, layout, std::move(on_lost));
}

void run_shard_worker(model::Model& model, Communicator& world, const ParallelLayout& layout) {
  ShardRunner runner(model, world, layout);
  std::string payload;
  std::vector<float> logits;
  const double in_command = world.timeout();
  while (true) {
    Header header;
    world.set_timeout(0);
    world.broadcast(&header, sizeof header, 0);
    world.set_timeout(in_command);
    payload.resize(header.payload_bytes);
    if (header.payload_bytes > 0)
      or_abort(world, "receiving a command", [&] { world.broadcast(payload.data(), payload.size(), 0); });
    switch (header.op) {
      case Op::Reserve: {
        ReservePayload p;
        check(payload.size() == sizeof p, "reserve: {} payload bytes", payload.size());
        std::memcpy(&p, payload.data(), sizeof p);
        world.set_timeout(0);
        or_abort(world, "reserving the KV cache", [&] { runner.reserve(p); });
        world.set_timeout(in_command);
        break;
      }
      case Op::Step:
        or_abort(world, "a step", [&] { runner.step(model::deserialize_step_input(payload), logits); });
        break;
      case Op::ReadBlock:
        or_abort(world, "reading a KV block", [&] { runner.read_block(int32_t(header.arg), nullptr); });
        break;
      case Op::WriteBlock:
        or_abort(world, "writing a KV block", [&] { runner.write_block(int32_t(header.arg), nullptr); });
        break;
      case Op::Stop:
        return;
      default:
        log_error("rank {}: unknown command {} from rank 0", world.rank(), uint32_t(header.op));
        world.abort(1);
    }
  }
}

}  // namespace llmesh::dist
