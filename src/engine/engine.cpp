#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <future>

#include "core/error.h"
#include "core/log.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "engine/step_builder.h"
#include "engine/token_selector.h"

namespace llmesh::engine {

namespace {

int64_t context_limit(const model::ModelConfig& config, const EngineOptions& options) {
  if (options.context_tokens <= 0) return config.max_context();
  check(options.context_tokens <= config.max_context(), "a context of {} tokens is more than the model's {}",
        options.context_tokens, config.max_context());
  return options.context_tokens;
}

kv::KvCacheConfig kv_cache_config(const Executor& executor, const EngineOptions& options) {
  const model::ModelConfig& config = executor.config();
  const int64_t kv_tokens = options.kv_cache_tokens > 0 ? options.kv_cache_tokens : context_limit(config, options);
  kv::KvCacheConfig kc;
  kc.block_size = options.block_size;
  kc.num_blocks = (kv_tokens + options.block_size - 1) / options.block_size;
  kc.enable_prefix_cache = options.enable_prefix_cache;
  // Cached K/V belong to these weights, this block size and KV dtype: nothing else shares them.
  kc.cache_namespace =
      kv::cache_namespace(options.model_identity, config.arch, options.block_size, dtype_name(options.kv_dtype));
  return kc;
}

// Prompt tokens computed in this step (decode tokens are not prompt tokens).
int64_t count_prompt_tokens(const ScheduledBatch& batch) {
  int64_t n = 0;
  for (const auto& s : batch) {
    const int64_t begin = s.sequence->num_computed_tokens - s.num_new_tokens;
    n += std::max<int64_t>(0, std::min(s.sequence->num_prompt_tokens, begin + s.num_new_tokens) - begin);
  }
  return n;
}

}  // namespace

class Engine::Impl {
 public:
  Impl(std::unique_ptr<Executor> executor, const EngineOptions& options)
      : executor_(std::move(executor)),
        options_(options),
        context_tokens_(context_limit(executor_->config(), options)),
        kv_(kv_cache_config(*executor_, options)),
        scheduler_(SchedulerOptions{options.max_running_requests, options.max_batched_tokens}, kv_),
        selector_(options.eos_token_ids, context_tokens_) {
    const model::ModelConfig& config = executor_->config();
    // A step holds at most the token budget, and one logits row per running request.
    executor_->reserve(model::kv_cache_shape(config, options.block_size, kv_.num_blocks(), options.kv_dtype),
                       model::StepShape{options.max_batched_tokens, options.max_running_requests});
    for (kv::KvCacheListener* l : options.kv_listeners) kv_.add_listener(l);
    if (options.kv_tiers.enabled() && options.enable_prefix_cache) {
      const kv::BlockFileLayout layout{kv_.config().cache_namespace, uint32_t(options.block_size),
                                       uint64_t(executor_->bytes_per_block())};
      tiers_ = std::make_unique<kv::KvTiers>(options.kv_tiers, *executor_, layout);
      kv_.add_listener(tiers_.get());
      kv_.set_lower_tier(tiers_.get());
    }
    publish_stats();
    thread_ = std::thread([this] { loop(); });
  }

  ~Impl() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  std::shared_ptr<RequestHandle> submit(Request request) {
    std::vector<Request> one;
    one.push_back(std::move(request));
    return submit_all(std::move(one)).front();
  }

  // Checks every request first, then queues them under one lock: the scheduler
  // sees them together (or none of them), however fast it steps.
  std::vector<std::shared_ptr<RequestHandle>> submit_all(std::vector<Request> requests) {
    for (const Request& r : requests) validate(r);
    std::vector<std::shared_ptr<RequestHandle>> handles;
    {
      std::lock_guard lock(mu_);
      if (int64_t(incoming_.size() + requests.size()) + stats_.num_waiting > options_.max_waiting_requests)
        throw QueueFullError("the server is busy: too many waiting requests");
      for (Request& r : requests) {
        auto handle = std::make_shared<RequestHandle>(r.request_id);
        incoming_.push_back(std::make_unique<Sequence>(std::move(r), handle, options_.block_size, next_arrival_++));
        handles.push_back(std::move(handle));
      }
    }
    cv_.notify_all();
    return handles;
  }

  void validate(const Request& request) const {
    const int64_t num_prompt = int64_t(request.prompt_ids.size());
    check(num_prompt > 0, "the prompt is empty");
    check(request.max_tokens >= 1, "max_tokens must be at least 1");
    check(num_prompt + request.max_tokens <= context_tokens_,
          "prompt ({} tokens) + max_tokens ({}) exceeds the context length ({})", num_prompt, request.max_tokens,
          context_tokens_);
    check(num_prompt + request.max_tokens <= kv_cache_tokens(),
          "prompt ({} tokens) + max_tokens ({}) exceeds the KV cache ({} tokens); raise --kv-cache-tokens", num_prompt,
          request.max_tokens, kv_cache_tokens());
    const int64_t vocab = executor_->config().vocab_size;
    for (int32_t id : request.prompt_ids) check(id >= 0 && id < vocab, "token id {} is outside the vocabulary", id);
  }

  EngineStats stats() const {
    std::lock_guard lock(mu_);
    EngineStats s = stats_;
    s.num_waiting += int64_t(incoming_.size());
    return s;
  }

  void flush_tier_writes() {
    if (tiers_) tiers_->flush();  // the disk tier's queue has its own lock
  }

  int64_t flush_cache(bool tiers) {
    std::promise<int64_t> done;
    auto result = done.get_future();
    {
      std::lock_guard lock(mu_);
      flush_requests_.push_back({tiers, &done});
    }
    cv_.notify_all();
    return result.get();
  }

  int64_t kv_cache_tokens() const { return kv_.num_blocks() * options_.block_size; }
  int64_t context_tokens() const { return context_tokens_; }
  DType kv_dtype() const { return options_.kv_dtype; }
  int64_t kv_bytes_per_token() const { return int64_t(executor_->bytes_per_block()) / options_.block_size; }
  kv::BlockHash cache_namespace() const { return kv_.config().cache_namespace; }

 private:
  void loop() {
    while (true) {
      std::vector<std::unique_ptr<Sequence>> arrived;
      std::vector<FlushRequest> flushes;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !incoming_.empty() || !flush_requests_.empty() || scheduler_.has_work(); });
        if (stop_) break;
        arrived.swap(incoming_);
        flushes.swap(flush_requests_);
      }
      for (const FlushRequest& f : flushes)
        f.done->set_value(kv_.flush() + (f.tiers && tiers_ ? tiers_->clear() : 0));
      for (auto& seq : arrived) scheduler_.add(std::move(seq));
      drop_cancelled();
      try {
        step();
      } catch (const std::exception& e) {
        log_error("engine step failed: {}", e.what());
        fail_all(e.what());
      }
      publish_stats();
    }
    fail_all("the server is shutting down");
  }

  void drop_cancelled() {
    std::vector<Sequence*> cancelled;
    scheduler_.for_each([&](Sequence* s) {
      if (s->handle->cancelled()) cancelled.push_back(s);
    });
    for (Sequence* s : cancelled) abort(s);
  }

  // schedule -> build the step -> execute -> sample -> update.
  void step() {
    const ScheduledBatch batch = scheduler_.schedule();
    if (batch.empty()) {
      if (scheduler_.has_work() && scheduler_.running().empty()) {
        // Nothing running and the head of the queue still does not fit: it never will.
        fail_one(scheduler_.waiting().front(), "the request does not fit in the KV cache");
      }
      return;
    }
    build_step_input(batch, step_, sampled_);
    const auto start = std::chrono::steady_clock::now();
    StepOutput& output = executor_->execute(step_);
    record_prefill_chunks(batch, start, std::chrono::steady_clock::now());
    scheduler_.on_step_done(batch);
    stats_prompt_tokens_ += count_prompt_tokens(batch);
    for (size_t i = 0; i < sampled_.size(); ++i) apply(sampled_[i], output.row(int64_t(i)));
  }

  // Each sequence that caught up by more than a decode token this step (before on_step_done counts them).
  void record_prefill_chunks(const ScheduledBatch& batch, std::chrono::steady_clock::time_point start,
                             std::chrono::steady_clock::time_point end) {
    for (const ScheduledSequence& s : batch) {
      const Sequence* seq = s.sequence;
      const bool decode = s.num_new_tokens == 1 && seq->num_computed_tokens + 1 == seq->num_tokens() &&
                          seq->num_output_tokens() > 0;
      if (decode) continue;
      seq->handle->timeline().on_prefill_step(start, end, s.num_new_tokens, seq->num_computed_tokens,
                                              seq->num_preemptions);
    }
  }

  void apply(Sequence* seq, std::span<float> logits) {
    if (seq->request.return_first_logits && !seq->first_event_sent) seq->first_logits.assign(logits.begin(), logits.end());
    Selection selection = selector_.select(*seq, logits);
    if (!selection.error.empty()) {
      fail_one(seq, selection.error);
      return;
    }
    if (selection.token) {
      ++stats_generation_tokens_;
      const FinishReason finish_reason = selection.token->finish_reason;
      push(seq, std::move(*selection.token));
      if (finish_reason != FinishReason::None) {
        finish(seq);
        return;
      }
    }
    if (selection.then_eos) finish_with_eos(seq);
  }

  // Ends a constrained request whose output is complete with an EOS event, as
  // if the model had sampled EOS (which is not text for the API edge).
  void finish_with_eos(Sequence* seq) {
    const auto& eos_ids = selector_.eos_token_ids();
    const int32_t eos_id = eos_ids.empty() ? -1 : eos_ids.front();
    TokenEvent ev;
    ev.token_id = eos_id;
    ev.finish_reason = FinishReason::Eos;
    if (eos_id >= 0) {
      seq->tokens.push_back(eos_id);
      ++stats_generation_tokens_;
    }
    push(seq, std::move(ev));
    finish(seq);
  }

  // Sends an event; the first one of a request says how its prompt was served.
  void push(Sequence* seq, TokenEvent ev) {
    if (!seq->first_event_sent) {
      seq->first_event_sent = true;
      ev.num_prompt_tokens = seq->num_prompt_tokens;
      ev.num_cached_tokens = std::max<int64_t>(0, seq->num_cached_tokens);
      ev.first_logits = std::move(seq->first_logits);
    }
    seq->handle->push(std::move(ev));
  }

  void abort(Sequence* seq) {
    TokenEvent ev;
    ev.finish_reason = FinishReason::Aborted;
    push(seq, std::move(ev));
    finish(seq);
  }

  // Forgets a sequence whose last event (finish reason or error) was sent.
  void finish(Sequence* seq) {
    ++stats_finished_;
    kv_.pin(seq->block_table, seq->num_prompt_tokens / options_.block_size, seq->request.cache_ttl_seconds);
    scheduler_.finish(seq);
  }

  void fail_one(Sequence* seq, const std::string& message) {
    TokenEvent ev;
    ev.error = message;
    seq->handle->push(std::move(ev));
    scheduler_.finish(seq);
  }

  void fail_all(const std::string& message) {
    std::vector<Sequence*> all;
    scheduler_.for_each([&](Sequence* s) { all.push_back(s); });
    for (Sequence* s : all) fail_one(s, message);
    std::lock_guard lock(mu_);
    for (auto& s : incoming_) {
      TokenEvent ev;
      ev.error = message;
      s->handle->push(std::move(ev));
    }
    incoming_.clear();
  }

  void publish_stats() {
    std::lock_guard lock(mu_);
    stats_.num_running = int64_t(scheduler_.running().size());
    stats_.num_waiting = int64_t(scheduler_.waiting().size());
    stats_.num_blocks_total = kv_.num_blocks();
    stats_.num_blocks_used = kv_.num_blocks() - kv_.num_free_blocks();
    stats_.num_blocks_cached = kv_.num_cached_blocks();
    stats_.num_blocks_pinned = kv_.num_pinned_blocks();
    stats_.num_evicted_blocks = kv_.num_evictions();
    stats_.num_promoted_blocks = kv_.block_counters().promoted_blocks;
    stats_.num_failed_promotions = kv_.block_counters().failed_promotions;
    stats_.has_tiers = tiers_ != nullptr;
    if (tiers_) stats_.tiers = tiers_->stats();
    stats_.prefix_queried_tokens = scheduler_.counters().prefix_queried_tokens;
    stats_.prefix_hit_tokens = scheduler_.counters().prefix_hit_tokens;
    stats_.num_preemptions = scheduler_.counters().num_preemptions;
    stats_.prompt_tokens = stats_prompt_tokens_;
    stats_.generation_tokens = stats_generation_tokens_;
    stats_.num_finished = stats_finished_;
  }

  // Loop thread only:
  std::unique_ptr<Executor> executor_;
  EngineOptions options_;
  int64_t context_tokens_;
  kv::KvCacheManager kv_;
  std::unique_ptr<kv::KvTiers> tiers_;  // below the pool; reads and writes executor_'s blocks
  Scheduler scheduler_;
  TokenSelector selector_;
  model::StepInput step_;
  std::vector<Sequence*> sampled_;  // the sequences of step_'s logits rows
  int64_t stats_prompt_tokens_ = 0, stats_generation_tokens_ = 0, stats_finished_ = 0;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Sequence>> incoming_;
  struct FlushRequest {
    bool tiers;
    std::promise<int64_t>* done;
  };
  std::vector<FlushRequest> flush_requests_;
  EngineStats stats_;
  uint64_t next_arrival_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

Engine::Engine(std::unique_ptr<Executor> executor, const EngineOptions& options)
    : impl_(std::make_unique<Impl>(std::move(executor), options)) {}
Engine::~Engine() = default;
std::shared_ptr<RequestHandle> Engine::submit(Request request) { return impl_->submit(std::move(request)); }
std::vector<std::shared_ptr<RequestHandle>> Engine::submit_all(std::vector<Request> requests) {
  return impl_->submit_all(std::move(requests));
}
EngineStats Engine::stats() const { return impl_->stats(); }
int64_t Engine::flush_cache(bool tiers) { return impl_->flush_cache(tiers); }
void Engine::flush_tier_writes() { impl_->flush_tier_writes(); }

int64_t Engine::kv_cache_tokens() const { return impl_->kv_cache_tokens(); }
int64_t Engine::context_tokens() const { return impl_->context_tokens(); }
DType Engine::kv_dtype() const { return impl_->kv_dtype(); }
int64_t Engine::kv_bytes_per_token() const { return impl_->kv_bytes_per_token(); }
kv::BlockHash Engine::cache_namespace() const { return impl_->cache_namespace(); }

}  // namespace llmesh::engine
