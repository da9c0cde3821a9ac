#include "model/hf_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/error.h"

namespace llmesh::model {

namespace ju = format::json_util;

namespace {

struct ArchName {
  const char* hf_class;
  const char* model_type;
  const char* arch;
};
constexpr ArchName kArchs[] = {
    {"LlamaForCausalLM", "llama", "llama"},
    {"MistralForCausalLM", "mistral", "llama"},  // Mistral / Devstral: Llama's blocks (GGUF calls it llama too)
    {"Qwen2ForCausalLM", "qwen2", "qwen2"},
    {"Qwen3ForCausalLM", "qwen3", "qwen3"},
    {"Qwen3MoeForCausalLM", "qwen3_moe", "qwen3moe"},
    {"Glm4MoeForCausalLM", "glm4_moe", "glm4moe"},
    {"DeepseekV2ForCausalLM", "deepseek_v2", "deepseek2"},
    {"DeepseekV3ForCausalLM", "deepseek_v3", "deepseek2"},  // also Kimi K2 (model_type kimi_k2)
    {"DeepseekV3ForCausalLM", "kimi_k2", "deepseek2"},
    {"GptOssForCausalLM", "gpt_oss", "gpt-oss"},
};

std::string arch_from_config(const ju::Json& config, const std::string& source) {
  auto it = config.find("architectures");
  if (it != config.end() && !it->is_null()) {
    check(it->is_array() && !it->empty() && (*it)[0].is_string(),
          "{}: 'architectures' must be a non-empty list of strings", source);
    const std::string hf_class = (*it)[0].get<std::string>();
    for (const ArchName& a : kArchs) {
      if (hf_class == a.hf_class) return a.arch;
    }
    fail(
        "{}: unknown architecture '{}' (llmesh supports LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, "
        "Qwen3ForCausalLM, Qwen3MoeForCausalLM, Glm4MoeForCausalLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM, "
        "GptOssForCausalLM)",
        source, hf_class);
  }
  auto model_type = ju::find_string(config, "model_type", source);
  check(model_type.has_value(), "{}: neither 'architectures' nor 'model_type' says what model this is", source);
  for (const ArchName& a : kArchs) {
    if (*model_type == a.model_type) return a.arch;
  }
  fail(
      "{}: unknown model_type '{}' (llmesh supports llama, mistral, qwen2, qwen3, qwen3_moe, glm4_moe, deepseek_v2, "
      "deepseek_v3, kimi_k2)",
      source, *model_type);
}

// HF `rope_scaling` (also spelled `rope_parameters` by newer configs). A missing factor or
// original context falls back to what the published definitions assume.
void read_rope_scaling(const ju::Json& config, ModelConfig& c, const std::string& source) {
  auto it = config.find("rope_scaling");
  if (it == config.end() || it->is_null()) it = config.find("rope_parameters");
  if (it == config.end() || it->is_null()) return;
  const ju::Json& rs = *it;
  check(rs.is_object(), "{}: 'rope_scaling' must be an object", source);
  std::optional<std::string> type = ju::find_string(rs, "rope_type", source);
  if (!type) type = ju::find_string(rs, "type", source);
  check(type.has_value(), "{}: rope_scaling has no 'rope_type'", source);
  if (*type == "default") return;  // HF's name for "no scaling"
  check(*type == "llama3" || *type == "yarn" || *type == "linear" || *type == "dynamic",
        "{}: unsupported rope scaling type '{}' (llmesh supports linear, dynamic, yarn, llama3)", source, *type);
  RopeScaling& s = c.rope_scaling;
  s.type = *type;
  auto number = [&](const char* key, double fallback) {
    return ju::checked_float(ju::find_number(rs, key, source).value_or(fallback), key, source);
  };
  s.factor = ju::checked_float(ju::get_number(rs, "factor", source), "factor", source);
  s.original_max_position = ju::find_int(rs, "original_max_position_embeddings", source)
                                .value_or(s.type == "llama3" ? 8192 : c.max_position);
  s.low_freq_factor = number("low_freq_factor", 1.0);
  s.high_freq_factor = number("high_freq_factor", 4.0);
  s.beta_fast = number("beta_fast", 32.0);
  s.beta_slow = number("beta_slow", 1.0);
  s.attention_factor = number("attention_factor", 0.0);
  s.mscale = number("mscale", 0.0);
  s.mscale_all_dim = number("mscale_all_dim", 0.0);
  s.truncate = ju::find_bool(rs, "truncate", source).value_or(true);
}

// A Mistral checkpoint: MistralForCausalLM, or model_type mistral without `architectures`.
bool is_mistral(const ju::Json& config, const std::string& source) {
  auto it = config.find("architectures");
  if (it != config.end() && it->is_array() && !it->empty() && (*it)[0].is_string())
    return (*it)[0].get<std::string>() == "MistralForCausalLM";
  return ju::find_string(config, "model_type", source) == "mistral";
}

// Sliding-window attention (ModelConfig::sliding_window): Mistral 7B v0.1 windows every layer
// (later Mistral models set sliding_window null; Llama's config has no window). Qwen2 and Qwen3
// configs name a window they use only with use_sliding_window, and then, as HF's default
// layer_types has it, on the layers from max_window_layers (default 28) on. An explicit
// `layer_types` list ("sliding_attention" / "full_attention") says which layers.
void read_sliding_window(const ju::Json& config, ModelConfig& c, const std::string& source) {
  auto window = config.find("sliding_window");
  if (window == config.end() || window->is_null()) return;
  const bool qwen = c.arch == "qwen2" || c.arch == "qwen3" || c.arch == "qwen3moe";
  const bool used = qwen ? ju::find_bool(config, "use_sliding_window", source).value_or(false)
                         : c.arch == "gpt-oss" || (c.arch == "llama" && is_mistral(config, source));
  if (!used) return;
  const int64_t tokens = ju::get_int(config, "sliding_window", source);
  check(tokens > 0, "{}: sliding_window {} must be positive", source, tokens);
  std::vector<bool> layers;  // empty: every layer
  auto types = config.find("layer_types");
  if (types != config.end() && !types->is_null()) {
    check(types->is_array() && int64_t(types->size()) == c.num_layers, "{}: layer_types must list the {} layers",
          source, c.num_layers);
    for (const ju::Json& type : *types) {
      check(type == "sliding_attention" || type == "full_attention",
            "{}: layer type {} is neither sliding_attention nor full_attention (unsupported)", source, type.dump());
      layers.push_back(type == "sliding_attention");
    }
  } else if (qwen) {
    if (c.num_layers < 1 || c.num_layers > (int64_t(1) << 16)) return;  // check_model_config reports it
    const int64_t full_layers = ju::find_int(config, "max_window_layers", source).value_or(28);
    for (int64_t layer = 0; layer < c.num_layers; ++layer) layers.push_back(layer >= full_layers);
  } else if (c.arch == "gpt-oss") {  // GptOssConfig's default layer_types: windowed even layers
    if (c.num_layers < 1 || c.num_layers > (int64_t(1) << 16)) return;
    for (int64_t layer = 0; layer < c.num_layers; ++layer) layers.push_back(layer % 2 == 0);
  }
  if (std::none_of(layers.begin(), layers.end(), [](bool w) { return w; }) && !layers.empty()) return;
  if (std::all_of(layers.begin(), layers.end(), [](bool w) { return w; })) layers.clear();
  c.sliding_window = tokens;
  c.window_layers = std::move(layers);
}

// GLM-4.5's config.json: partial rotary, optional q/k norm, dense leading layers, and the
// sigmoid router with score-correction bias, expert groups, routed scaling and shared experts.
// The num_nextn_predict_layers MTP layers (model.layers.<num_hidden_layers>...) are not loaded.
void read_glm4_moe(const ju::Json& config, ModelConfig& c, const std::string& source) {
  // Newer transformers nest partial_rotary_factor in rope_parameters.
  std::optional<double> factor = ju::find_number(config, "partial_rotary_factor", source);
  auto rope_parameters = config.find("rope_parameters");
  if (!factor && rope_parameters != config.end() && rope_parameters->is_object()) {
    factor = ju::find_number(*rope_parameters, "partial_rotary_factor", source);
  }
  const double rotary_factor = factor.value_or(0.5);
  check(rotary_factor > 0 && rotary_factor <= 1, "{}: partial_rotary_factor {} is not in (0, 1]", source,
        rotary_factor);
  c.rotary_dim = int64_t(double(c.head_dim) * rotary_factor);
  c.qk_norm = ju::find_bool(config, "use_qk_norm", source).value_or(false);
  c.intermediate_size = ju::get_int(config, "intermediate_size", source);
  std::optional<int64_t> experts = ju::find_int(config, "n_routed_experts", source);
  if (!experts) experts = ju::find_int(config, "num_experts", source);
  check(experts.has_value(), "{}: glm4_moe config has no 'n_routed_experts'", source);
  c.num_experts = *experts;
  c.num_experts_per_token = ju::get_int(config, "num_experts_per_tok", source);
  c.moe_intermediate_size = ju::get_int(config, "moe_intermediate_size", source);
  c.norm_topk_prob = ju::find_bool(config, "norm_topk_prob", source).value_or(true);
  c.first_dense_layers = ju::find_int(config, "first_k_dense_replace", source).value_or(0);
  c.num_shared_experts = ju::find_int(config, "n_shared_experts", source).value_or(0);
  c.router_gating = RouterGating::Sigmoid;
  c.router_bias = true;  // e_score_correction_bias is a buffer of every Glm4MoeTopkRouter
  c.expert_groups = ju::find_int(config, "n_group", source).value_or(1);
  c.expert_groups_used = ju::find_int(config, "topk_group", source).value_or(1);
  c.routed_scaling = ju::checked_float(ju::find_number(config, "routed_scaling_factor", source).value_or(1.0),
                                       "routed_scaling_factor", source);
}

// DeepSeek V2 / V3 and Kimi K2: multi-head latent attention, and a mixture of experts after
// first_k_dense_replace dense layers. V3's router (topk_method noaux_tc) is GLM-4.5's sigmoid one;
// V2's is a softmax (greedy top-k; its group_limited_greedy is not supported).
void read_deepseek(const ju::Json& config, ModelConfig& c, const std::string& source) {
  c.kv_lora_rank = ju::get_int(config, "kv_lora_rank", source);
  c.q_lora_rank = ju::find_int(config, "q_lora_rank", source).value_or(0);  // null in V2-Lite
  c.qk_nope_dim = ju::get_int(config, "qk_nope_head_dim", source);
  c.rotary_dim = ju::get_int(config, "qk_rope_head_dim", source);
  c.v_head_dim = ju::get_int(config, "v_head_dim", source);
  c.head_dim = c.qk_nope_dim + c.rotary_dim;
  c.num_kv_heads = 1;  // one latent row per position, shared by every head
  // DeepSeek rotates adjacent pairs of the rope dims (transformers: rope_interleave, default true).
  c.rope_style = ju::find_bool(config, "rope_interleave", source).value_or(true) ? RopeStyle::Interleaved
                                                                                 : RopeStyle::Neox;
  c.intermediate_size = ju::get_int(config, "intermediate_size", source);
  const std::optional<int64_t> experts = ju::find_int(config, "n_routed_experts", source);
  if (!experts) return;  // a dense config
  c.num_experts = *experts;
  c.num_experts_per_token = ju::get_int(config, "num_experts_per_tok", source);
  c.moe_intermediate_size = ju::get_int(config, "moe_intermediate_size", source);
  c.norm_topk_prob = ju::find_bool(config, "norm_topk_prob", source).value_or(false);
  c.first_dense_layers = ju::find_int(config, "first_k_dense_replace", source).value_or(0);
  c.num_shared_experts = ju::find_int(config, "n_shared_experts", source).value_or(0);
  const int64_t layer_freq = ju::find_int(config, "moe_layer_freq", source).value_or(1);
  check(layer_freq == 1, "{}: moe_layer_freq {} interleaves dense and MoE layers (unsupported)", source, layer_freq);
  c.routed_scaling = ju::checked_float(ju::find_number(config, "routed_scaling_factor", source).value_or(1.0),
                                       "routed_scaling_factor", source);
  const std::string scoring = ju::find_string(config, "scoring_func", source).value_or("softmax");
  const std::string method = ju::find_string(config, "topk_method", source).value_or("greedy");
  check(scoring == "softmax" || scoring == "sigmoid", "{}: scoring_func '{}' (llmesh supports softmax, sigmoid)",
        source, scoring);
  check(method == "greedy" || method == "noaux_tc",
        "{}: topk_method '{}' (llmesh supports greedy and noaux_tc; V2's group_limited_greedy is not supported)",
        source, method);
  c.router_gating = scoring == "sigmoid" ? RouterGating::Sigmoid : RouterGating::Softmax;
  c.router_bias = method == "noaux_tc";  // e_score_correction_bias
  if (method == "noaux_tc") {
    c.expert_groups = ju::find_int(config, "n_group", source).value_or(1);
    c.expert_groups_used = ju::find_int(config, "topk_group", source).value_or(1);
  }
}

// gpt-oss: every layer a mixture of num_local_experts experts of intermediate_size, routed by a
// softmax over the top-k router logits (= a softmax over all renormalized over the top k), with
// the clamped SwiGLU at swiglu_limit; attention sinks and q/k/v/o biases in every layer.
void read_gpt_oss(const ju::Json& config, ModelConfig& c, const std::string& source) {
  c.num_experts = ju::get_int(config, "num_local_experts", source);
  std::optional<int64_t> per_token = ju::find_int(config, "num_experts_per_tok", source);
  if (!per_token) per_token = ju::find_int(config, "experts_per_token", source);
  check(per_token.has_value(), "{}: gpt_oss config has no 'num_experts_per_tok'", source);
  c.num_experts_per_token = *per_token;
  c.moe_intermediate_size = ju::get_int(config, "intermediate_size", source);
  c.intermediate_size = c.moe_intermediate_size;
  c.norm_topk_prob = true;
  c.attention_sinks = true;
  c.swiglu_limit =
      ju::checked_float(ju::find_number(config, "swiglu_limit", source).value_or(7.0), "swiglu_limit", source);
  check(c.swiglu_limit > 0, "{}: swiglu_limit {} must be positive", source, c.swiglu_limit);
}

// Parses a decimal layer/expert index at s[pos...] up to `end_char`; advances pos.
bool parse_index(const std::string& s, size_t& pos, std::string* digits) {
  const size_t start = pos;
  while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
  const size_t n = pos - start;
  if (n == 0 || n > 6 || (n > 1 && s[start] == '0') || pos >= s.size() || s[pos] != '.') return false;
  *digits = s.substr(start, n);
  ++pos;  // the '.'
  return true;
}

}  // namespace

ModelConfig parse_hf_config(const ju::Json& config, const std::string& source) {
  check(config.is_object(), "{}: config.json must be a JSON object", source);
  ModelConfig c;
  c.arch = arch_from_config(config, source);
  c.vocab_size = ju::get_int(config, "vocab_size", source);
  c.hidden_size = ju::get_int(config, "hidden_size", source);
  c.num_layers = ju::get_int(config, "num_hidden_layers", source);
  c.num_heads = ju::get_int(config, "num_attention_heads", source);
  check(c.num_heads > 0, "{}: num_attention_heads must be positive", source);
  c.num_kv_heads = ju::find_int(config, "num_key_value_heads", source).value_or(c.num_heads);
  c.head_dim = ju::find_int(config, "head_dim", source).value_or(c.hidden_size / c.num_heads);
  c.max_position = ju::get_int(config, "max_position_embeddings", source);
  auto number = [&](const char* key, double fallback) {
    return ju::checked_float(ju::find_number(config, key, source).value_or(fallback), key, source);
  };
  c.rms_norm_eps = number("rms_norm_eps", 1e-6);
  c.rope_theta = number("rope_theta", 10000.0);
  c.rope_style = RopeStyle::Neox;  // HF checkpoints use rotate_half pairs for every family
  read_rope_scaling(config, c, source);
  read_sliding_window(config, c, source);
  c.tie_word_embeddings = ju::find_bool(config, "tie_word_embeddings", source).value_or(false);
  // Qwen2 always has q/k/v biases; the others only when the config says so.
  c.attention_bias = c.arch == "qwen2" || ju::find_bool(config, "attention_bias", source).value_or(false);
  c.qk_norm = c.arch == "qwen3" || c.arch == "qwen3moe";

  if (c.arch == "glm4moe") {
    read_glm4_moe(config, c, source);
  } else if (c.arch == "deepseek2") {
    read_deepseek(config, c, source);
  } else if (c.arch == "gpt-oss") {
    read_gpt_oss(config, c, source);
  } else if (c.arch == "qwen3moe") {
    c.num_experts = ju::get_int(config, "num_experts", source);
    c.num_experts_per_token = ju::get_int(config, "num_experts_per_tok", source);
    c.moe_intermediate_size = ju::get_int(config, "moe_intermediate_size", source);
    c.intermediate_size = ju::find_int(config, "intermediate_size", source).value_or(0);
    c.norm_topk_prob = ju::find_bool(config, "norm_topk_prob", source).value_or(false);
    const int64_t sparse_step = ju::find_int(config, "decoder_sparse_step", source).value_or(1);
    check(sparse_step == 1, "{}: decoder_sparse_step {} mixes dense and MoE layers (unsupported)", source, sparse_step);
    auto dense_layers = config.find("mlp_only_layers");
    check(
        dense_layers == config.end() || dense_layers->is_null() || (dense_layers->is_array() && dense_layers->empty()),
        "{}: mlp_only_layers makes some layers dense (unsupported)", source);
  } else {
    c.intermediate_size = ju::get_int(config, "intermediate_size", source);
  }
  check_model_config(c, source);
  return c;
}

std::vector<int32_t> parse_hf_eos_token_ids(const ju::Json& config, const std::string& source) {
  if (!config.is_object()) return {};
  return ju::find_ids(config, "eos_token_id", source);
}

GenerationDefaults parse_hf_generation_config(const ju::Json& config, const std::string& source) {
  check(config.is_object(), "{}: generation_config.json must be a JSON object", source);
  GenerationDefaults g;
  g.eos_token_ids = parse_hf_eos_token_ids(config, source);
  // Greedy-only configs (do_sample false) still record their temperatures; the server decides.
  if (auto v = ju::find_number(config, "temperature", source)) {
    g.temperature = ju::checked_float(*v, "temperature", source);
  }
  if (auto v = ju::find_number(config, "top_p", source)) {
    g.top_p = ju::checked_float(*v, "top_p", source);
  }
  if (auto v = ju::find_number(config, "min_p", source)) {
    g.min_p = ju::checked_float(*v, "min_p", source);
  }
  if (auto v = ju::find_int(config, "top_k", source)) g.top_k = int(std::clamp<int64_t>(*v, 0, INT32_MAX));
  if (auto v = ju::find_number(config, "repetition_penalty", source)) {
    g.repetition_penalty = ju::checked_float(*v, "repetition_penalty", source);
  }
  return g;
}

std::optional<std::string> hf_tensor_to_canonical(const std::string& hf_name) {
  static const std::pair<const char*, const char*> kTopLevel[] = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
  };
  for (const auto& [hf, canonical] : kTopLevel) {
    if (hf_name == hf) return canonical;
  }
  const std::string layers = "model.layers.";
  if (hf_name.rfind(layers, 0) != 0) return std::nullopt;
  size_t pos = layers.size();
  std::string layer;
  if (!parse_index(hf_name, pos, &layer)) return std::nullopt;
  std::string rest = hf_name.substr(pos);
  const std::string blk = "blk." + layer + ".";

  // Split the parameter kind (weight / bias) off the module path.
  const size_t dot = rest.rfind('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string kind = rest.substr(dot + 1);
  const std::string module = rest.substr(0, dot);
  if (kind != "weight" && kind != "bias" && kind != "e_score_correction_bias" && kind != "sinks") return std::nullopt;
  if (kind == "sinks") {  // gpt-oss: one logit per head
    return module == "self_attn" ? std::optional<std::string>(blk + "attn_sinks.weight") : std::nullopt;
  }

  if (kind == "e_score_correction_bias") {
    return module == "mlp.gate" ? std::optional<std::string>(blk + "exp_probs_b.bias") : std::nullopt;
  }
  static const std::pair<const char*, const char*> kLayerModules[] = {
      {"input_layernorm", "attn_norm"},    {"self_attn.q_proj", "attn_q"},
      {"self_attn.k_proj", "attn_k"},      {"self_attn.v_proj", "attn_v"},
      {"self_attn.o_proj", "attn_output"}, {"self_attn.q_norm", "attn_q_norm"},
      {"self_attn.k_norm", "attn_k_norm"}, {"post_attention_layernorm", "ffn_norm"},
      {"mlp.gate_proj", "ffn_gate"},       {"mlp.up_proj", "ffn_up"},
      {"mlp.down_proj", "ffn_down"},       {"mlp.gate", "ffn_gate_inp"},
      {"mlp.router", "ffn_gate_inp"},  // gpt-oss
      {"mlp.shared_experts.gate_proj", "ffn_gate_shexp"},
      {"mlp.shared_experts.up_proj", "ffn_up_shexp"},
      {"mlp.shared_experts.down_proj", "ffn_down_shexp"},
      // DeepSeek's multi-head latent attention
      {"self_attn.q_a_proj", "attn_q_a"},  {"self_attn.q_a_layernorm", "attn_q_a_norm"},
      {"self_attn.q_b_proj", "attn_q_b"},  {"self_attn.kv_a_proj_with_mqa", "attn_kv_a_mqa"},
      {"self_attn.kv_a_layernorm", "attn_kv_a_norm"}, {"self_attn.kv_b_proj", "attn_kv_b"},
  };
  for (const auto& [hf, canonical] : kLayerModules) {
    if (module == hf) return blk + canonical + "." + kind;
  }

  const std::string experts = "mlp.experts.";
  if (module.rfind(experts, 0) != 0 || kind != "weight") return std::nullopt;
  size_t epos = experts.size();
  std::string expert;
  if (!parse_index(module, epos, &expert)) return std::nullopt;
  const std::string proj = module.substr(epos);
  const char* stack = proj == "gate_proj"   ? "ffn_gate_exps"
                      : proj == "up_proj"   ? "ffn_up_exps"
                      : proj == "down_proj" ? "ffn_down_exps"
                                            : nullptr;
  if (!stack) return std::nullopt;
  return blk + stack + "." + expert + ".weight";
}

}  // namespace llmesh::model
