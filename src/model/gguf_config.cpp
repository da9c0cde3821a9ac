#include "model/gguf_config.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "core/error.h"
#include "core/log.h"
#include "format/json_util.h"

namespace llmesh::model {

namespace {

using format::json_util::checked_float;

constexpr const char* kSupportedArchs[] = {"llama", "qwen2", "qwen3", "qwen3moe", "glm4moe", "deepseek2", "gpt-oss"};

constexpr const char* kExpertStacks[] = {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"};

// "blk.12.ffn_up_exps.weight" -> true with prefix "blk.12.ffn_up_exps" and kind "weight"; the
// experts' biases (gpt-oss), "blk.12.ffn_up_exps.bias", are stacked the same way.
bool is_stacked_expert_tensor(const std::string& name, std::string* stem, std::string* kind) {
  if (name.rfind("blk.", 0) != 0) return false;
  const bool bias = name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0;
  const std::string suffix = bias ? ".bias" : ".weight";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
  *kind = suffix.substr(1);
  const std::string without_suffix = name.substr(0, name.size() - suffix.size());
  const size_t dot = without_suffix.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string leaf = without_suffix.substr(dot + 1);
  for (const char* stack : kExpertStacks) {
    if (leaf == stack) {
      *stem = without_suffix;
      return true;
    }
  }
  return false;
}

// `{arch}.rope.scaling.*` (llama.cpp's keys). Llama 3 scaling is not among them: it comes as the
// rope_freqs.weight tensor. The older `rope.scale_linear` key is a linear factor.
void read_gguf_rope_scaling(const format::GgufFile& gguf, const std::string& a, ModelConfig& c) {
  const std::string& source = gguf.path();
  std::string type = gguf.find_string(a + "rope.scaling.type").value_or("");
  std::optional<double> factor = gguf.find_float(a + "rope.scaling.factor");
  if (type.empty()) {
    factor = gguf.find_float(a + "rope.scale_linear");
    if (factor && *factor != 1.0) type = "linear";
  }
  if (type.empty() || type == "none") return;
  check(type == "linear" || type == "yarn", "{}: unsupported rope scaling type '{}' (llmesh supports linear, yarn)",
        source, type);
  RopeScaling& s = c.rope_scaling;
  s.type = type;
  s.factor = checked_float(factor.value_or(1.0), "rope.scaling.factor", source);
  s.original_max_position = gguf.find_int(a + "rope.scaling.original_context_length").value_or(c.max_position);
  auto number = [&](const char* key, double fallback) {
    return checked_float(gguf.find_float(a + "rope.scaling." + key).value_or(fallback), key, source);
  };
  s.attn_factor_multiplier = number("attn_factor", 1.0);
  s.beta_fast = number("yarn_beta_fast", 32.0);
  s.beta_slow = number("yarn_beta_slow", 1.0);
  const double ext_factor = number("yarn_ext_factor", -1.0);
  s.ext_factor = ext_factor < 0 ? 1.0f : float(ext_factor);  // llama.cpp: negative means "the default", 1 for yarn
}

// The layer of a "blk.N...." tensor name, or -1.
int64_t gguf_layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  int64_t layer = 0;
  size_t i = 4;
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && layer < (int64_t(1) << 40); ++i) {
    layer = layer * 10 + (name[i] - '0');
  }
  return layer;
}

// GLM-4.5's and DeepSeek's mixture of experts: shared experts, leading dense layers, and
// llama.cpp's expert_gating_func (1 softmax, 2 sigmoid; absent: glm4moe's sigmoid, DeepSeek
// V2's softmax) with the score-correction bias, expert groups and routed scaling.
void read_gguf_routed_experts(const format::GgufFile& gguf, const std::string& a, ModelConfig& c) {
  const std::string& source = gguf.path();
  c.num_experts = gguf.get_int(a + "expert_count");
  c.num_experts_per_token = gguf.get_int(a + "expert_used_count");
  c.moe_intermediate_size = gguf.get_int(a + "expert_feed_forward_length");
  c.intermediate_size = gguf.get_int(a + "feed_forward_length");
  c.norm_topk_prob = gguf.find_bool(a + "expert_weights_norm").value_or(false);
  c.first_dense_layers = gguf.find_int(a + "leading_dense_block_count").value_or(0);
  c.num_shared_experts = gguf.find_int(a + "expert_shared_count").value_or(0);
  const int64_t gating = gguf.find_int(a + "expert_gating_func").value_or(c.arch == "glm4moe" ? 2 : 1);
  check(gating == 1 || gating == 2, "{}: {}expert_gating_func {} (llmesh knows 1 softmax and 2 sigmoid)", source, a,
        gating);
  c.router_gating = gating == 2 ? RouterGating::Sigmoid : RouterGating::Softmax;
  c.expert_groups = gguf.find_int(a + "expert_group_count").value_or(1);
  c.expert_groups_used = gguf.find_int(a + "expert_group_used_count").value_or(1);
  c.routed_scaling =
      checked_float(gguf.find_float(a + "expert_weights_scale").value_or(1.0), "expert_weights_scale", source);
  c.router_bias = gguf.find_tensor("blk." + std::to_string(c.first_dense_layers) + ".exp_probs_b.bias") != nullptr;
}

// DeepSeek's multi-head latent attention. llama.cpp's MLA files (attn_k_b / attn_v_b) give
// key_length = kv_lora_rank + rope dims (the cached row) with the per-head sizes in
// key_length_mla / value_length_mla; older files (attn_kv_b) give the per-head sizes directly.
// YaRN's softmax factor comes as rope.scaling.yarn_log_multiplier = 0.1 mscale_all_dim.
void read_gguf_mla(const format::GgufFile& gguf, const std::string& a, ModelConfig& c) {
  const std::string& source = gguf.path();
  c.kv_lora_rank = gguf.get_int(a + "attention.kv_lora_rank");
  c.q_lora_rank = gguf.find_int(a + "attention.q_lora_rank").value_or(0);
  const int64_t rope = c.rotary_dim;
  const std::optional<int64_t> key_mla = gguf.find_int(a + "attention.key_length_mla");
  const int64_t key = key_mla.value_or(c.head_dim);
  const std::optional<int64_t> value =
      key_mla ? gguf.find_int(a + "attention.value_length_mla") : gguf.find_int(a + "attention.value_length");
  check(key > rope && rope > 0, "{}: {}attention.key_length{} {} must exceed rope.dimension_count {}", source, a,
        key_mla ? "_mla" : "", key, rope);
  check(value.has_value(), "{}: {}attention.value_length{} is missing", source, a, key_mla ? "_mla" : "");
  c.qk_nope_dim = key - rope;
  c.v_head_dim = *value;
  c.head_dim = key;
  c.num_kv_heads = 1;
  if (const std::optional<double> log_mul = gguf.find_float(a + "rope.scaling.yarn_log_multiplier");
      log_mul && c.rope_scaling.type == "yarn") {
    // llama.cpp's deepseek2 cancels YaRN's cos/sin factor: mscale = mscale_all_dim says the same.
    c.rope_scaling.mscale_all_dim = checked_float(*log_mul / 0.1, "rope.scaling.yarn_log_multiplier", source);
    c.rope_scaling.mscale = c.rope_scaling.mscale_all_dim;
  }
}

// gpt-oss: a mixture of experts in every layer, routed by a softmax over the top-k logits (a
// softmax over all, renormalized), attention sinks, and windowed even layers (llama.cpp's
// swa pattern 2: layer l is windowed when l % 2 == 0).
void read_gguf_gpt_oss(const format::GgufFile& gguf, const std::string& a, ModelConfig& c) {
  c.num_experts = gguf.get_int(a + "expert_count");
  c.num_experts_per_token = gguf.get_int(a + "expert_used_count");
  c.moe_intermediate_size = gguf.get_int(a + "expert_feed_forward_length");
  c.intermediate_size = gguf.find_int(a + "feed_forward_length").value_or(c.moe_intermediate_size);
  c.norm_topk_prob = true;
  c.attention_sinks = true;
  c.swiglu_limit = 7.0f;  // gpt-oss's; llama.cpp's files carry no key for it
  // YaRN's ramp ends stay fractional, as gpt-oss's config.json says (rope_scaling.truncate false).
  if (c.rope_scaling.enabled()) c.rope_scaling.truncate = false;
  c.sliding_window = gguf.find_int(a + "attention.sliding_window").value_or(0);
  if (c.sliding_window > 0 && c.num_layers > 0 && c.num_layers <= (int64_t(1) << 16)) {
    for (int64_t layer = 0; layer < c.num_layers; ++layer) c.window_layers.push_back(layer % 2 == 0);
  }
}

}  // namespace

bool is_supported_gguf_arch(const std::string& arch) {
  return std::find(std::begin(kSupportedArchs), std::end(kSupportedArchs), arch) != std::end(kSupportedArchs);
}

ModelConfig read_gguf_config(const format::GgufFile& gguf) {
  const std::string& source = gguf.path();
  ModelConfig c;
  c.arch = gguf.get_string("general.architecture");
  check(is_supported_gguf_arch(c.arch),
        "{}: unknown architecture '{}' (llmesh supports llama, qwen2, qwen3, qwen3moe, glm4moe, deepseek2, gpt-oss)",
        source,
        c.arch);
  const std::string a = c.arch + ".";
  c.hidden_size = gguf.get_int(a + "embedding_length");
  c.num_layers = gguf.get_int(a + "block_count");
  c.num_heads = gguf.get_int(a + "attention.head_count");
  check(c.num_heads > 0, "{}: {}attention.head_count must be positive", source, a);
  c.num_kv_heads = gguf.find_int(a + "attention.head_count_kv").value_or(c.num_heads);
  c.head_dim = gguf.find_int(a + "attention.key_length").value_or(c.hidden_size / c.num_heads);
  if (auto value_length = gguf.find_int(a + "attention.value_length"); value_length && c.arch != "deepseek2") {
    check(*value_length == c.head_dim, "{}: attention.value_length {} differs from key_length {} (unsupported)", source,
          *value_length, c.head_dim);
  }
  c.max_position = gguf.get_int(a + "context_length");
  c.rms_norm_eps = checked_float(gguf.get_float(a + "attention.layer_norm_rms_epsilon"), "rms epsilon", source);
  c.rope_theta = checked_float(gguf.find_float(a + "rope.freq_base").value_or(10000.0), "rope.freq_base", source);
  c.rope_style = c.arch == "llama" || c.arch == "deepseek2" ? RopeStyle::Interleaved : RopeStyle::Neox;
  read_gguf_rope_scaling(gguf, a, c);
  // A window on every layer, under the key llama.cpp gives its windowed families. Its converter
  // writes none for MistralForCausalLM: a llama.cpp file of Mistral 7B v0.1 runs full attention
  // here as in llama.cpp (llmesh's tiny Mistral file carries the key, to match its config.json).
  if (c.arch == "llama") c.sliding_window = gguf.find_int(a + "attention.sliding_window").value_or(0);

  if (c.arch == "glm4moe" || c.arch == "deepseek2") {
    // block_count includes the multi-token-prediction layers at the end; they are not loaded.
    const int64_t nextn = gguf.find_int(a + "nextn_predict_layers").value_or(0);
    check(nextn >= 0 && nextn < c.num_layers, "{}: {}nextn_predict_layers {} leaves no layers of block_count {}",
          source, a, nextn, c.num_layers);
    c.num_layers -= nextn;
    c.rotary_dim = gguf.find_int(a + "rope.dimension_count").value_or(c.head_dim);
    if (c.arch == "deepseek2") read_gguf_mla(gguf, a, c);
    read_gguf_routed_experts(gguf, a, c);
  } else if (c.arch == "gpt-oss") {
    read_gguf_gpt_oss(gguf, a, c);
  } else if (c.arch == "qwen3moe") {
    c.num_experts = gguf.get_int(a + "expert_count");
    c.num_experts_per_token = gguf.get_int(a + "expert_used_count");
    c.moe_intermediate_size = gguf.get_int(a + "expert_feed_forward_length");
    c.intermediate_size = gguf.find_int(a + "feed_forward_length").value_or(0);
    c.norm_topk_prob = gguf.find_bool(a + "expert_weights_norm").value_or(true);
  } else {
    c.intermediate_size = gguf.get_int(a + "feed_forward_length");
    check(gguf.find_int(a + "expert_count").value_or(0) == 0, "{}: {} with experts is not supported", source, c.arch);
  }

  const Tensor* embd = gguf.find_tensor("token_embd.weight");
  if (auto vocab_size = gguf.find_int(a + "vocab_size")) {
    c.vocab_size = *vocab_size;
  } else if (const format::GgufValue* tokens = gguf.find("tokenizer.ggml.tokens");
             tokens && tokens->type == format::GgufValueType::Array &&
             tokens->array_type == format::GgufValueType::String) {
    c.vocab_size = int64_t(tokens->strings.size());
  } else if (embd && embd->num_dims() == 2) {
    c.vocab_size = embd->shape[0];
  }

  c.tie_word_embeddings = gguf.find_tensor("output.weight") == nullptr;
  c.attention_bias = gguf.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.qk_norm = gguf.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
  check_model_config(c, source);
  return c;
}

void add_gguf_weights(const format::GgufFile& gguf, WeightStore& weights, int64_t num_layers) {
  if (gguf.mapping()) weights.keep_mapping(gguf.mapping());
  const std::string arch = gguf.find_string("general.architecture").value_or("");
  const bool post_attention_norm = arch == "glm4moe" || arch == "gpt-oss";
  for (const Tensor& t : gguf.tensors()) {
    weights.add_file_tensor(t);
    const int64_t layer = gguf_layer_of(t.name);
    if (num_layers >= 0 && layer >= num_layers) continue;  // multi-token-prediction layers (glm4moe), unused
    if (post_attention_norm && layer >= 0) {
      // glm4moe and gpt-oss name the post-attention norm after HF's module; it is every family's ffn_norm.
      const std::string post = "blk." + std::to_string(layer) + ".post_attention_norm.weight";
      if (t.name == post) {
        weights.add("blk." + std::to_string(layer) + ".ffn_norm.weight", t);
        continue;
      }
    }
    std::string stem, kind;
    if (is_stacked_expert_tensor(t.name, &stem, &kind)) {
      const int64_t dims = kind == "weight" ? 3 : 2;
      check(t.num_dims() == dims, "{}: expert tensor '{}' should be {}-D {{experts, {}}}, got {}", gguf.path(), t.name,
            dims, kind == "weight" ? "out, in" : "out", t.shape_string());
      for (int64_t e = 0; e < t.shape[0]; ++e) {
        weights.add(stem + "." + std::to_string(e) + "." + kind, t.index(e));
      }
      continue;
    }
    weights.add(t.name, t);
  }
}

ModelFiles model_from_gguf(const format::GgufFile& gguf, const std::string& path) {
  ModelFiles files;
  files.path = path;
  files.format = "gguf";
  files.config = read_gguf_config(gguf);
  files.name = gguf.find_string("general.name").value_or(std::filesystem::path(path).stem().string());
  files.weights = WeightStore(path);
  add_gguf_weights(gguf, files.weights, files.config.num_layers);
  check_weights_match_config(files.weights, files.config);

  // Sampling defaults only: GGUF lists the tokens that end generation in its tokenizer
  // metadata (text::tokenizer_from_gguf), so generation.eos_token_ids stays empty.
  GenerationDefaults& gen = files.generation;
  if (auto v = gguf.find_float("general.sampling.temp"))
    gen.temperature = checked_float(*v, "general.sampling.temp", path);
  if (auto v = gguf.find_float("general.sampling.top_p")) gen.top_p = checked_float(*v, "general.sampling.top_p", path);
  if (auto v = gguf.find_float("general.sampling.min_p")) gen.min_p = checked_float(*v, "general.sampling.min_p", path);
  if (auto v = gguf.find_int("general.sampling.top_k")) gen.top_k = int(std::clamp<int64_t>(*v, 0, INT32_MAX));
  if (auto v = gguf.find_float("general.sampling.penalty_repeat"))
    gen.repetition_penalty = checked_float(*v, "general.sampling.penalty_repeat", path);
  return files;
}

}  // namespace llmesh::model
