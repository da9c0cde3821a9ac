#include "sim/config.h"

#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/error.h"

namespace llmesh::sim {
namespace {

using json = nlohmann::json;

// Reads one section's keys, remembering which were used so unknown keys
// (typos) can be reported instead of silently ignored.
class SectionReader {
 public:
  SectionReader(const json& tree, std::string name) : name_(std::move(name)) {
    if (tree.contains(name_)) {
      section_ = tree.at(name_);
      check(section_.is_object(), "config: [{}] must be a table", name_);
    } else {
      section_ = json::object();
    }
  }

  bool has(const std::string& key) const { return section_.contains(key); }

  double real(const std::string& key, double fallback, double min_value = -1e300) {
    used_.insert(key);
    if (!section_.contains(key)) return fallback;
    const json& v = section_.at(key);
    check(v.is_number(), "config: {}.{} must be a number (got {})", name_, key, v.dump());
    double x = v.get<double>();
    check(std::isfinite(x) && x >= min_value, "config: {}.{} = {} must be >= {}", name_, key, x, min_value);
    return x;
  }

  int64_t integer(const std::string& key, int64_t fallback, int64_t min_value) {
    used_.insert(key);
    if (!section_.contains(key)) return fallback;
    const json& v = section_.at(key);
    check(v.is_number(), "config: {}.{} must be an integer (got {})", name_, key, v.dump());
    double x = v.get<double>();
    check(x == std::floor(x), "config: {}.{} must be an integer (got {})", name_, key, v.dump());
    check(x >= static_cast<double>(min_value), "config: {}.{} = {} must be >= {}", name_, key, x, min_value);
    return static_cast<int64_t>(x);
  }

  std::string text(const std::string& key, const std::string& fallback) {
    used_.insert(key);
    if (!section_.contains(key)) return fallback;
    const json& v = section_.at(key);
    check(v.is_string(), "config: {}.{} must be a string (got {})", name_, key, v.dump());
    return v.get<std::string>();
  }

  // Accepts a number (min = max) or a two-element array [min, max].
  IntRange int_range(const std::string& key, IntRange fallback, int64_t min_value) {
    used_.insert(key);
    if (!section_.contains(key)) return fallback;
    const json& v = section_.at(key);
    IntRange r;
    if (v.is_number()) {
      r.min = r.max = static_cast<int64_t>(v.get<double>());
    } else {
      check(v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number(),
            "config: {}.{} must be a number or [min, max] (got {})", name_, key, v.dump());
      r.min = static_cast<int64_t>(v[0].get<double>());
      r.max = static_cast<int64_t>(v[1].get<double>());
    }
    check(r.min <= r.max && r.min >= min_value, "config: {}.{} = {} needs {} <= min <= max", name_, key,
          v.dump(), min_value);
    return r;
  }

  RealRange real_range(const std::string& key, RealRange fallback) {
    used_.insert(key);
    if (!section_.contains(key)) return fallback;
    const json& v = section_.at(key);
    RealRange r;
    if (v.is_number()) {
      r.min = r.max = v.get<double>();
    } else {
      check(v.is_array() && v.size() == 2 && v[0].is_number() && v[1].is_number(),
            "config: {}.{} must be a number or [min, max] (got {})", name_, key, v.dump());
      r.min = v[0].get<double>();
      r.max = v[1].get<double>();
    }
    check(r.min <= r.max && r.min >= 0, "config: {}.{} = {} needs 0 <= min <= max", name_, key, v.dump());
    return r;
  }

  template <typename Enum>
  Enum choice(const std::string& key, Enum fallback, std::initializer_list<std::pair<const char*, Enum>> options) {
    used_.insert(key);
    if (!section_.contains(key)) return fallback;
    std::string value = text(key, "");
    std::string names;
    for (const auto& [option_name, option_value] : options) {
      if (value == option_name) return option_value;
      names += names.empty() ? option_name : std::string(", ") + option_name;
    }
    fail("config: {}.{} = \"{}\" is not one of: {}", name_, key, value, names);
  }

  const json& raw(const std::string& key) {
    used_.insert(key);
    return section_.at(key);
  }

  void finish() const {
    for (const auto& [key, value] : section_.items()) {
      check(used_.count(key) > 0, "config: unknown key {}.{} (check the spelling; see `llmesh sim --help`)", name_,
            key);
    }
  }

 private:
  std::string name_;
  json section_;
  std::set<std::string> used_;
};

json toml_node_to_json(const toml::node& node) {
  if (const toml::table* table = node.as_table()) {
    json out = json::object();
    for (const auto& [key, value] : *table) out[std::string(key.str())] = toml_node_to_json(value);
    return out;
  }
  if (const toml::array* array = node.as_array()) {
    json out = json::array();
    for (const toml::node& value : *array) out.push_back(toml_node_to_json(value));
    return out;
  }
  if (auto v = node.value_exact<int64_t>()) return *v;
  if (auto v = node.value_exact<double>()) return *v;
  if (auto v = node.value_exact<bool>()) return *v;
  if (auto v = node.value_exact<std::string>()) return *v;
  fail("config: TOML dates and times are not used by llmesh sim (at {}:{})", node.source().begin.line,
       node.source().begin.column);
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  check(in.good(), "cannot open {}", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CalibrationCoefficients parse_calibration(const json& node, const std::string& where) {
  check(node.is_object(), "{}: calibration must be an object", where);
  CalibrationCoefficients c;
  const json prefill = node.value("prefill", json::object());
  const json decode = node.value("decode", json::object());
  auto get = [&](const json& part, const char* part_name, const char* key) {
    check(part.contains(key) && part.at(key).is_number(), "{}: calibration needs numeric {}.{}", where, part_name,
          key);
    return part.at(key).get<double>();
  };
  c.prefill_fixed_s = get(prefill, "prefill", "fixed_s");
  c.prefill_per_token_s = get(prefill, "prefill", "per_token_s");
  c.prefill_per_token_context_s = get(prefill, "prefill", "per_token_context_s");
  c.decode_fixed_s = get(decode, "decode", "fixed_s");
  c.decode_per_context_token_s = get(decode, "decode", "per_context_token_s");
  c.decode_per_sequence_s = get(decode, "decode", "per_sequence_s");
  return c;
}

}  // namespace

json parse_toml_text(const std::string& text, const std::string& source_name) {
  try {
    toml::table table = toml::parse(text, source_name);
    return toml_node_to_json(table);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source().begin;
    fail("{}:{}:{}: TOML error: {}", source_name, where.line, where.column, e.description());
  }
}

json load_config_tree(const std::string& path) {
  std::string text = read_text_file(path);
  std::filesystem::path file_path(path);
  json tree;
  std::string ext = file_path.extension().string();
  if (ext == ".json") {
    try {
      tree = json::parse(text);
    } catch (const json::exception& e) {
      fail("{}: JSON error: {}", path, e.what());
    }
  } else if (ext == ".toml") {
    tree = parse_toml_text(text, path);
  } else {
    fail("{}: config must end in .toml or .json", path);
  }
  check(tree.is_object(), "{}: config must be a table/object at top level", path);
  // Resolve file references relative to the config's folder.
  std::filesystem::path folder = std::filesystem::absolute(file_path).parent_path();
  auto resolve = [&](const char* section, const char* key) {
    if (tree.contains(section) && tree[section].is_object() && tree[section].contains(key) &&
        tree[section][key].is_string()) {
      std::filesystem::path p(tree[section][key].get<std::string>());
      if (p.is_relative()) tree[section][key] = (folder / p).lexically_normal().string();
    }
  };
  resolve("workload", "trace");
  resolve("step_time", "calibration_file");
  resolve("model", "plan_file");
  return tree;
}

void set_by_path(json& tree, const std::string& dotted_path, const json& value) {
  json* node = &tree;
  size_t start = 0;
  while (true) {
    size_t dot = dotted_path.find('.', start);
    std::string part = dotted_path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    check(!part.empty(), "bad config path \"{}\" (want section.key)", dotted_path);
    if (dot == std::string::npos) {
      (*node)[part] = value;
      return;
    }
    if (!node->contains(part)) (*node)[part] = json::object();
    node = &(*node)[part];
    check(node->is_object(), "config path \"{}\": {} is not a table", dotted_path, part);
    start = dot + 1;
  }
}

void apply_override(json& tree, const std::string& assignment) {
  size_t eq = assignment.find('=');
  check(eq != std::string::npos && eq > 0, "override \"{}\" must look like section.key=value", assignment);
  std::string path = assignment.substr(0, eq);
  std::string text = assignment.substr(eq + 1);
  json value;
  try {
    value = json::parse(text);
  } catch (const json::exception&) {
    value = text;  // a bare word such as round_robin
  }
  set_by_path(tree, path, value);
}

namespace {

// The model section's defaults from `llmesh inspect --model M --plan --json [--tp/--pp/--ep]`.
ModelSpec model_from_plan(const std::string& path) {
  json j;
  try {
    j = json::parse(read_text_file(path));
  } catch (const json::exception& e) {
    fail("{}: JSON error: {}", path, e.what());
  }
  const auto number = [&](const json& node, const char* key) {
    check(node.is_object() && node.contains(key) && node[key].is_number(),
          "{}: no number \"{}\" (write the file with: llmesh inspect --model M --plan --json [--tp/--pp/--ep] > {})",
          path, key, path);
    return node[key].get<double>();
  };
  ModelSpec m;
  m.total_params_b = number(j, "parameters") / 1e9;
  m.active_params_b = number(j, "active_parameters") / 1e9;
  m.bytes_per_param = number(j, "weight_bytes") / number(j, "parameters");
  m.num_layers = int(number(j, "num_layers"));
  m.hidden_size = int(number(j, "hidden_size"));
  m.attention_dim = int(number(j, "num_heads") * number(j, "head_dim"));
  m.kv_bytes_per_token = number(j, "kv_bytes_per_token");
  check(j.contains("plan"), "{}: no \"plan\" (add --plan to llmesh inspect)", path);
  const json& p = j["plan"];
  PlannedComm& c = m.planned;
  c.given = true;
  c.all_reduces_per_step = int64_t(number(p, "all_reduces_per_step"));
  c.all_reduce_bytes = int64_t(m.hidden_size) * 4;
  c.stage_boundaries = int64_t(number(p, "stage_boundaries"));
  c.handoff_bytes = int64_t(number(p, "handoff_bytes_per_token"));
  c.logits_bytes = int64_t(number(p, "logits_bytes_per_sampled_token"));
  const int ranks = int(p.at("ranks").size());
  c.width = std::max(1, ranks / int(c.stage_boundaries + 1));
  return m;
}

}  // namespace

SimConfig parse_config(const json& tree) {
  check(tree.is_object(), "config must be a table/object");
  static const std::set<std::string> kSections = {"name", "seed", "hardware", "model", "deployment", "cache",
                                                  "scheduler", "routing", "workload", "step_time"};
  for (const auto& [key, value] : tree.items()) {
    check(kSections.count(key) > 0,
          "config: unknown section [{}] (sections: hardware, model, deployment, cache, scheduler, routing, "
          "workload, step_time; top-level keys: name, seed)",
          key);
  }
  SimConfig config;
  if (tree.contains("name")) {
    check(tree["name"].is_string(), "config: name must be a string");
    config.name = tree["name"].get<std::string>();
  }
  if (tree.contains("seed")) {
    check(tree["seed"].is_number_integer() && tree["seed"].get<int64_t>() >= 0, "config: seed must be an integer >= 0");
    config.seed = tree["seed"].get<uint64_t>();
  }

  SectionReader hw(tree, "hardware");
  config.hardware.num_gpus = static_cast<int>(hw.integer("num_gpus", 1, 1));
  config.hardware.memory_gb_per_gpu = hw.real("memory_gb_per_gpu", 80, 1e-3);
  config.hardware.memory_bandwidth_gb_per_s = hw.real("memory_bandwidth_gb_per_s", 3350, 1e-3);
  config.hardware.flops_per_gpu_tflops = hw.real("flops_per_gpu_tflops", 989, 1e-3);
  config.hardware.interconnect_gb_per_s = hw.real("interconnect_gb_per_s", 100, 1e-3);
  config.hardware.interconnect_latency_us = hw.real("interconnect_latency_us", 5, 0);
  hw.finish();

  SectionReader model(tree, "model");
  // A plan file gives the model's shape and the job's communication; keys set
  // here override its shape.
  const std::string plan_file = model.text("plan_file", "");
  const ModelSpec planned = plan_file.empty() ? ModelSpec{} : model_from_plan(plan_file);
  config.model.planned = planned.planned;
  config.model.total_params_b = model.real("total_params_b", planned.total_params_b, 1e-6);
  config.model.active_params_b =
      model.real("active_params_b", plan_file.empty() ? config.model.total_params_b : planned.active_params_b, 1e-6);
  config.model.num_layers = static_cast<int>(model.integer("num_layers", planned.num_layers, 1));
  config.model.hidden_size = static_cast<int>(model.integer("hidden_size", planned.hidden_size, 1));
  config.model.attention_dim = static_cast<int>(model.integer("attention_dim", planned.attention_dim, 0));
  if (config.model.attention_dim == 0) config.model.attention_dim = config.model.hidden_size;
  config.model.kv_bytes_per_token = model.real("kv_bytes_per_token", planned.kv_bytes_per_token, 1);
  config.model.bytes_per_param = model.real("bytes_per_param", planned.bytes_per_param, 0.01);
  model.finish();
  check(config.model.active_params_b <= config.model.total_params_b,
        "config: model.active_params_b ({}) exceeds model.total_params_b ({})", config.model.active_params_b,
        config.model.total_params_b);

  SectionReader dep(tree, "deployment");
  config.deployment.mode = dep.choice<DeploymentMode>(
      "mode", DeploymentMode::Tp,
      {{"tp", DeploymentMode::Tp}, {"dp_attention", DeploymentMode::DpAttention},
       {"disaggregated", DeploymentMode::Disaggregated}});
  config.deployment.tp_size = static_cast<int>(dep.integer("tp_size", 1, 1));
  config.deployment.dp_size = static_cast<int>(dep.integer("dp_size", 1, 1));
  config.deployment.replicas = static_cast<int>(dep.integer("replicas", 1, 1));
  config.deployment.prefill_workers = static_cast<int>(dep.integer("prefill_workers", 1, 1));
  config.deployment.decode_workers = static_cast<int>(dep.integer("decode_workers", 1, 1));
  config.deployment.kv_transfer_gb_per_s = dep.real("kv_transfer_gb_per_s", 25, 1e-6);
  dep.finish();
  const DeploymentConfig& d = config.deployment;
  if (d.mode == DeploymentMode::Tp) {
    check(d.dp_size == 1, "config: deployment.dp_size = {} needs mode = \"dp_attention\" or \"disaggregated\"",
          d.dp_size);
  }
  if (d.mode == DeploymentMode::Disaggregated) {
    check(d.prefill_workers % d.dp_size == 0 && d.decode_workers % d.dp_size == 0,
          "config: deployment.prefill_workers ({}) and decode_workers ({}) must be multiples of dp_size ({})",
          d.prefill_workers, d.decode_workers, d.dp_size);
  }
  int gpus_needed = num_workers(config) * d.tp_size;
  check(gpus_needed <= config.hardware.num_gpus,
        "config: the deployment needs {} GPUs (workers x tp_size) but hardware.num_gpus = {}", gpus_needed,
        config.hardware.num_gpus);

  SectionReader cache(tree, "cache");
  config.cache.kv_capacity_tokens = cache.integer("kv_capacity_tokens", 0, 0);
  config.cache.memory_fraction = cache.real("memory_fraction", 0.9, 0.01);
  config.cache.eviction = cache.choice<EvictionPolicy>(
      "eviction", EvictionPolicy::Lru, {{"lru", EvictionPolicy::Lru}, {"session_aware", EvictionPolicy::SessionAware}});
  config.cache.host_capacity_tokens = cache.integer("host_capacity_tokens", 0, 0);
  config.cache.host_restore_gb_per_s = cache.real("host_restore_gb_per_s", 25, 1e-6);
  cache.finish();

  SectionReader sched(tree, "scheduler");
  config.scheduler.decision_tick_s = sched.real("decision_tick_s", 0, 0);
  config.scheduler.phase_policy = sched.choice<PhasePolicy>(
      "phase_policy", PhasePolicy::Majority,
      {{"prefill_first", PhasePolicy::PrefillFirst}, {"decode_first", PhasePolicy::DecodeFirst},
       {"majority", PhasePolicy::Majority}, {"prefill_interval", PhasePolicy::PrefillInterval}});
  config.scheduler.chunk_tokens = sched.integer("chunk_tokens", 8192, 1);
  config.scheduler.max_running_requests = static_cast<int>(sched.integer("max_running_requests", 64, 1));
  config.scheduler.prefill_interval_steps = static_cast<int>(sched.integer("prefill_interval_steps", 8, 1));
  sched.finish();

  SectionReader routing(tree, "routing");
  config.routing.policy = routing.choice<RoutingPolicy>(
      "policy", RoutingPolicy::Pinned,
      {{"pinned", RoutingPolicy::Pinned}, {"round_robin", RoutingPolicy::RoundRobin},
       {"random", RoutingPolicy::Random}, {"least_loaded", RoutingPolicy::LeastLoaded},
       {"cache_aware", RoutingPolicy::CacheAware}});
  config.routing.load_bound_factor = routing.real("load_bound_factor", 1.25, 1.0);
  config.routing.virtual_nodes = static_cast<int>(routing.integer("virtual_nodes", 64, 1));
  config.routing.balance_threshold = static_cast<int>(routing.integer("balance_threshold", 4, 0));
  routing.finish();

  SectionReader wl(tree, "workload");
  WorkloadConfig& w = config.workload;
  w.kind = wl.choice<WorkloadKind>("kind", wl.has("trace") ? WorkloadKind::Trace : WorkloadKind::Swarm,
                                   {{"swarm", WorkloadKind::Swarm}, {"trace", WorkloadKind::Trace}});
  w.num_agents = static_cast<int>(wl.integer("num_agents", 1, 1));
  w.stagger_s = wl.real("stagger_s", 0, 0);
  w.turns = wl.int_range("turns", w.turns, 1);
  w.input_tokens = wl.int_range("input_tokens", w.input_tokens, 1);
  w.output_tokens = wl.int_range("output_tokens", w.output_tokens, 1);
  w.think_time_s = wl.real_range("think_time_s", w.think_time_s);
  w.shared_prefix_tokens = wl.integer("shared_prefix_tokens", 0, 0);
  w.context_cap_tokens = wl.integer("context_cap_tokens", 0, 0);
  w.compact_to_tokens = wl.integer("compact_to_tokens", 10000, 1);
  w.compaction_prompt_tokens = wl.integer("compaction_prompt_tokens", 256, 1);
  w.subagent_probability = wl.real("subagent_probability", 0, 0);
  w.subagents_per_spawn = wl.int_range("subagents_per_spawn", w.subagents_per_spawn, 1);
  w.subagent_turns = wl.int_range("subagent_turns", w.subagent_turns, 1);
  w.trace_path = wl.text("trace", "");
  w.trace_block_tokens = wl.integer("trace_block_tokens", 512, 1);
  wl.finish();
  check(w.subagent_probability <= 1, "config: workload.subagent_probability must be in [0, 1]");
  check(w.kind != WorkloadKind::Trace || !w.trace_path.empty(), "config: workload.kind = \"trace\" needs workload.trace");
  if (w.context_cap_tokens > 0) {
    check(w.compact_to_tokens + w.shared_prefix_tokens + w.input_tokens.max < w.context_cap_tokens,
          "config: workload.context_cap_tokens ({}) must exceed shared_prefix_tokens + compact_to_tokens + "
          "input_tokens.max ({})",
          w.context_cap_tokens, w.compact_to_tokens + w.shared_prefix_tokens + w.input_tokens.max);
  }

  SectionReader st(tree, "step_time");
  config.step_time.kind = st.choice<StepTimeKind>(
      "model", StepTimeKind::Roofline, {{"roofline", StepTimeKind::Roofline}, {"calibrated", StepTimeKind::Calibrated}});
  config.step_time.mfu = st.real("mfu", 0.5, 1e-3);
  config.step_time.bandwidth_efficiency = st.real("bandwidth_efficiency", 0.8, 1e-3);
  config.step_time.overhead_ms = st.real("overhead_ms", 0, 0);
  std::string calibration_file = st.text("calibration_file", "");
  bool has_inline = st.has("calibration");
  if (has_inline) config.step_time.calibration = parse_calibration(st.raw("calibration"), "config step_time.calibration");
  st.finish();
  if (!calibration_file.empty()) {
    json file;
    try {
      file = json::parse(read_text_file(calibration_file));
    } catch (const json::exception& e) {
      fail("{}: JSON error: {}", calibration_file, e.what());
    }
    config.step_time.calibration = parse_calibration(file, calibration_file);
  }
  if (config.step_time.kind == StepTimeKind::Calibrated) {
    check(has_inline || !calibration_file.empty(),
          "config: step_time.model = \"calibrated\" needs step_time.calibration_file (from `llmesh sim fit`) or an "
          "inline [step_time.calibration]");
  }

  int64_t capacity = kv_capacity_tokens_per_worker(config);
  check(capacity > 0,
        "config: no memory left for KV cache: weights need {:.1f} GB per GPU of {:.1f} GB usable; set "
        "cache.kv_capacity_tokens or use more GPUs",
        config.model.total_params_b * config.model.bytes_per_param /
            (config.deployment.mode == DeploymentMode::Tp ? d.tp_size : d.tp_size * d.dp_size),
        config.hardware.memory_gb_per_gpu * config.cache.memory_fraction);
  return config;
}

int num_workers(const SimConfig& config) {
  const DeploymentConfig& d = config.deployment;
  switch (d.mode) {
    case DeploymentMode::Tp: return d.replicas;
    case DeploymentMode::DpAttention: return d.replicas * d.dp_size;
    case DeploymentMode::Disaggregated: return d.replicas * (d.prefill_workers + d.decode_workers);
  }
  return 0;
}

int64_t kv_capacity_tokens_per_worker(const SimConfig& config) {
  if (config.cache.kv_capacity_tokens > 0) return config.cache.kv_capacity_tokens;
  const DeploymentConfig& d = config.deployment;
  // Weights are split over the GPUs that shard them: TP inside a worker,
  // and EP (experts) across a DP-attention group.
  int weight_shards = d.tp_size * (d.mode == DeploymentMode::Tp ? 1 : d.dp_size);
  double weight_gb_per_gpu = config.model.total_params_b * config.model.bytes_per_param / weight_shards;
  double free_gb_per_gpu = config.hardware.memory_gb_per_gpu * config.cache.memory_fraction - weight_gb_per_gpu;
  if (free_gb_per_gpu <= 0) return 0;
  // KV heads are split over the TP GPUs of a worker, so a worker holds tp x one GPU's share.
  return static_cast<int64_t>(free_gb_per_gpu * 1e9 * d.tp_size / config.model.kv_bytes_per_token);
}

std::string to_string(PhasePolicy policy) {
  switch (policy) {
    case PhasePolicy::PrefillFirst: return "prefill_first";
    case PhasePolicy::DecodeFirst: return "decode_first";
    case PhasePolicy::Majority: return "majority";
    case PhasePolicy::PrefillInterval: return "prefill_interval";
  }
  return "?";
}
std::string to_string(RoutingPolicy policy) {
  switch (policy) {
    case RoutingPolicy::Pinned: return "pinned";
    case RoutingPolicy::RoundRobin: return "round_robin";
    case RoutingPolicy::Random: return "random";
    case RoutingPolicy::LeastLoaded: return "least_loaded";
    case RoutingPolicy::CacheAware: return "cache_aware";
  }
  return "?";
}
std::string to_string(DeploymentMode mode) {
  switch (mode) {
    case DeploymentMode::Tp: return "tp";
    case DeploymentMode::DpAttention: return "dp_attention";
    case DeploymentMode::Disaggregated: return "disaggregated";
  }
  return "?";
}
std::string to_string(EvictionPolicy policy) {
  return policy == EvictionPolicy::Lru ? "lru" : "session_aware";
}

}  // namespace llmesh::sim
