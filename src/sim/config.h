// The simulator's configuration: one struct per config-file section.
//
// A config file is TOML or JSON with the sections below; both are read into
// one nlohmann::json tree first (so `--set a.b=v` overrides and `--sweep`
// work the same for either format), then parsed into SimConfig. Unknown keys
// are errors so a typo never silently falls back to a default.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace llmesh::sim {

struct IntRange {  // uniform integer in [min, max]
  int64_t min = 0;
  int64_t max = 0;
};
struct RealRange {  // uniform real in [min, max]
  double min = 0;
  double max = 0;
};

struct HardwareConfig {
  int num_gpus = 1;
  double memory_gb_per_gpu = 80;
  double memory_bandwidth_gb_per_s = 3350;
  double flops_per_gpu_tflops = 989;  // dense FLOP/s at the weights' precision
  double interconnect_gb_per_s = 100;  // per GPU, for TP all-reduce and EP all-to-all
  double interconnect_latency_us = 5;  // per collective
};

// The communication of a multi-rank llmesh job, from `llmesh inspect --plan
// --json` (model.plan_file): what the ranks of one worker exchange per step.
struct PlannedComm {
  bool given = false;
  int width = 1;                   // ranks per all-reduce group
  int64_t all_reduces_per_step = 0;  // over every stage
  int64_t all_reduce_bytes = 0;    // one all-reduce's input per token (f32 hidden)
  int64_t stage_boundaries = 0;
  int64_t handoff_bytes = 0;       // per token and boundary
  int64_t logits_bytes = 0;        // per sampled token, to rank 0
};

struct ModelSpec {
  double total_params_b = 8;   // billions
  double active_params_b = 8;  // billions touched per token (MoE: < total)
  int num_layers = 32;
  int hidden_size = 4096;
  int attention_dim = 0;  // query heads x head dim; 0 = hidden_size
  double kv_bytes_per_token = 131072;  // all layers, K and V
  double bytes_per_param = 2;
  PlannedComm planned;  // when given, the step's communication comes from it
};

enum class DeploymentMode { Tp, DpAttention, Disaggregated };

struct DeploymentConfig {
  DeploymentMode mode = DeploymentMode::Tp;
  int tp_size = 1;   // GPUs per worker (one attention rank)
  int dp_size = 1;   // workers per phase-synchronized group (DP attention + EP)
  int replicas = 1;  // independent copies of the deployment
  int prefill_workers = 1;  // disaggregated: P pool per replica
  int decode_workers = 1;   // disaggregated: D pool per replica
  double kv_transfer_gb_per_s = 25;  // disaggregated: P -> D
};

enum class EvictionPolicy { Lru, SessionAware };

struct CacheConfig {
  int64_t kv_capacity_tokens = 0;  // per worker; 0 = derive from memory
  double memory_fraction = 0.9;    // of GPU memory usable for weights + KV
  EvictionPolicy eviction = EvictionPolicy::Lru;
  int64_t host_capacity_tokens = 0;  // per worker; 0 = no host tier
  double host_restore_gb_per_s = 25;
};

enum class PhasePolicy { PrefillFirst, DecodeFirst, Majority, PrefillInterval };

struct SchedulerConfig {
  double decision_tick_s = 0;  // an idle group looks for work on this grid; 0 = at once
  PhasePolicy phase_policy = PhasePolicy::Majority;
  int64_t chunk_tokens = 8192;  // prefill budget per worker per step
  int max_running_requests = 64;  // per worker
  int prefill_interval_steps = 8;  // PrefillInterval: prefill after this many decode steps
};

enum class RoutingPolicy { Pinned, RoundRobin, Random, LeastLoaded, CacheAware };

struct RoutingConfig {
  RoutingPolicy policy = RoutingPolicy::Pinned;
  double load_bound_factor = 1.25;  // pinned: bounded-load consistent hashing
  int virtual_nodes = 64;           // pinned: ring points per worker
  int balance_threshold = 4;        // cache_aware: max outstanding-request gap before balancing
};

enum class WorkloadKind { Swarm, Trace };

struct WorkloadConfig {
  WorkloadKind kind = WorkloadKind::Swarm;
  int num_agents = 1;
  double stagger_s = 0;  // agent i starts at i * stagger_s
  IntRange turns{1, 1};
  IntRange input_tokens{1000, 1000};   // new tokens appended per turn
  IntRange output_tokens{100, 100};
  RealRange think_time_s{0, 0};        // before each turn after the first
  int64_t shared_prefix_tokens = 0;    // system prompt + tools, shared by all agents
  int64_t context_cap_tokens = 0;      // 0 = no compaction
  int64_t compact_to_tokens = 10000;   // summary size after compaction
  int64_t compaction_prompt_tokens = 256;
  double subagent_probability = 0;     // per turn
  IntRange subagents_per_spawn{1, 1};
  IntRange subagent_turns{3, 10};
  std::string trace_path;          // kind = trace
  int64_t trace_block_tokens = 512;  // tokens per shared_prefix_hash_ids entry
};

enum class StepTimeKind { Roofline, Calibrated };

// Fitted step-time coefficients (seconds). See step_time_model.h.
struct CalibrationCoefficients {
  double prefill_fixed_s = 0;
  double prefill_per_token_s = 0;
  double prefill_per_token_context_s = 0;  // times sum n_i * (c_i + n_i)
  double decode_fixed_s = 0;
  double decode_per_context_token_s = 0;
  double decode_per_sequence_s = 0;
};

struct StepTimeConfig {
  StepTimeKind kind = StepTimeKind::Roofline;
  double mfu = 0.5;                   // fraction of peak FLOP/s reached
  double bandwidth_efficiency = 0.8;  // fraction of peak memory bandwidth reached
  double overhead_ms = 0;             // per step (launch, scheduling)
  CalibrationCoefficients calibration;
};

struct SimConfig {
  std::string name = "sim";
  uint64_t seed = 1;
  HardwareConfig hardware;
  ModelSpec model;
  DeploymentConfig deployment;
  CacheConfig cache;
  SchedulerConfig scheduler;
  RoutingConfig routing;
  WorkloadConfig workload;
  StepTimeConfig step_time;
};

// Reads a .toml or .json file into a JSON tree. Relative paths inside it
// (workload.trace, step_time.calibration_file) are resolved against the
// file's folder.
nlohmann::json load_config_tree(const std::string& path);

// Parses a TOML document (for tests and `load_config_tree`).
nlohmann::json parse_toml_text(const std::string& text, const std::string& source_name);

// Applies "section.key=value"; value is parsed as JSON when it can be
// (numbers, true/false, [1,2]) and taken as a string otherwise.
void apply_override(nlohmann::json& tree, const std::string& assignment);
void set_by_path(nlohmann::json& tree, const std::string& dotted_path, const nlohmann::json& value);

// Parses and validates; throws llmesh::Error naming the key and the problem.
SimConfig parse_config(const nlohmann::json& tree);

// Derived facts shared by the simulator and the report.
int64_t kv_capacity_tokens_per_worker(const SimConfig& config);
int num_workers(const SimConfig& config);

std::string to_string(PhasePolicy policy);
std::string to_string(RoutingPolicy policy);
std::string to_string(DeploymentMode mode);
std::string to_string(EvictionPolicy policy);

}  // namespace llmesh::sim
