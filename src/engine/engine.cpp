#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>

#include "core/error.h"
#include "core/log.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"

namespace llmesh {

// ---- RequestHandle ------------------------------------------------------------

void RequestHandle::push(TokenEvent event) {
  {
    std::lock_guard lock(mu_);
    if (event.finish_reason != FinishReason::None || !event.error.empty()) finished_ = true;
    events_.push_back(std::move(event));
  }
  cv_.notify_all();
}

bool RequestHandle::next(TokenEvent* event) {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return !events_.empty() || finished_; });
  if (events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

bool RequestHandle::next_for(TokenEvent* event, int64_t timeout_ms, bool* timed_out) {
  std::unique_lock lock(mu_);
  *timed_out = !cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
                             [&] { return !events_.empty() || finished_; });
  if (*timed_out || events_.empty()) return false;
  *event = std::move(events_.front());
  events_.pop_front();
  return true;
}

// ---- Engine ---------------------------------------------------------------------

class Engine::Impl {
 public:
  Impl(LoadedModel& model, const EngineOptions& options) : model_(model), options_(options) {
    const ModelConfig& config = model.config();
    context_tokens_ = options.context_tokens > 0 ? std::min(options.context_tokens, config.max_position)
                                                 : config.max_position;
    const int64_t kv_tokens = options.kv_cache_tokens > 0 ? options.kv_cache_tokens : context_tokens_;
    SchedulerOptions so;
    so.block_size = options.block_size;
    so.num_blocks = (kv_tokens + options.block_size - 1) / options.block_size;
    so.max_running_requests = options.max_running_requests;
    so.max_batched_tokens = options.max_batched_tokens;
    so.enable_prefix_cache = options.enable_prefix_cache;
    // Cached K/V belong to these weights: two models never share blocks.
    so.cache_namespace = hash_namespace(model.files.format + ":" + model.files.path + ":" + model.files.name);
    scheduler_ = std::make_unique<Scheduler>(so);
    KvCacheShape shape{config.num_layers, config.num_kv_heads, config.head_dim, options.block_size, so.num_blocks};
    kv_ = std::make_unique<KvPool>(shape);
    logits_.resize(size_t(config.vocab_size));
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
    const int64_t num_prompt = int64_t(request.prompt_ids.size());
    check(num_prompt > 0, "the prompt is empty");
    check(request.max_tokens >= 1, "max_tokens must be at least 1");
    check(num_prompt + request.max_tokens <= context_tokens_,
          "prompt ({} tokens) + max_tokens ({}) exceeds the context length ({})", num_prompt, request.max_tokens,
          context_tokens_);
    const int64_t kv_tokens = scheduler_->options().num_blocks * options_.block_size;
    check(num_prompt + request.max_tokens <= kv_tokens,
          "prompt ({} tokens) + max_tokens ({}) exceeds the KV cache ({} tokens); raise --kv-cache-tokens", num_prompt,
          request.max_tokens, kv_tokens);
    for (int32_t id : request.prompt_ids)
      check(id >= 0 && id < model_.config().vocab_size, "token id {} is outside the vocabulary", id);
    auto handle = std::make_shared<RequestHandle>(request.request_id);
    {
      std::lock_guard lock(mu_);
      if (int64_t(incoming_.size()) + stats_.num_waiting >= options_.max_waiting_requests)
        throw QueueFullError("the server is busy: too many waiting requests");
      incoming_.push_back(std::make_unique<Sequence>(std::move(request), handle, options_.block_size, next_arrival_++));
    }
    cv_.notify_all();
    return handle;
  }

  EngineStats stats() const {
    std::lock_guard lock(mu_);
    EngineStats s = stats_;
    s.num_waiting += int64_t(incoming_.size());
    return s;
  }

  int64_t flush_cache() {
    std::promise<int64_t> done;
    auto result = done.get_future();
    {
      std::lock_guard lock(mu_);
      flush_requests_.push_back(&done);
    }
    cv_.notify_all();
    return result.get();
  }

  int64_t kv_cache_tokens() const { return scheduler_->options().num_blocks * options_.block_size; }
  int64_t context_tokens() const { return context_tokens_; }

 private:
  void loop() {
    while (true) {
      std::vector<std::unique_ptr<Sequence>> arrived;
      std::vector<std::promise<int64_t>*> flushes;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_ || !incoming_.empty() || !flush_requests_.empty() || scheduler_->has_work(); });
        if (stop_) break;
        arrived.swap(incoming_);
        flushes.swap(flush_requests_);
      }
      for (auto* f : flushes) f->set_value(scheduler_->block_pool().flush());
      for (auto& seq : arrived) scheduler_->add(std::move(seq));
      drop_cancelled();
      try {
        step();
      } catch (const std::exception& e) {
        fail_all(e.what());
      }
      publish_stats();
    }
    fail_all("the server is shutting down");
  }

  void drop_cancelled() {
    std::vector<Sequence*> cancelled;
    scheduler_->for_each([&](Sequence* s) {
      if (s->handle->cancelled()) cancelled.push_back(s);
    });
    for (Sequence* s : cancelled) finish(s, FinishReason::Aborted, -1);
  }

  void step() {
    std::vector<ScheduledSequence> batch = scheduler_->schedule();
    if (batch.empty()) {
      if (scheduler_->has_work() && scheduler_->running().empty()) {
        // Nothing running and the head of the queue still does not fit: it never will.
        Sequence* head = scheduler_->waiting().front();
        fail_one(head, "the request does not fit in the KV cache");
      }
      return;
    }
    input_.clear();
    std::vector<Sequence*> sampled;
    for (size_t s = 0; s < batch.size(); ++s) {
      Sequence* seq = batch[s].sequence;
      const int64_t begin = seq->num_computed_tokens, end = begin + batch[s].num_new_tokens;
      for (int64_t p = begin; p < end; ++p) {
        input_.token_ids.push_back(seq->tokens[size_t(p)]);
        input_.positions.push_back(int32_t(p));
        input_.seq_index.push_back(int32_t(s));
        input_.slot_mapping.push_back(seq->block_table.slot(p));
      }
      input_.block_tables.push_back(seq->block_table.block_ids().data());
      if (end == seq->num_tokens()) {  // caught up: sample the next token
        input_.logits_indices.push_back(int32_t(input_.token_ids.size() - 1));
        sampled.push_back(seq);
      }
    }
    logits_.resize(sampled.size() * size_t(model_.config().vocab_size));
    model_.model->forward(input_, *kv_, logits_.data());
    scheduler_->on_step_done(batch);
    stats_prompt_tokens_ += count_prompt_tokens(batch);

    const int64_t vocab = model_.config().vocab_size;
    for (size_t i = 0; i < sampled.size(); ++i) {
      Sequence* seq = sampled[i];
      std::span<float> row(logits_.data() + int64_t(i) * vocab, size_t(vocab));
      emit_token(seq, row);
    }
  }

  static int64_t count_prompt_tokens(const std::vector<ScheduledSequence>& batch) {
    int64_t n = 0;
    for (const auto& s : batch) {
      const int64_t begin = s.sequence->num_computed_tokens - s.num_new_tokens;
      n += std::max<int64_t>(0, std::min(s.sequence->num_prompt_tokens, begin + s.num_new_tokens) - begin);
    }
    return n;
  }

  void emit_token(Sequence* seq, std::span<float> logits) {
    const Request& r = seq->request;
    TokenConstraint* constraint = r.constraint.get();
    seq->sampler.set_keep_logprobs(r.num_top_logprobs >= 0);
    const bool allow_stop = seq->num_output_tokens() >= r.min_tokens;
    if (constraint) {
      constraint->set_tokens_left(
          std::min(r.max_tokens - seq->num_output_tokens(), context_tokens_ - seq->num_tokens()));
      if (constraint->is_complete() && !constraint->can_continue()) {  // e.g. an empty grammar
        finish_with_eos(seq);
        return;
      }
      if (!mask_for_constraint(seq, logits, allow_stop)) {
        fail_one(seq, "the output constraint allows no token here");
        return;
      }
    } else if (!allow_stop) {  // min_tokens: EOS and stop ids cannot be sampled yet
      for (int32_t id : model_.eos_token_ids) logits[size_t(id)] = -INFINITY;
      for (int32_t id : r.stop_token_ids) logits[size_t(id)] = -INFINITY;
    }
    std::span<const int32_t> prompt(seq->tokens.data(), size_t(seq->num_prompt_tokens));
    std::span<const int32_t> output(seq->tokens.data() + seq->num_prompt_tokens, size_t(seq->num_output_tokens()));
    const int32_t id = seq->sampler.sample(logits, prompt, output);
    seq->tokens.push_back(id);
    ++stats_generation_tokens_;

    TokenEvent ev;
    ev.token_id = id;
    if (r.num_top_logprobs >= 0) {
      const auto& lp = seq->sampler.last_logprobs();
      ev.logprob = lp[size_t(id)];
      if (r.num_top_logprobs > 0) {
        std::vector<int32_t> top(size_t(lp.size()));
        for (size_t i = 0; i < top.size(); ++i) top[i] = int32_t(i);
        const size_t k = std::min(size_t(r.num_top_logprobs), top.size());
        std::partial_sort(top.begin(), top.begin() + long(k), top.end(),
                          [&](int32_t a, int32_t b) { return lp[size_t(a)] > lp[size_t(b)]; });
        for (size_t i = 0; i < k; ++i) ev.top_logprobs.push_back({top[i], lp[size_t(top[i])]});
      }
    }
    const bool is_eos = is_eos_id(id);
    const bool is_stop = std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), id) != r.stop_token_ids.end();
    // Under a constraint, EOS/stop ids were sampleable only when the output was complete.
    const bool constrained_end = constraint && (is_eos || is_stop);
    if (constraint && !constrained_end) {
      try {
        constraint->accept_token(id);
      } catch (const std::exception& e) {  // a broken constraint fails its own request, not the batch
        fail_one(seq, e.what());
        return;
      }
    }
    if (constrained_end || (allow_stop && ((is_eos && !r.ignore_eos) || is_stop))) {
      ev.finish_reason = is_stop ? FinishReason::StopSequence : FinishReason::Eos;
    } else if (seq->num_output_tokens() >= r.max_tokens || seq->num_tokens() >= context_tokens_) {
      ev.finish_reason = FinishReason::Length;
    }
    fill_first_event(seq, &ev);
    const FinishReason finish_reason = ev.finish_reason;
    seq->handle->push(std::move(ev));
    if (finish_reason != FinishReason::None) {
      finish(seq, finish_reason, id);
    } else if (constraint && constraint->is_complete() && !constraint->can_continue()) {
      finish_with_eos(seq);  // the grammar is done: end now rather than run another step
    }
  }

  bool is_eos_id(int32_t id) const {
    return std::find(model_.eos_token_ids.begin(), model_.eos_token_ids.end(), id) != model_.eos_token_ids.end();
  }

  // Applies the request's constraint to `logits`. EOS and stop ids stay
  // possible only when the output is complete (and min_tokens is reached,
  // unless nothing else could follow).
  // False when no token at all is left.
  bool mask_for_constraint(Sequence* seq, std::span<float> logits, bool allow_stop) {
    const Request& r = seq->request;
    TokenConstraint& constraint = *r.constraint;
    end_logits_.clear();
    for (int32_t id : model_.eos_token_ids) end_logits_.emplace_back(id, logits[size_t(id)]);
    for (int32_t id : r.stop_token_ids) end_logits_.emplace_back(id, logits[size_t(id)]);
    constraint.mask_logits(logits);
    for (auto& [id, value] : end_logits_) logits[size_t(id)] = -INFINITY;
    if (constraint.is_complete() && allow_stop) {
      for (auto& [id, value] : end_logits_) logits[size_t(id)] = value;
    }
    return std::any_of(logits.begin(), logits.end(), [](float x) { return x > -INFINITY; });
  }

  // Ends a constrained request whose output is complete with an EOS event, as
  // if the model had sampled EOS (which is not text for the API edge).
  void finish_with_eos(Sequence* seq) {
    const int32_t eos_id = model_.eos_token_ids.empty() ? -1 : model_.eos_token_ids.front();
    TokenEvent ev;
    ev.token_id = eos_id;
    ev.finish_reason = FinishReason::Eos;
    if (eos_id >= 0) {
      seq->tokens.push_back(eos_id);
      ++stats_generation_tokens_;
    }
    fill_first_event(seq, &ev);
    seq->handle->push(std::move(ev));
    finish(seq, FinishReason::Eos, eos_id);
  }

  void fill_first_event(Sequence* seq, TokenEvent* ev) {
    if (seq->first_event_sent) return;
    seq->first_event_sent = true;
    ev->num_prompt_tokens = seq->num_prompt_tokens;
    ev->num_cached_tokens = std::max<int64_t>(0, seq->num_cached_tokens);
  }

  // Ends a sequence; events already pushed carried its finish reason unless it was aborted here.
  void finish(Sequence* seq, FinishReason reason, int32_t last_token) {
    if (reason == FinishReason::Aborted) {
      TokenEvent ev;
      ev.finish_reason = FinishReason::Aborted;
      fill_first_event(seq, &ev);
      seq->handle->push(std::move(ev));
    }
    ++stats_finished_;
    scheduler_->finish(seq);
  }

  void fail_one(Sequence* seq, const std::string& message) {
    TokenEvent ev;
    ev.error = message;
    seq->handle->push(std::move(ev));
    scheduler_->finish(seq);
  }

  void fail_all(const std::string& message) {
    log_error("engine step failed: {}", message);
    std::vector<Sequence*> all;
    scheduler_->for_each([&](Sequence* s) { all.push_back(s); });
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
    const BlockPool& pool = scheduler_->block_pool();
    std::lock_guard lock(mu_);
    stats_.num_running = int64_t(scheduler_->running().size());
    stats_.num_waiting = int64_t(scheduler_->waiting().size());
    stats_.num_blocks_total = pool.num_blocks();
    stats_.num_blocks_used = pool.num_blocks() - pool.num_free_blocks();
    stats_.num_blocks_cached = pool.num_cached_blocks();
    stats_.prefix_queried_tokens = scheduler_->counters().prefix_queried_tokens;
    stats_.prefix_hit_tokens = scheduler_->counters().prefix_hit_tokens;
    stats_.num_preemptions = scheduler_->counters().num_preemptions;
    stats_.prompt_tokens = stats_prompt_tokens_;
    stats_.generation_tokens = stats_generation_tokens_;
    stats_.num_finished = stats_finished_;
  }

  LoadedModel& model_;
  EngineOptions options_;
  int64_t context_tokens_ = 0;
  std::unique_ptr<Scheduler> scheduler_;  // loop thread only
  std::unique_ptr<KvPool> kv_;            // loop thread only
  StepInput input_;
  std::vector<float> logits_;
  std::vector<std::pair<int32_t, float>> end_logits_;  // scratch: EOS/stop logits held back from a constraint's mask
  int64_t stats_prompt_tokens_ = 0, stats_generation_tokens_ = 0, stats_finished_ = 0;

  mutable std::mutex mu_;  // guards everything below
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Sequence>> incoming_;
  std::vector<std::promise<int64_t>*> flush_requests_;
  EngineStats stats_;
  uint64_t next_arrival_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

Engine::Engine(LoadedModel& model, const EngineOptions& options) : impl_(std::make_unique<Impl>(model, options)) {}
Engine::~Engine() = default;
std::shared_ptr<RequestHandle> Engine::submit(Request request) { return impl_->submit(std::move(request)); }
EngineStats Engine::stats() const { return impl_->stats(); }
int64_t Engine::flush_cache() { return impl_->flush_cache(); }
int64_t Engine::kv_cache_tokens() const { return impl_->kv_cache_tokens(); }
int64_t Engine::context_tokens() const { return impl_->context_tokens(); }

}  // namespace llmesh
