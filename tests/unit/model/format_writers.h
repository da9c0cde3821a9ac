// Little writers for the format tests: GGUF and safetensors images built in
// memory from a tiny model spec, so each test controls every byte it parses.
// Written from the format specs, independently of src/model's readers.
#pragma once

#include <cstdint>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"

namespace llmesh::test {

// Runs `f` and returns the llmesh::Error message ("" when nothing was thrown).
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// GGUF value type ids and ggml tensor type ids (from the GGUF spec).
enum : uint32_t { kU8 = 0, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };
enum : uint32_t { kGgmlF32 = 0, kGgmlF16 = 1, kGgmlQ4_0 = 2, kGgmlQ8_0 = 8, kGgmlQ4_K = 12, kGgmlBF16 = 30 };

class Bytes {
 public:
  template <typename T>
  void put(T v) {
    const size_t at = data.size();
    data.resize(at + sizeof(T));
    std::memcpy(data.data() + at, &v, sizeof(T));
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    data.insert(data.end(), s.begin(), s.end());
  }
  std::vector<uint8_t> data;
};

class GgufWriter {
 public:
  uint32_t version = 3;
  size_t alignment = 32;
  bool write_alignment_key = true;

  void kv_string(const std::string& key, const std::string& v) { begin(key, kString).put_string(v); }
  void kv_u32(const std::string& key, uint32_t v) { begin(key, kU32).put(v); }
  void kv_i32(const std::string& key, int32_t v) { begin(key, kI32).put(v); }
  void kv_u64(const std::string& key, uint64_t v) { begin(key, kU64).put(v); }
  void kv_f32(const std::string& key, float v) { begin(key, kF32).put(v); }
  void kv_bool(const std::string& key, bool v) { begin(key, kBool).put<uint8_t>(v ? 1 : 0); }
  void kv_strings(const std::string& key, const std::vector<std::string>& v) {
    Bytes& b = begin(key, kArray);
    b.put<uint32_t>(kString);
    b.put<uint64_t>(v.size());
    for (const auto& s : v) b.put_string(s);
  }
  void kv_i32s(const std::string& key, const std::vector<int32_t>& v) {
    Bytes& b = begin(key, kArray);
    b.put<uint32_t>(kI32);
    b.put<uint64_t>(v.size());
    for (int32_t x : v) b.put(x);
  }
  // `shape` outermost-first (llmesh order); written innermost-first.
  void tensor(const std::string& name, const std::vector<int64_t>& shape, uint32_t ggml_type,
              const std::vector<uint8_t>& bytes) {
    tensors_.push_back({name, shape, ggml_type, bytes});
  }
  size_t num_kv() const { return num_kv_; }

  std::vector<uint8_t> build() const {
    Bytes out;
    out.data.insert(out.data.end(), {'G', 'G', 'U', 'F'});
    out.put<uint32_t>(version);
    out.put<uint64_t>(tensors_.size());
    out.put<uint64_t>(num_kv_ + (write_alignment_key ? 1 : 0));
    if (write_alignment_key) {
      out.put_string("general.alignment");
      out.put<uint32_t>(kU32);
      out.put<uint32_t>(uint32_t(alignment));
    }
    out.data.insert(out.data.end(), kv_.data.begin(), kv_.data.end());
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const auto& t : tensors_) {
      out.put_string(t.name);
      out.put<uint32_t>(uint32_t(t.shape.size()));
      for (size_t d = t.shape.size(); d-- > 0;) out.put<uint64_t>(uint64_t(t.shape[d]));
      out.put<uint32_t>(t.ggml_type);
      out.put<uint64_t>(offset);
      offsets.push_back(offset);
      offset = align(offset + t.bytes.size());
    }
    out.data.resize(align(out.data.size()), 0);
    const size_t data_start = out.data.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      out.data.resize(data_start + offsets[i], 0);
      out.data.insert(out.data.end(), tensors_[i].bytes.begin(), tensors_[i].bytes.end());
    }
    return out.data;
  }

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> shape;
    uint32_t ggml_type;
    std::vector<uint8_t> bytes;
  };
  Bytes& begin(const std::string& key, uint32_t type) {
    ++num_kv_;
    kv_.put_string(key);
    kv_.put<uint32_t>(type);
    return kv_;
  }
  uint64_t align(uint64_t x) const { return (x + alignment - 1) / alignment * alignment; }

  Bytes kv_;
  size_t num_kv_ = 0;
  std::vector<PendingTensor> tensors_;
};

// safetensors: u64 header length, JSON header, data.
class SafetensorsWriter {
 public:
  void tensor(const std::string& name, const std::string& dtype, const std::vector<int64_t>& shape,
              const std::vector<uint8_t>& bytes) {
    header_[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {data_.size(), data_.size() + bytes.size()}}};
    data_.insert(data_.end(), bytes.begin(), bytes.end());
  }
  nlohmann::json& header() { return header_; }
  std::vector<uint8_t> build() const {
    nlohmann::json header = header_;
    header["__metadata__"] = {{"format", "pt"}};
    std::string text = header.dump();
    while (text.size() % 8 != 0) text += ' ';
    Bytes out;
    out.put<uint64_t>(text.size());
    out.data.insert(out.data.end(), text.begin(), text.end());
    out.data.insert(out.data.end(), data_.begin(), data_.end());
    return out.data;
  }

 private:
  nlohmann::json header_ = nlohmann::json::object();
  std::vector<uint8_t> data_;
};

// F32 values start + i * 1/1024 (exact in f32), so a test can tell which bytes a view points at.
inline std::vector<uint8_t> f32_pattern(int64_t num_elements, float start) {
  std::vector<uint8_t> bytes(size_t(num_elements) * 4);
  for (int64_t i = 0; i < num_elements; ++i) {
    const float v = start + float(i) / 1024.0f;
    std::memcpy(bytes.data() + i * 4, &v, 4);
  }
  return bytes;
}

inline int64_t product(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

inline void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}
inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// A fresh empty directory under the build tree (or /tmp).
inline std::filesystem::path fresh_dir(const std::string& name) {
#ifdef LLMESH_BINARY_DIR
  std::filesystem::path root = std::filesystem::path(LLMESH_BINARY_DIR) / "test_tmp" / "model_formats";
#else
  std::filesystem::path root = std::filesystem::temp_directory_path() / "llmesh_model_formats";
#endif
  std::filesystem::path dir = root / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A tiny model: the same weights can be written as GGUF or as a HF directory.
struct TinySpec {
  std::string arch = "qwen3";  // llama, qwen2, qwen3, qwen3moe
  int64_t vocab = 40, hidden = 64, layers = 2, heads = 4, kv_heads = 2, head_dim = 32, ffn = 128;
  int64_t experts = 0, experts_used = 0, moe_ffn = 0;
  bool tied = false;
  bool bias() const { return arch == "qwen2"; }
  bool qk_norm() const { return arch == "qwen3" || arch == "qwen3moe"; }
};

struct SpecTensor {
  std::string gguf_name;              // canonical name (stacked for experts)
  std::vector<std::string> hf_names;  // one per expert for stacked tensors
  std::vector<int64_t> shape;         // outermost-first; experts outermost when stacked
  float start;                        // first value of the f32 pattern
};

inline std::vector<SpecTensor> spec_tensors(const TinySpec& s) {
  std::vector<SpecTensor> out;
  float start = 1.0f;
  auto add = [&](std::string gguf, std::vector<std::string> hf, std::vector<int64_t> shape) {
    out.push_back({std::move(gguf), std::move(hf), std::move(shape), start});
    start += 1.0f;
  };
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  add("token_embd.weight", {"model.embed_tokens.weight"}, {s.vocab, s.hidden});
  add("output_norm.weight", {"model.norm.weight"}, {s.hidden});
  if (!s.tied) add("output.weight", {"lm_head.weight"}, {s.vocab, s.hidden});
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string g = "blk." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
    add(g + "attn_norm.weight", {h + "input_layernorm.weight"}, {s.hidden});
    add(g + "attn_q.weight", {h + "self_attn.q_proj.weight"}, {q, s.hidden});
    add(g + "attn_k.weight", {h + "self_attn.k_proj.weight"}, {kv, s.hidden});
    add(g + "attn_v.weight", {h + "self_attn.v_proj.weight"}, {kv, s.hidden});
    add(g + "attn_output.weight", {h + "self_attn.o_proj.weight"}, {s.hidden, q});
    if (s.bias()) {
      add(g + "attn_q.bias", {h + "self_attn.q_proj.bias"}, {q});
      add(g + "attn_k.bias", {h + "self_attn.k_proj.bias"}, {kv});
      add(g + "attn_v.bias", {h + "self_attn.v_proj.bias"}, {kv});
    }
    if (s.qk_norm()) {
      add(g + "attn_q_norm.weight", {h + "self_attn.q_norm.weight"}, {s.head_dim});
      add(g + "attn_k_norm.weight", {h + "self_attn.k_norm.weight"}, {s.head_dim});
    }
    add(g + "ffn_norm.weight", {h + "post_attention_layernorm.weight"}, {s.hidden});
    if (s.experts > 0) {
      add(g + "ffn_gate_inp.weight", {h + "mlp.gate.weight"}, {s.experts, s.hidden});
      for (const char* proj : {"gate", "up", "down"}) {
        std::vector<std::string> hf;
        for (int64_t e = 0; e < s.experts; ++e) {
          hf.push_back(h + "mlp.experts." + std::to_string(e) + "." + proj + "_proj.weight");
        }
        const bool down = std::string(proj) == "down";
        add(g + "ffn_" + proj + "_exps.weight", hf,
            {s.experts, down ? s.hidden : s.moe_ffn, down ? s.moe_ffn : s.hidden});
      }
    } else {
      add(g + "ffn_gate.weight", {h + "mlp.gate_proj.weight"}, {s.ffn, s.hidden});
      add(g + "ffn_up.weight", {h + "mlp.up_proj.weight"}, {s.ffn, s.hidden});
      add(g + "ffn_down.weight", {h + "mlp.down_proj.weight"}, {s.hidden, s.ffn});
    }
  }
  return out;
}

// Vocabulary: 4 byte-level "letters", merges, and two control tokens + one user-defined token,
// padded with unused tokens to spec.vocab.
struct TinyVocab {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;  // GGUF token types
  std::vector<std::string> merges;
  int32_t bos = 0, eos = 0, eot = 0;
};
inline TinyVocab tiny_vocab(int64_t vocab_size) {
  TinyVocab v;
  v.tokens = {"a", "b", "c", "d", "ab", "cd", "abcd", "<|bos|>", "<|eos|>", "<|eot|>", "<tool>"};
  v.types = {1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 4};
  v.merges = {"a b", "c d", "ab cd"};
  v.bos = 7;
  v.eos = 8;
  v.eot = 9;
  while (int64_t(v.tokens.size()) < vocab_size) {
    v.tokens.push_back("[PAD" + std::to_string(v.tokens.size()) + "]");
    v.types.push_back(5);
  }
  return v;
}

// Bytes of a tensor of `shape` in `ggml_type` (f32 pattern for F32, a byte pattern otherwise).
inline std::vector<uint8_t> tensor_bytes(const std::vector<int64_t>& shape, uint32_t ggml_type, float start) {
  const int64_t n = product(shape);
  switch (ggml_type) {
    case kGgmlF32:
      return f32_pattern(n, start);
    case kGgmlF16:
    case kGgmlBF16:
      return std::vector<uint8_t>(size_t(n) * 2, 0x3c);
    case kGgmlQ8_0:
      return std::vector<uint8_t>(size_t(n / 32) * 34, 1);
    case kGgmlQ4_0:
      return std::vector<uint8_t>(size_t(n / 32) * 18, 1);
    default:
      return std::vector<uint8_t>(size_t(n), 0);
  }
}

// Random F32 values for a model that must compute something sensible (the forward tests):
// 1-D tensors (norm weights, biases) 1 + U(-0.2, 0.2); matrices U(-1, 1) / sqrt(columns).
inline std::vector<uint8_t> random_f32_bytes(const std::vector<int64_t>& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  const bool vector = shape.size() == 1;
  const float scale = vector ? 0.2f : 1.0f / std::sqrt(float(shape.back()));
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<uint8_t> bytes(size_t(product(shape)) * 4);
  for (size_t i = 0; i < bytes.size(); i += 4) {
    const float v = (vector ? 1.0f : 0.0f) + dist(rng);
    std::memcpy(bytes.data() + i, &v, 4);
  }
  return bytes;
}

// A complete GGUF writer for the spec, ready to build() (tests may add or change things first).
// 1-D tensors are F32; matrices use `matrix_type`. A nonzero `random_seed` gives every tensor
// random_f32_bytes (matrix_type must then be F32) instead of the recognizable patterns.
inline GgufWriter tiny_gguf_writer(const TinySpec& s, uint32_t matrix_type = kGgmlF32, uint32_t random_seed = 0) {
  GgufWriter w;
  const std::string a = s.arch + ".";
  w.kv_string("general.architecture", s.arch);
  w.kv_string("general.name", "tiny-" + s.arch);
  w.kv_u32(a + "context_length", 4096);
  w.kv_u32(a + "embedding_length", uint32_t(s.hidden));
  w.kv_u32(a + "block_count", uint32_t(s.layers));
  w.kv_u32(a + "feed_forward_length", uint32_t(s.ffn));
  w.kv_u32(a + "attention.head_count", uint32_t(s.heads));
  w.kv_u32(a + "attention.head_count_kv", uint32_t(s.kv_heads));
  w.kv_u32(a + "attention.key_length", uint32_t(s.head_dim));
  w.kv_u32(a + "attention.value_length", uint32_t(s.head_dim));
  w.kv_f32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  w.kv_f32(a + "rope.freq_base", 1000000.0f);
  if (s.experts > 0) {
    w.kv_u32(a + "expert_count", uint32_t(s.experts));
    w.kv_u32(a + "expert_used_count", uint32_t(s.experts_used));
    w.kv_u32(a + "expert_feed_forward_length", uint32_t(s.moe_ffn));
  }
  const TinyVocab v = tiny_vocab(s.vocab);
  w.kv_string("tokenizer.ggml.model", "gpt2");
  w.kv_string("tokenizer.ggml.pre", s.arch == "llama" ? "llama-bpe" : "qwen2");
  w.kv_strings("tokenizer.ggml.tokens", v.tokens);
  w.kv_i32s("tokenizer.ggml.token_type", v.types);
  w.kv_strings("tokenizer.ggml.merges", v.merges);
  w.kv_u32("tokenizer.ggml.bos_token_id", uint32_t(v.bos));
  w.kv_u32("tokenizer.ggml.eos_token_id", uint32_t(v.eos));
  w.kv_u32("tokenizer.ggml.eot_token_id", uint32_t(v.eot));
  w.kv_bool("tokenizer.ggml.add_bos_token", s.arch == "llama");
  w.kv_string("tokenizer.chat_template", "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}");
  for (const SpecTensor& t : spec_tensors(s)) {
    const uint32_t type = t.shape.size() == 1 ? kGgmlF32 : matrix_type;
    w.tensor(t.gguf_name, t.shape, type,
             random_seed != 0 && type == kGgmlF32 ? random_f32_bytes(t.shape, random_seed + uint32_t(t.start))
                                                  : tensor_bytes(t.shape, type, t.start));
  }
  if (s.arch == "llama") w.tensor("rope_freqs.weight", {s.head_dim / 2}, kGgmlF32, f32_pattern(s.head_dim / 2, 1.0f));
  return w;
}

inline nlohmann::json tiny_hf_config(const TinySpec& s) {
  static const std::map<std::string, std::string> kClass = {{"llama", "LlamaForCausalLM"},
                                                            {"qwen2", "Qwen2ForCausalLM"},
                                                            {"qwen3", "Qwen3ForCausalLM"},
                                                            {"qwen3moe", "Qwen3MoeForCausalLM"}};
  nlohmann::json c = {{"architectures", {kClass.at(s.arch)}},
                      {"vocab_size", s.vocab},
                      {"hidden_size", s.hidden},
                      {"intermediate_size", s.ffn},
                      {"num_hidden_layers", s.layers},
                      {"num_attention_heads", s.heads},
                      {"num_key_value_heads", s.kv_heads},
                      {"head_dim", s.head_dim},
                      {"max_position_embeddings", 4096},
                      {"rms_norm_eps", 1e-6},
                      {"rope_theta", 1000000.0},
                      {"tie_word_embeddings", s.tied},
                      {"eos_token_id", 8},
                      {"torch_dtype", "float32"}};
  if (s.experts > 0) {
    c["num_experts"] = s.experts;
    c["num_experts_per_tok"] = s.experts_used;
    c["moe_intermediate_size"] = s.moe_ffn;
    c["norm_topk_prob"] = true;
    c["decoder_sparse_step"] = 1;
    c["mlp_only_layers"] = nlohmann::json::array();
  }
  return c;
}

// A tokenizer.json for tiny_vocab(): byte-level BPE with the GPT-2 regex.
inline nlohmann::json tiny_tokenizer_json(int64_t vocab_size) {
  const TinyVocab v = tiny_vocab(vocab_size);
  nlohmann::json vocab = nlohmann::json::object(), added = nlohmann::json::array();
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    if (v.types[id] == 3 || v.types[id] == 4) {
      added.push_back({{"id", id},
                       {"content", v.tokens[id]},
                       {"single_word", false},
                       {"lstrip", false},
                       {"rstrip", false},
                       {"normalized", false},
                       {"special", v.types[id] == 3}});
    } else {
      vocab[v.tokens[id]] = id;
    }
  }
  return {{"version", "1.0"},
          {"truncation", nullptr},
          {"padding", nullptr},
          {"added_tokens", added},
          {"normalizer", nullptr},
          {"pre_tokenizer",
           {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
          {"model",
           {{"type", "BPE"},
            {"dropout", nullptr},
            {"unk_token", nullptr},
            {"continuing_subword_prefix", nullptr},
            {"end_of_word_suffix", nullptr},
            {"fuse_unk", false},
            {"byte_fallback", false},
            {"ignore_merges", false},
            {"vocab", vocab},
            {"merges", v.merges}}}};
}

// Writes a HF model directory for the spec: config.json, tokenizer files,
// generation_config.json and the weights (F32, or BF16 with dtype "BF16"),
// in one file or, with num_shards 2, as two shards plus an index.
inline void write_hf_dir(const TinySpec& s, const std::filesystem::path& dir, int num_shards = 1,
                         const std::string& dtype = "F32") {
  write_text(dir / "config.json", tiny_hf_config(s).dump(2));
  write_text(dir / "tokenizer.json", tiny_tokenizer_json(s.vocab).dump());
  write_text(dir / "tokenizer_config.json",
             nlohmann::json{{"bos_token", "<|bos|>"},
                            {"eos_token", {{"content", "<|eos|>"}, {"special", true}}},
                            {"add_bos_token", false},
                            {"chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"}}
                 .dump());
  write_text(dir / "generation_config.json",
             nlohmann::json{{"eos_token_id", {8, 9}}, {"temperature", 0.6}, {"top_p", 0.95}, {"top_k", 20}}.dump());
  std::vector<SafetensorsWriter> shards{size_t(num_shards)};
  nlohmann::json weight_map = nlohmann::json::object();
  size_t i = 0;
  for (const SpecTensor& t : spec_tensors(s)) {
    std::vector<int64_t> shape = t.shape;
    if (t.hf_names.size() > 1) shape.erase(shape.begin());
    const int64_t n = product(shape);
    for (size_t e = 0; e < t.hf_names.size(); ++e) {
      const float start = t.start + float(int64_t(e) * n) / 1024.0f;
      std::vector<uint8_t> bytes = f32_pattern(n, start);
      if (dtype == "BF16") {  // bf16 = the top half of each f32 (first values stay exact)
        std::vector<uint8_t> half(size_t(n) * 2);
        for (int64_t k = 0; k < n; ++k) std::memcpy(&half[size_t(k) * 2], &bytes[size_t(k) * 4 + 2], 2);
        bytes = half;
      }
      const size_t shard = (i++) % shards.size();
      shards[shard].tensor(t.hf_names[e], dtype, shape, bytes);
      weight_map[t.hf_names[e]] =
          "model-0000" + std::to_string(shard + 1) + "-of-0000" + std::to_string(num_shards) + ".safetensors";
    }
  }
  if (num_shards == 1) {
    write_file(dir / "model.safetensors", shards[0].build());
    return;
  }
  for (size_t k = 0; k < shards.size(); ++k) {
    write_file(dir / ("model-0000" + std::to_string(k + 1) + "-of-0000" + std::to_string(num_shards) + ".safetensors"),
               shards[k].build());
  }
  write_text(dir / "model.safetensors.index.json",
             nlohmann::json{{"metadata", {{"total_size", 0}}}, {"weight_map", weight_map}}.dump(2));
}

}  // namespace llmesh::test
