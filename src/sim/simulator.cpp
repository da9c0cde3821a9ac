#include "sim/simulator.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <deque>
#include <memory>

#include "core/error.h"
#include "sim/event_queue.h"
#include "sim/prefix_cache.h"
#include "sim/router.h"
#include "sim/step_time_model.h"

namespace llmesh::sim {
namespace {

enum class Role { Mixed, PrefillOnly, DecodeOnly };
const char* role_name(Role role) {
  return role == Role::Mixed ? "mixed" : role == Role::PrefillOnly ? "prefill" : "decode";
}

enum class RequestState { Queued, Prefilling, Decoding, Transferring, Done };

struct Request {
  int request_id = 0;
  int session_id = 0;
  int turn_index = 0;
  bool is_compaction = false;
  int epoch = 0;
  CacheKey private_key = 0;
  CacheKey shared_key = 0;  // 0 = none
  int64_t shared_tokens = 0;
  int64_t context_tokens = 0;  // private context before this turn (P)
  int64_t context_computed_tokens = 0;  // of P, computed before in this context
  int64_t new_tokens = 0;      // N
  int64_t output_tokens = 0;   // O
  double arrival_s = 0;
  RequestState state = RequestState::Queued;
  int worker_id = -1;
  int decode_worker_id = -1;
  int64_t hit_tokens = 0;
  int64_t restored_tokens = 0;
  int64_t computed_tokens = 0;  // prompt tokens in KV (hits + restores + prefilled)
  int64_t generated_tokens = 0;
  double ready_s = 0;  // host-tier restore finishes
  double first_token_s = -1;
  int64_t prompt_tokens() const { return shared_tokens + context_tokens + new_tokens; }
};

struct Session {
  int next_turn = 0;
  int epoch = 0;
  int64_t context_tokens = 0;  // private context (after the shared prefix)
  // Of that context, tokens already computed once in place (a fresh summary after
  // compaction is not), so a miss on them is recomputation.
  int64_t context_computed_tokens = 0;
  bool live = true;
  int pending_subagents = 0;
  int queued_worker_id = -1;
};

struct Worker {
  int worker_id = 0;
  int group_index = 0;
  int replica = 0;
  Role role = Role::Mixed;
  std::string name;
  std::unique_ptr<WorkerCache> cache;
  std::unique_ptr<HostTier> host;
  std::deque<int> queue;     // request ids waiting for admission, FIFO
  std::vector<int> running;  // admitted request ids, admission order
  int num_decoding = 0;
  int num_transferring = 0;  // prefill done, KV still pinned here until sent
  // The queue head did not fit; nothing is retried until KV is freed here.
  bool admission_blocked = false;
  double accounted_until_s = 0;
  WorkerStats stats;
  bool has_work() const { return !queue.empty() || !running.empty(); }
};

struct Group {
  int group_index = 0;
  int replica = 0;
  Role role = Role::Mixed;
  std::vector<int> worker_ids;
  std::unique_ptr<StepTimeModel> step_model;
  bool busy = false;
  bool wake_pending = false;
  Phase last_phase = Phase::Decode;
  int consecutive_decode_steps = 0;
  // The step in flight.
  Phase step_phase = Phase::Decode;
  struct Chunk {
    int request_id;
    int64_t tokens;
  };
  std::vector<Chunk> step_chunks;
  int64_t step_repeats = 1;  // decode steps folded into this one
};

class Simulation : public SessionStatus {
 public:
  Simulation(const SimConfig& config, const Workload& workload, SimObserver* observer)
      : config_(config), workload_(workload), observer_(observer) {
    build_cluster();
    sessions_.resize(workload.sessions.size());
    router_ = make_router(config.routing, static_cast<int>(entry_workers_.size()), config.seed);
  }

  SimResult run() {
    auto wall_start = std::chrono::steady_clock::now();
    for (const SessionScript& s : workload_.sessions) {
      if (s.parent_session_id < 0) events_.push(s.start_s, EventKind::TurnIssue, s.session_id);
    }
    while (!events_.empty()) {
      Event e = events_.pop();
      now_ = e.time_s;
      switch (e.kind) {
        case EventKind::TurnIssue: issue_turn(e.target); break;
        case EventKind::TransferDone: finish_transfer(e.target); break;
        case EventKind::StepEnd: finish_step(groups_[e.target]); break;
        case EventKind::Wake:
          groups_[e.target].wake_pending = false;
          if (!groups_[e.target].busy) start_step(groups_[e.target]);
          break;
      }
    }
    for (size_t s = 0; s < sessions_.size(); ++s) {
      check(!sessions_[s].live, "sim: session {} stalled at turn {} (a request could never be admitted)",
            workload_.sessions[s].name, sessions_[s].next_turn);
    }
    result_.makespan_s = makespan_s_;
    for (Worker& w : workers_) account_gap(w, makespan_s_);
    std::vector<double> ttft, latency;
    for (const TurnRecord& t : result_.turns) {
      ttft.push_back(t.first_token_s - t.arrival_s);
      latency.push_back(t.finish_s - t.arrival_s);
    }
    result_.ttft_s = summarize(std::move(ttft));
    result_.turn_latency_s = summarize(std::move(latency));
    result_.num_sessions = static_cast<int>(sessions_.size());
    for (Worker& w : workers_) {
      w.stats.kv_capacity_tokens = w.cache->capacity_tokens();
      result_.workers.push_back(w.stats);
    }
    result_.wall_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    return std::move(result_);
  }

  // SessionStatus
  bool is_live(int session_id, int epoch) const override {
    const Session& s = sessions_[session_id];
    return s.live && s.epoch == epoch;
  }
  bool is_queued_on(int session_id, int worker_id) const override {
    return sessions_[session_id].queued_worker_id == worker_id;
  }

 private:
  // ---- cluster layout ----
  void add_group(int replica, Role role, int num_workers_in_group, int tp_size, int ep_size, const char* prefix,
                 int& index_in_pool) {
    Group g;
    g.group_index = static_cast<int>(groups_.size());
    g.replica = replica;
    g.role = role;
    g.step_model = make_step_time_model(config_, tp_size, ep_size);
    for (int i = 0; i < num_workers_in_group; ++i) {
      Worker w;
      w.worker_id = static_cast<int>(workers_.size());
      w.group_index = g.group_index;
      w.replica = replica;
      w.role = role;
      w.name = fmt::format("r{}.{}{}", replica, prefix, index_in_pool++);
      w.cache = std::make_unique<WorkerCache>(w.worker_id, kv_capacity_, cache_policy_.get());
      w.host = std::make_unique<HostTier>(role == Role::DecodeOnly ? 0 : config_.cache.host_capacity_tokens);
      w.stats.worker_id = w.worker_id;
      w.stats.group_id = g.group_index;
      w.stats.name = w.name;
      w.stats.role = role_name(role);
      if (role != Role::DecodeOnly) entry_workers_.push_back(w.worker_id);
      g.worker_ids.push_back(w.worker_id);
      workers_.push_back(std::move(w));
    }
    groups_.push_back(std::move(g));
  }

  void build_cluster() {
    kv_capacity_ = kv_capacity_tokens_per_worker(config_);
    if (config_.cache.eviction == EvictionPolicy::SessionAware) {
      cache_policy_ = std::make_unique<SessionAwareCachePolicy>();
    } else {
      cache_policy_ = std::make_unique<LruCachePolicy>();
    }
    const DeploymentConfig& d = config_.deployment;
    for (int r = 0; r < d.replicas; ++r) {
      int index = 0;
      switch (d.mode) {
        case DeploymentMode::Tp: add_group(r, Role::Mixed, 1, d.tp_size, d.tp_size, "w", index); break;
        case DeploymentMode::DpAttention:
          add_group(r, Role::Mixed, d.dp_size, d.tp_size, d.tp_size * d.dp_size, "w", index);
          break;
        case DeploymentMode::Disaggregated: {
          for (int g = 0; g < d.prefill_workers / d.dp_size; ++g) {
            add_group(r, Role::PrefillOnly, d.dp_size, d.tp_size, d.tp_size * d.dp_size, "P", index);
          }
          index = 0;
          for (int g = 0; g < d.decode_workers / d.dp_size; ++g) {
            add_group(r, Role::DecodeOnly, d.dp_size, d.tp_size, d.tp_size * d.dp_size, "D", index);
          }
          break;
        }
      }
    }
    result_.timeline = ActivityTimeline(static_cast<int>(workers_.size()));
  }

  // ---- activity accounting ----
  void record(Worker& w, Activity activity, double start_s, double end_s) {
    if (end_s <= start_s) return;
    w.stats.seconds[static_cast<int>(activity)] += end_s - start_s;
    result_.timeline.add(w.worker_id, activity, start_s, end_s);
    if (observer_) observer_->on_activity(w.worker_id, activity, start_s, end_s);
  }

  // Closes the span since the worker was last accounted: waiting if it had
  // requests, idle if not. Call before the worker's requests change.
  void account_gap(Worker& w, double until_s) {
    if (until_s <= w.accounted_until_s) return;
    record(w, w.has_work() ? Activity::Waiting : Activity::Idle, w.accounted_until_s, until_s);
    w.accounted_until_s = until_s;
  }

  void request_wake(Group& g, bool align_to_tick) {
    if (g.busy || g.wake_pending) return;
    double t = now_;
    double tick = config_.scheduler.decision_tick_s;
    if (align_to_tick && tick > 0) t = std::ceil(now_ / tick - 1e-9) * tick;
    g.wake_pending = true;
    events_.push(t, EventKind::Wake, g.group_index);
  }

  // ---- sessions and turns ----
  void issue_turn(int session_id) {
    const SessionScript& script = workload_.sessions[session_id];
    Session& s = sessions_[session_id];
    const TurnSpec& turn = script.turns[s.next_turn];
    Request r;
    r.request_id = static_cast<int>(requests_.size());
    r.session_id = session_id;
    r.turn_index = s.next_turn;
    r.epoch = s.epoch;
    r.private_key = private_cache_key(session_id, s.epoch);
    r.shared_key = script.shared_prefix_id ? shared_cache_key(script.shared_prefix_id) : 0;
    r.shared_tokens = script.shared_prefix_tokens;
    r.context_tokens = s.context_tokens;
    r.context_computed_tokens = s.context_computed_tokens;
    r.arrival_s = now_;
    // Turn 0's input includes the shared prefix; it is kept apart for caching.
    int64_t new_tokens = s.next_turn == 0 ? turn.input_tokens - script.shared_prefix_tokens : turn.input_tokens;
    int64_t cap = config_.workload.context_cap_tokens;
    if (cap > 0 && r.shared_tokens + s.context_tokens + new_tokens > cap &&
        s.context_tokens > config_.workload.compact_to_tokens) {
      // The agent compacts first: the model summarizes the context, which then
      // restarts (a new epoch) as shared prefix + summary.
      r.is_compaction = true;
      r.new_tokens = config_.workload.compaction_prompt_tokens;
      r.output_tokens = config_.workload.compact_to_tokens;
    } else {
      r.new_tokens = new_tokens;
      r.output_tokens = turn.output_tokens;
    }
    requests_.push_back(r);
    result_.num_requests++;
    route_and_enqueue(requests_.back());
  }

  void route_and_enqueue(Request& r) {
    std::vector<RouteCandidate> candidates(entry_workers_.size());
    bool lookup = router_->needs_cache_lookup();
    for (size_t i = 0; i < entry_workers_.size(); ++i) {
      const Worker& w = workers_[entry_workers_[i]];
      candidates[i].worker_id = w.worker_id;
      candidates[i].num_outstanding_requests = static_cast<int>(w.queue.size() + w.running.size());
      if (lookup) candidates[i].cached_prompt_tokens = cached_prompt_tokens(w, r);
    }
    size_t pick = router_->route(r.session_id, candidates);
    enqueue(workers_[entry_workers_[pick]], r);
  }

  int64_t cached_prompt_tokens(const Worker& w, const Request& r) const {
    int64_t shared = r.shared_key ? std::min(r.shared_tokens, w.cache->cached_tokens(r.shared_key)) : 0;
    if (shared < r.shared_tokens) return shared;
    return shared + std::min(r.context_tokens, w.cache->cached_tokens(r.private_key));
  }

  void enqueue(Worker& w, Request& r) {
    account_gap(w, now_);
    r.state = RequestState::Queued;
    w.queue.push_back(r.request_id);
    if (w.role != Role::DecodeOnly) {
      r.worker_id = w.worker_id;
      sessions_[r.session_id].queued_worker_id = w.worker_id;
    } else {
      r.decode_worker_id = w.worker_id;
    }
    request_wake(groups_[w.group_index], /*align_to_tick=*/true);
  }

  void finish_request(Request& r) {
    r.state = RequestState::Done;
    makespan_s_ = std::max(makespan_s_, now_);
    TurnRecord t;
    t.session_id = r.session_id;
    t.turn_index = r.turn_index;
    t.is_compaction = r.is_compaction;
    t.worker_id = r.worker_id;
    t.decode_worker_id = r.decode_worker_id;
    t.arrival_s = r.arrival_s;
    t.first_token_s = r.first_token_s;
    t.finish_s = now_;
    t.prompt_tokens = r.prompt_tokens();
    t.new_input_tokens = r.new_tokens;
    t.hit_tokens = r.hit_tokens;
    t.restored_tokens = r.restored_tokens;
    t.output_tokens = r.output_tokens;
    result_.turns.push_back(t);
    result_.output_tokens += r.output_tokens;

    const SessionScript& script = workload_.sessions[r.session_id];
    Session& s = sessions_[r.session_id];
    if (r.is_compaction) {
      result_.num_compactions++;
      s.epoch++;
      s.context_tokens = r.output_tokens;  // the summary
      s.context_computed_tokens = 0;       // new position: never prefilled here
      events_.push(now_, EventKind::TurnIssue, r.session_id);  // the deferred turn, at once
      return;
    }
    s.context_tokens += r.new_tokens + r.output_tokens;
    s.context_computed_tokens = s.context_tokens;
    const TurnSpec& turn = script.turns[s.next_turn];
    s.next_turn++;
    if (!turn.spawned_session_ids.empty()) {
      s.pending_subagents = static_cast<int>(turn.spawned_session_ids.size());
      for (int sub : turn.spawned_session_ids) events_.push(now_, EventKind::TurnIssue, sub);
      return;
    }
    continue_session(r.session_id);
  }

  // The session's next turn after think time, or its end.
  void continue_session(int session_id) {
    const SessionScript& script = workload_.sessions[session_id];
    Session& s = sessions_[session_id];
    if (s.next_turn < static_cast<int>(script.turns.size())) {
      events_.push(now_ + script.turns[s.next_turn].delay_s, EventKind::TurnIssue, session_id);
      return;
    }
    s.live = false;
    router_->end_session(session_id);
    if (script.parent_session_id >= 0) {
      Session& parent = sessions_[script.parent_session_id];
      if (--parent.pending_subagents == 0) continue_session(script.parent_session_id);
    }
  }

  // ---- admission ----
  void count_evictions(Worker& w, const std::vector<EvictionRecord>& evicted) {
    for (const EvictionRecord& e : evicted) {
      if (e.session_id >= 0 && is_live(e.session_id, e.epoch)) {
        result_.evictions_live++;
        result_.evicted_tokens_live += e.tokens_evicted;
      } else {
        result_.evictions_dead++;
      }
      if (e.session_id >= 0 && w.host->enabled()) w.host->store(e.key, e.tokens_before, now_);
    }
  }

  // Tries to admit the head of the queue; false when it does not fit (FIFO:
  // later requests wait behind it).
  bool admit_head(Worker& w) {
    Request& r = requests_[w.queue.front()];
    WorkerCache& cache = *w.cache;
    std::vector<EvictionRecord> evicted;
    if (w.role == Role::DecodeOnly) {
      // The prompt's KV arrives from the prefill worker; room for it and the output.
      CacheKey key = static_cast<CacheKey>(r.request_id) + 1;
      int64_t need = r.prompt_tokens() + r.output_tokens;
      if (!cache.make_room(need, {}, *this, evicted)) {
        check(!w.running.empty(), "sim: a request needs {} tokens of KV but decode worker {} holds {}", need, w.name,
              cache.capacity_tokens());
        return false;
      }
      cache.set_tokens(key, -1, 0, 0, need, now_);
      cache.pin(key);
      r.state = RequestState::Decoding;
      w.num_decoding++;
      return true;
    }
    int64_t shared_cached = r.shared_key ? std::min(r.shared_tokens, cache.cached_tokens(r.shared_key)) : 0;
    bool shared_whole = shared_cached == r.shared_tokens;
    int64_t private_entry = cache.cached_tokens(r.private_key);
    int64_t private_cached = shared_whole ? std::min(r.context_tokens, private_entry) : 0;
    int64_t host_tokens = w.host->enabled() ? w.host->stored_tokens(r.private_key) : 0;
    int64_t restored = shared_whole ? std::max<int64_t>(0, std::min(host_tokens, r.context_tokens) - private_cached) : 0;
    // Footprint after admission: the whole prompt, plus the output on a mixed worker.
    int64_t private_final = r.context_tokens + r.new_tokens + (w.role == Role::Mixed ? r.output_tokens : 0);
    int64_t need = (r.shared_tokens - (r.shared_key ? cache.cached_tokens(r.shared_key) : 0)) +
                   (private_final - private_entry);
    std::vector<CacheKey> keep = {r.private_key};
    if (r.shared_key) keep.push_back(r.shared_key);
    if (!cache.make_room(need, keep, *this, evicted)) {
      check(!w.running.empty() || w.num_transferring > 0,
            "sim: a request needs {} tokens of KV but worker {} holds {}; raise cache.kv_capacity_tokens or lower "
            "workload.context_cap_tokens",
            r.prompt_tokens() + r.output_tokens, w.name, cache.capacity_tokens());
      return false;
    }
    count_evictions(w, evicted);
    if (r.shared_key) {
      cache.set_tokens(r.shared_key, -1, 0, 0, std::max(r.shared_tokens, cache.cached_tokens(r.shared_key)), now_);
      cache.pin(r.shared_key);
    }
    cache.set_tokens(r.private_key, r.session_id, r.epoch, r.shared_key, private_final, now_);
    cache.pin(r.private_key);
    r.hit_tokens = shared_cached + private_cached;
    r.restored_tokens = restored;
    r.computed_tokens = r.hit_tokens + restored;
    r.ready_s = now_ + restored * config_.model.kv_bytes_per_token / (config_.cache.host_restore_gb_per_s * 1e9);
    r.state = RequestState::Prefilling;
    result_.prompt_tokens += r.prompt_tokens();
    result_.hit_tokens += r.hit_tokens;
    result_.restored_tokens += restored;
    result_.recomputed_tokens += std::max<int64_t>(0, r.context_computed_tokens - private_cached - restored);
    sessions_[r.session_id].queued_worker_id = -1;
    return true;
  }

  void admit(Worker& w) {
    if (w.admission_blocked) return;
    while (!w.queue.empty() && static_cast<int>(w.running.size()) < config_.scheduler.max_running_requests) {
      int request_id = w.queue.front();
      if (!admit_head(w)) {
        w.admission_blocked = true;
        break;
      }
      w.queue.pop_front();
      w.running.push_back(request_id);
    }
  }

  // ---- steps ----
  bool wants_prefill(const Worker& w) const {
    for (int id : w.running) {
      const Request& r = requests_[id];
      if (r.state == RequestState::Prefilling && r.ready_s <= now_) return true;
    }
    return false;
  }

  // Returns false when the group has nothing to run now. `stable_steps` is how
  // many steps in a row the same decision holds while no event intervenes.
  bool choose_phase(Group& g, Phase& phase, int64_t& stable_steps) {
    const int64_t kUnlimited = INT64_MAX;
    stable_steps = 1;
    int num_prefill = 0, num_decode = 0;
    for (int id : g.worker_ids) {
      if (wants_prefill(workers_[id])) num_prefill++;
      if (workers_[id].num_decoding > 0) num_decode++;
    }
    if (num_prefill == 0 && num_decode == 0) return false;
    if (num_prefill == 0) {
      phase = Phase::Decode;
      stable_steps = kUnlimited;
      return true;
    }
    if (num_decode == 0) return phase = Phase::Prefill, true;
    switch (config_.scheduler.phase_policy) {
      case PhasePolicy::PrefillFirst: phase = Phase::Prefill; break;
      case PhasePolicy::DecodeFirst:
        phase = Phase::Decode;
        stable_steps = kUnlimited;
        break;
      case PhasePolicy::Majority:
        if (num_prefill != num_decode) {
          phase = num_prefill > num_decode ? Phase::Prefill : Phase::Decode;
          if (phase == Phase::Decode) stable_steps = kUnlimited;
        } else {  // tie: the phase not run last, so neither starves
          phase = g.last_phase == Phase::Prefill ? Phase::Decode : Phase::Prefill;
        }
        break;
      case PhasePolicy::PrefillInterval: {
        int64_t left = config_.scheduler.prefill_interval_steps - g.consecutive_decode_steps;
        phase = left <= 0 ? Phase::Prefill : Phase::Decode;
        if (left > 0) stable_steps = left;
        break;
      }
    }
    return true;
  }

  void start_step(Group& g) {
    for (int id : g.worker_ids) admit(workers_[id]);
    Phase phase = Phase::Decode;
    int64_t stable_steps = 1;
    if (!choose_phase(g, phase, stable_steps)) {
      // Only host-tier restores in flight: look again when the first completes.
      double next_ready = INFINITY;
      for (int id : g.worker_ids) {
        for (int rid : workers_[id].running) {
          const Request& r = requests_[rid];
          if (r.state == RequestState::Prefilling) next_ready = std::min(next_ready, r.ready_s);
        }
      }
      if (next_ready < INFINITY) {
        g.wake_pending = true;
        events_.push(next_ready, EventKind::Wake, g.group_index);
      }
      return;
    }
    std::vector<StepShape> shapes(g.worker_ids.size());
    g.step_phase = phase;
    g.step_chunks.clear();
    int64_t group_tokens = 0;
    for (size_t i = 0; i < g.worker_ids.size(); ++i) {
      Worker& w = workers_[g.worker_ids[i]];
      StepShape& shape = shapes[i];
      shape.phase = phase;
      if (phase == Phase::Prefill) {
        int64_t budget = config_.scheduler.chunk_tokens;
        for (int id : w.running) {
          if (budget == 0) break;
          Request& r = requests_[id];
          if (r.state != RequestState::Prefilling || r.ready_s > now_) continue;
          int64_t take = std::min(budget, r.prompt_tokens() - r.computed_tokens);
          budget -= take;
          g.step_chunks.push_back({id, take});
          shape.num_sequences++;
          shape.num_new_tokens += take;
          shape.sum_context_tokens += r.computed_tokens;
          shape.sum_new_times_context += static_cast<double>(take) * static_cast<double>(r.computed_tokens + take);
          shape.sum_new_squared += static_cast<double>(take) * static_cast<double>(take);
        }
      } else {
        for (int id : w.running) {
          const Request& r = requests_[id];
          if (r.state != RequestState::Decoding) continue;
          shape.num_sequences++;
          shape.num_new_tokens++;
          shape.sum_context_tokens += r.prompt_tokens() + r.generated_tokens;
          stable_steps = std::min(stable_steps, r.output_tokens - r.generated_tokens);
        }
      }
      group_tokens += shape.num_new_tokens;
    }
    for (StepShape& shape : shapes) shape.group_new_tokens = group_tokens;
    // Decode steps repeat with nothing changing but context lengths until a
    // request finishes, the policy would switch, or any event is due; run
    // them as one macro step (same times as stepping one by one).
    double horizon_s = events_.next_time_s();
    for (int id : g.worker_ids) {
      for (int rid : workers_[id].running) {
        const Request& r = requests_[rid];
        if (r.state == RequestState::Prefilling && r.ready_s > now_) horizon_s = std::min(horizon_s, r.ready_s);
      }
    }
    if (phase == Phase::Prefill) stable_steps = 1;
    std::vector<double> seconds(g.worker_ids.size(), 0.0);
    double step_s = 0;
    int64_t num_steps = 0;
    while (num_steps < stable_steps && (num_steps == 0 || now_ + step_s < horizon_s)) {
      double longest = 0;
      for (size_t i = 0; i < g.worker_ids.size(); ++i) {
        if (shapes[i].num_new_tokens == 0) continue;
        double t = g.step_model->step_seconds(shapes[i]);
        seconds[i] += t;
        longest = std::max(longest, t);
        shapes[i].sum_context_tokens += shapes[i].num_sequences;  // each sequence grew by one token
      }
      step_s += longest;
      num_steps++;
    }
    g.step_repeats = num_steps;
    const double end_s = now_ + step_s;
    const Activity busy = phase == Phase::Prefill ? Activity::Prefill : Activity::Decode;
    for (size_t i = 0; i < g.worker_ids.size(); ++i) {
      Worker& w = workers_[g.worker_ids[i]];
      account_gap(w, now_);
      if (shapes[i].num_new_tokens > 0) {
        record(w, busy, now_, now_ + seconds[i]);
        record(w, Activity::Waiting, now_ + seconds[i], end_s);
        w.accounted_until_s = end_s;
      } else if (w.has_work()) {
        record(w, Activity::Waiting, now_, end_s);
        w.accounted_until_s = end_s;
      }  // else: idle, accounted lazily when work arrives
    }
    g.busy = true;
    g.last_phase = phase;
    g.consecutive_decode_steps = phase == Phase::Decode ? g.consecutive_decode_steps + num_steps : 0;
    result_.num_steps += num_steps;
    events_.push(end_s, EventKind::StepEnd, g.group_index);
  }

  void finish_step(Group& g) {
    g.busy = false;
    if (g.step_phase == Phase::Prefill) {
      for (const Group::Chunk& chunk : g.step_chunks) {
        Request& r = requests_[chunk.request_id];
        Worker& w = workers_[r.worker_id];
        r.computed_tokens += chunk.tokens;
        w.stats.prefill_tokens += chunk.tokens;
        result_.prefill_computed_tokens += chunk.tokens;
        if (r.computed_tokens < r.prompt_tokens()) continue;
        r.first_token_s = now_;  // the prefill's last chunk yields the first token
        r.generated_tokens = 1;
        if (w.role == Role::PrefillOnly) {
          r.state = RequestState::Transferring;
          w.num_transferring++;
          double transfer_s = r.prompt_tokens() * config_.model.kv_bytes_per_token /
                              (config_.deployment.kv_transfer_gb_per_s * 1e9);
          events_.push(now_ + transfer_s, EventKind::TransferDone, r.request_id);
        } else if (r.generated_tokens >= r.output_tokens) {
          release_and_finish(w, r);
        } else {
          r.state = RequestState::Decoding;
          w.num_decoding++;
        }
      }
    } else {
      for (int id : g.worker_ids) {
        Worker& w = workers_[id];
        for (int rid : w.running) {
          Request& r = requests_[rid];
          if (r.state != RequestState::Decoding) continue;
          r.generated_tokens += g.step_repeats;
          w.stats.decode_tokens += g.step_repeats;
          result_.decode_step_tokens += g.step_repeats;
          if (r.generated_tokens >= r.output_tokens) {
            w.num_decoding--;
            release_and_finish(w, r);
          }
        }
      }
    }
    for (int id : g.worker_ids) {
      Worker& w = workers_[id];
      // Drop finished and transferring requests from the running list.
      std::erase_if(w.running, [&](int rid) {
        RequestState s = requests_[rid].state;
        return s == RequestState::Done || s == RequestState::Transferring;
      });
      w.stats.peak_kv_tokens = std::max(w.stats.peak_kv_tokens, w.cache->used_tokens());
      if (observer_) observer_->on_kv_usage(w.worker_id, w.cache->used_tokens(), w.cache->capacity_tokens(), now_);
    }
    request_wake(g, /*align_to_tick=*/false);  // a busy engine loops without waiting for a tick
  }

  void release_and_finish(Worker& w, Request& r) {
    w.admission_blocked = false;  // KV and a running slot freed
    if (w.role == Role::DecodeOnly) {
      CacheKey key = static_cast<CacheKey>(r.request_id) + 1;
      w.cache->unpin(key, now_);
      w.cache->set_tokens(key, -1, 0, 0, 0, now_);
    } else {
      w.cache->unpin(r.private_key, now_);
      if (r.shared_key) w.cache->unpin(r.shared_key, now_);
    }
    finish_request(r);
  }

  void finish_transfer(int request_id) {
    Request& r = requests_[request_id];
    Worker& p = workers_[r.worker_id];
    p.cache->unpin(r.private_key, now_);
    if (r.shared_key) p.cache->unpin(r.shared_key, now_);
    p.num_transferring--;
    p.admission_blocked = false;
    request_wake(groups_[p.group_index], /*align_to_tick=*/false);  // room freed
    // Decode worker of the same replica with the fewest requests, then most free KV.
    Worker* best = nullptr;
    for (Worker& w : workers_) {
      if (w.role != Role::DecodeOnly || w.replica != p.replica) continue;
      if (!best) {
        best = &w;
        continue;
      }
      size_t load = w.queue.size() + w.running.size(), best_load = best->queue.size() + best->running.size();
      if (load < best_load || (load == best_load && w.cache->free_tokens() > best->cache->free_tokens())) best = &w;
    }
    check(best != nullptr, "sim: no decode worker in replica {}", p.replica);
    if (r.generated_tokens >= r.output_tokens) {
      r.decode_worker_id = best->worker_id;
      finish_request(r);
      return;
    }
    enqueue(*best, r);
  }

  const SimConfig& config_;
  const Workload& workload_;
  SimObserver* observer_;
  int64_t kv_capacity_ = 0;
  std::unique_ptr<CachePolicy> cache_policy_;
  std::unique_ptr<Router> router_;
  std::vector<Worker> workers_;
  std::vector<Group> groups_;
  std::vector<int> entry_workers_;  // workers that receive new requests
  std::vector<Session> sessions_;
  std::vector<Request> requests_;
  EventQueue events_;
  double now_ = 0;
  double makespan_s_ = 0;
  SimResult result_;
};

}  // namespace

SimResult run_simulation(const SimConfig& config, const Workload& workload, SimObserver* observer) {
  check(!workload.sessions.empty(), "sim: the workload has no sessions");
  Simulation simulation(config, workload, observer);
  return simulation.run();
}

SimResult run_simulation(const SimConfig& config, SimObserver* observer) {
  Workload workload = make_workload(config.workload, config.seed);
  return run_simulation(config, workload, observer);
}

}  // namespace llmesh::sim
