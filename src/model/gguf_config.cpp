#include "model/gguf_config.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/log.h"
#include "model/json_util.h"

namespace llmesh {

namespace {

using json_util::checked_float;

constexpr const char* kSupportedArchs[] = {"llama", "qwen2", "qwen3", "qwen3moe"};

// llama.cpp token types (tokenizer.ggml.token_type).
enum GgufTokenType : int64_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

constexpr const char* kExpertStacks[] = {"ffn_gate_exps", "ffn_up_exps", "ffn_down_exps"};

// "blk.12.ffn_up_exps.weight" -> true with prefix "blk.12.ffn_up_exps".
bool is_stacked_expert_tensor(const std::string& name, std::string* stem) {
  if (name.rfind("blk.", 0) != 0) return false;
  const std::string suffix = ".weight";
  if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
    return false;
  }
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

bool is_end_of_turn_marker(const std::string& token) {
  static const char* const kMarkers[] = {"<|eot_id|>",   "<|eom_id|>", "<|end_of_text|>", "<|im_end|>",
                                         "<|endoftext|>", "<|end|>",    "<end_of_turn>"};
  return std::find(std::begin(kMarkers), std::end(kMarkers), token) != std::end(kMarkers);
}

int32_t token_id_in_range(int64_t id, size_t num_tokens, const std::string& key, const std::string& source) {
  check(id >= 0 && uint64_t(id) < num_tokens, "{}: {} = {} is outside the vocabulary of {} tokens", source, key, id,
        num_tokens);
  return int32_t(id);
}

}  // namespace

bool is_supported_gguf_arch(const std::string& arch) {
  return std::find(std::begin(kSupportedArchs), std::end(kSupportedArchs), arch) != std::end(kSupportedArchs);
}

ModelConfig read_gguf_config(const GgufFile& gguf) {
  const std::string& source = gguf.path();
  ModelConfig c;
  c.arch = gguf.get_string("general.architecture");
  check(is_supported_gguf_arch(c.arch), "{}: unknown architecture '{}' (llmesh supports llama, qwen2, qwen3, qwen3moe)",
        source, c.arch);
  const std::string a = c.arch + ".";
  c.hidden_size = gguf.get_int(a + "embedding_length");
  c.num_layers = gguf.get_int(a + "block_count");
  c.num_heads = gguf.get_int(a + "attention.head_count");
  check(c.num_heads > 0, "{}: {}attention.head_count must be positive", source, a);
  c.num_kv_heads = gguf.find_int(a + "attention.head_count_kv").value_or(c.num_heads);
  c.head_dim = gguf.find_int(a + "attention.key_length").value_or(c.hidden_size / c.num_heads);
  if (auto value_length = gguf.find_int(a + "attention.value_length")) {
    check(*value_length == c.head_dim, "{}: attention.value_length {} differs from key_length {} (unsupported)", source,
          *value_length, c.head_dim);
  }
  c.max_position = gguf.get_int(a + "context_length");
  c.rms_norm_eps = checked_float(gguf.get_float(a + "attention.layer_norm_rms_epsilon"), "rms epsilon", source);
  c.rope_theta = checked_float(gguf.find_float(a + "rope.freq_base").value_or(10000.0), "rope.freq_base", source);
  c.rope_style = c.arch == "llama" ? RopeStyle::Interleaved : RopeStyle::Neox;
  if (auto scaling = gguf.find_string(a + "rope.scaling.type")) {
    // Llama 3 scaling comes as the rope_freqs.weight tensor, not as a scaling type.
    check(scaling->empty() || *scaling == "none", "{}: unsupported rope scaling '{}'", source, *scaling);
  }

  if (c.arch == "qwen3moe") {
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
  } else if (const GgufValue* tokens = gguf.find("tokenizer.ggml.tokens");
             tokens && tokens->type == GgufValueType::Array && tokens->array_type == GgufValueType::String) {
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

BpeVocab read_gguf_vocab(const GgufFile& gguf) {
  const std::string& source = gguf.path();
  BpeVocab vocab;
  const std::string model = gguf.get_string("tokenizer.ggml.model");
  check(model == "gpt2", "{}: unsupported tokenizer model '{}' (llmesh reads byte-level BPE, 'gpt2')", source, model);
  const std::string pre = gguf.find_string("tokenizer.ggml.pre").value_or("default");
  vocab.pre_tokenizer = pre == "llama-bpe" ? "llama3" : pre == "default" ? "gpt2" : pre;
  vocab.ignore_merges = vocab.pre_tokenizer == "llama3";

  vocab.tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  check(!vocab.tokens.empty(), "{}: tokenizer.ggml.tokens is empty", source);
  check(vocab.tokens.size() <= size_t(INT32_MAX), "{}: too many tokens", source);
  if (gguf.has("tokenizer.ggml.token_type")) {
    const std::vector<int64_t> types = gguf.get_int_array("tokenizer.ggml.token_type");
    check(types.size() == vocab.tokens.size(), "{}: tokenizer.ggml.token_type has {} entries for {} tokens", source,
          types.size(), vocab.tokens.size());
    for (size_t id = 0; id < types.size(); ++id) {
      if (types[id] == kControl || types[id] == kUserDefined) {
        vocab.added_tokens.push_back({int32_t(id), vocab.tokens[id], types[id] == kControl});
      }
    }
  }

  if (gguf.has("tokenizer.ggml.merges")) {
    const std::vector<std::string>& merges = gguf.get_string_array("tokenizer.ggml.merges");
    vocab.merges.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
      const size_t space = merges[i].find(' ');
      check(space != std::string::npos && space > 0 && space + 1 < merges[i].size(),
            "{}: tokenizer.ggml.merges[{}] '{}' is not two symbols separated by a space", source, i, merges[i]);
      vocab.merges.emplace_back(merges[i].substr(0, space), merges[i].substr(space + 1));
    }
  }
  check(!vocab.merges.empty(), "{}: byte-level BPE needs tokenizer.ggml.merges", source);

  const size_t n = vocab.tokens.size();
  if (auto bos = gguf.find_int("tokenizer.ggml.bos_token_id")) {
    vocab.bos_token_id = token_id_in_range(*bos, n, "tokenizer.ggml.bos_token_id", source);
  }
  if (auto eos = gguf.find_int("tokenizer.ggml.eos_token_id")) {
    vocab.eos_token_id = token_id_in_range(*eos, n, "tokenizer.ggml.eos_token_id", source);
  }
  // llama.cpp adds BOS by default for Llama 3 vocabularies; the key overrides.
  vocab.add_bos_token = gguf.find_bool("tokenizer.ggml.add_bos_token").value_or(vocab.pre_tokenizer == "llama3");
  check(!vocab.add_bos_token || vocab.bos_token_id >= 0, "{}: add_bos_token is set but there is no bos_token_id",
        source);
  return vocab;
}

void add_gguf_weights(const GgufFile& gguf, WeightStore& weights) {
  if (gguf.mapping()) weights.keep_mapping(gguf.mapping());
  for (const Tensor& t : gguf.tensors()) {
    weights.add_file_tensor(t);
    std::string stem;
    if (is_stacked_expert_tensor(t.name, &stem)) {
      check(t.num_dims() == 3, "{}: expert tensor '{}' should be 3-D {{experts, out, in}}, got {}", gguf.path(), t.name,
            t.shape_string());
      for (int64_t e = 0; e < t.shape[0]; ++e) {
        weights.add(stem + "." + std::to_string(e) + ".weight", t.index(e));
      }
      continue;
    }
    weights.add(t.name, t);
  }
}

ModelFiles model_from_gguf(const GgufFile& gguf, const std::string& path) {
  ModelFiles files;
  files.path = path;
  files.format = "gguf";
  files.config = read_gguf_config(gguf);
  files.name = gguf.find_string("general.name").value_or(std::filesystem::path(path).stem().string());
  files.weights = WeightStore(path);
  add_gguf_weights(gguf, files.weights);
  check_weights_match_config(files.weights, files.config);
  files.vocab = read_gguf_vocab(gguf);
  check(files.vocab.tokens.size() <= size_t(files.config.vocab_size),
        "{}: the tokenizer has {} tokens but the model's vocabulary has {} rows", path, files.vocab.tokens.size(),
        files.config.vocab_size);
  files.chat_template = gguf.find_string("tokenizer.chat_template").value_or("");
  if (files.vocab.bos_token_id >= 0) files.bos_token = files.vocab.tokens[size_t(files.vocab.bos_token_id)];
  if (files.vocab.eos_token_id >= 0) files.eos_token = files.vocab.tokens[size_t(files.vocab.eos_token_id)];

  GenerationDefaults& gen = files.generation;
  const size_t n = files.vocab.tokens.size();
  if (files.vocab.eos_token_id >= 0) gen.eos_token_ids.push_back(files.vocab.eos_token_id);
  auto add_eos = [&](int32_t token) {
    if (std::find(gen.eos_token_ids.begin(), gen.eos_token_ids.end(), token) == gen.eos_token_ids.end()) {
      gen.eos_token_ids.push_back(token);
    }
  };
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    if (auto id = gguf.find_int(key)) add_eos(token_id_in_range(*id, n, key, path));
  }
  // GGUF carries a single eos id, while HF generation_config lists every turn
  // terminator; like llama.cpp, treat the well-known end-of-turn control tokens
  // as end of generation too, so both formats stop on the same tokens.
  for (const AddedToken& t : files.vocab.added_tokens) {
    if (t.special && is_end_of_turn_marker(t.content)) add_eos(t.id);
  }
  if (auto v = gguf.find_float("general.sampling.temp"))
    gen.temperature = checked_float(*v, "general.sampling.temp", path);
  if (auto v = gguf.find_float("general.sampling.top_p")) gen.top_p = checked_float(*v, "general.sampling.top_p", path);
  if (auto v = gguf.find_float("general.sampling.min_p")) gen.min_p = checked_float(*v, "general.sampling.min_p", path);
  if (auto v = gguf.find_int("general.sampling.top_k")) gen.top_k = int(std::clamp<int64_t>(*v, 0, INT32_MAX));
  if (auto v = gguf.find_float("general.sampling.penalty_repeat"))
    gen.repetition_penalty = checked_float(*v, "general.sampling.penalty_repeat", path);
  return files;
}

}  // namespace llmesh
