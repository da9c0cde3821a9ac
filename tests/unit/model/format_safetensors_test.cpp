// safetensors reader, HF config / tokenizer_config / generation_config parsing,
// HF -> canonical tensor names, and open_model / open_hf_tokenizer on HF directories (single file,
// sharded, BF16), including agreement with the GGUF reader on the same model.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "format/safetensors.h"
#include "format_writers.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/model_files.h"
#include "model/weight_store.h"
#include "text/hf_tokenizer_config.h"
#include "text/tokenizer_files.h"

namespace llmesh {

using format::GgufFile;
using format::SafetensorsFile;
using model::GenerationDefaults;
using model::hf_tensor_to_canonical;
using model::model_from_gguf;
using model::ModelConfig;
using model::ModelFiles;
using model::open_model;
using model::parse_hf_config;
using model::parse_hf_generation_config;
using model::RopeStyle;
using text::HfTokenizerConfig;
using text::open_hf_tokenizer;
using text::parse_hf_tokenizer_config;
using text::TokenizerFiles;

namespace {

using test::SafetensorsWriter;
using test::TinySpec;
using Json = nlohmann::json;

using test::error_of;

SafetensorsFile parse(const std::vector<uint8_t>& bytes) {
  return SafetensorsFile::parse(bytes.data(), bytes.size(), "w.safetensors");
}

float first_value(const Tensor& t) {
  if (t.dtype == DType::BF16) {
    uint16_t h;
    std::memcpy(&h, t.data, 2);
    return bf16_to_f32(h);
  }
  float v;
  std::memcpy(&v, t.data, 4);
  return v;
}

std::vector<uint8_t> with_header(const std::string& header, size_t num_data_bytes) {
  test::Bytes b;
  b.put<uint64_t>(header.size());
  b.data.insert(b.data.end(), header.begin(), header.end());
  b.data.resize(b.data.size() + num_data_bytes, 0);
  return b.data;
}

TEST(FormatSafetensors, ParsesTensors) {
  SafetensorsWriter w;
  w.tensor("b", "BF16", {2, 3}, std::vector<uint8_t>(12, 0));
  w.tensor("a", "F32", {4}, test::f32_pattern(4, 3.0f));
  w.tensor("h", "F16", {1, 2, 2}, std::vector<uint8_t>(8, 0));
  w.tensor("s", "F32", {}, test::f32_pattern(1, 7.0f));
  const auto bytes = w.build();
  const SafetensorsFile f = parse(bytes);
  ASSERT_EQ(f.tensors().size(), 4u);
  EXPECT_EQ(f.tensors()[0].name, "b");  // file order
  EXPECT_EQ(f.find_tensor("b")->dtype, DType::BF16);
  EXPECT_EQ(f.find_tensor("b")->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(f.find_tensor("h")->dtype, DType::F16);
  EXPECT_EQ(first_value(*f.find_tensor("a")), 3.0f);
  EXPECT_EQ(f.find_tensor("a")->f32()[3], 3.0f + 3 / 1024.0f);
  EXPECT_EQ(first_value(*f.find_tensor("s")), 7.0f);
  EXPECT_EQ(f.find_tensor("s")->num_elements(), 1);
  EXPECT_EQ(f.metadata().at("format"), "pt");
  EXPECT_EQ(f.find_tensor("zz"), nullptr);
}

TEST(FormatSafetensors, Errors) {
  auto err = [](const std::vector<uint8_t>& bytes) { return error_of([&] { parse(bytes); }); };
  EXPECT_NE(err({1, 2, 3}).find("not a safetensors file"), std::string::npos);
  {
    test::Bytes b;
    b.put<uint64_t>(1ull << 62);
    b.data.resize(64, '{');
    EXPECT_NE(err(b.data).find("absurd"), std::string::npos);
  }
  {
    test::Bytes b;
    b.put<uint64_t>(1000);
    b.data.resize(64, '{');
    EXPECT_NE(err(b.data).find("truncated"), std::string::npos);
  }
  EXPECT_NE(err(with_header("{\"a\": ", 0)).find("invalid JSON"), std::string::npos);
  EXPECT_NE(err(with_header("[1, 2]", 0)).find("not a JSON object"), std::string::npos);
  EXPECT_NE(err(with_header(R"({"a": {"dtype": "I64", "shape": [2], "data_offsets": [0, 16]}})", 16))
                .find("tensor 'a' has unsupported dtype I64"),
            std::string::npos);
  EXPECT_NE(err(with_header(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 12]}})", 16))
                .find("should take 8 bytes"),
            std::string::npos);
  EXPECT_NE(err(with_header(R"({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}})", 8))
                .find("truncated safetensors file: tensor 'a'"),
            std::string::npos);
  EXPECT_NE(
      err(with_header(R"({"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}})", 16)).find("non-negative"),
      std::string::npos);
  EXPECT_NE(err(with_header(R"({"a": {"dtype": "F32", "shape": [1], "data_offsets": [8, 4]}})", 16)).find("reversed"),
            std::string::npos);
  EXPECT_NE(err(with_header(R"({"a": {"dtype": "F32", "shape": [1]}})", 16)).find("data_offsets"), std::string::npos);
  EXPECT_NE(err(with_header(R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 16)).find("'dtype'"),
            std::string::npos);
  EXPECT_NE(
      err(with_header(
              R"({"a": {"dtype": "F32", "shape": [4294967296, 4294967296, 4294967296], "data_offsets": [0, 4]}})", 16))
          .find("absurd"),
      std::string::npos);
}

TEST(FormatSafetensors, EveryTruncationAndCorruptionThrowsError) {
  SafetensorsWriter w;
  w.tensor("x", "F32", {8, 4}, test::f32_pattern(32, 0));
  w.tensor("y", "BF16", {16}, std::vector<uint8_t>(32, 0));
  const auto bytes = w.build();
  ASSERT_NO_THROW(parse(bytes));
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + ptrdiff_t(size));
    EXPECT_THROW(parse(prefix), Error) << size;
  }
  std::mt19937 rng(7);
  for (int iter = 0; iter < 2000; ++iter) {
    std::vector<uint8_t> corrupt = bytes;
    corrupt[rng() % corrupt.size()] = uint8_t(rng());
    try {
      const SafetensorsFile f = parse(corrupt);
      for (const Tensor& t : f.tensors()) {
        EXPECT_LE(static_cast<const uint8_t*>(t.data) + t.num_bytes(), corrupt.data() + corrupt.size());
      }
    } catch (const Error&) {
    }
  }
}

TEST(FormatHf, TensorNamesMapToCanonical) {
  const std::pair<const char*, const char*> cases[] = {
      {"model.embed_tokens.weight", "token_embd.weight"},
      {"model.norm.weight", "output_norm.weight"},
      {"lm_head.weight", "output.weight"},
      {"model.layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
      {"model.layers.12.self_attn.q_proj.weight", "blk.12.attn_q.weight"},
      {"model.layers.3.self_attn.k_proj.bias", "blk.3.attn_k.bias"},
      {"model.layers.3.self_attn.v_proj.weight", "blk.3.attn_v.weight"},
      {"model.layers.3.self_attn.o_proj.weight", "blk.3.attn_output.weight"},
      {"model.layers.3.self_attn.q_norm.weight", "blk.3.attn_q_norm.weight"},
      {"model.layers.3.self_attn.k_norm.weight", "blk.3.attn_k_norm.weight"},
      {"model.layers.3.post_attention_layernorm.weight", "blk.3.ffn_norm.weight"},
      {"model.layers.3.mlp.gate_proj.weight", "blk.3.ffn_gate.weight"},
      {"model.layers.3.mlp.up_proj.weight", "blk.3.ffn_up.weight"},
      {"model.layers.3.mlp.down_proj.weight", "blk.3.ffn_down.weight"},
      {"model.layers.47.mlp.gate.weight", "blk.47.ffn_gate_inp.weight"},
      {"model.layers.1.mlp.experts.127.gate_proj.weight", "blk.1.ffn_gate_exps.127.weight"},
      {"model.layers.1.mlp.experts.0.up_proj.weight", "blk.1.ffn_up_exps.0.weight"},
      {"model.layers.1.mlp.experts.5.down_proj.weight", "blk.1.ffn_down_exps.5.weight"},
  };
  for (const auto& [hf, canonical] : cases) EXPECT_EQ(hf_tensor_to_canonical(hf), std::string(canonical)) << hf;
  for (const char* unknown : {"model.layers.0.self_attn.rotary_emb.inv_freq", "model.layers.x.mlp.up_proj.weight",
                              "model.layers.01.mlp.up_proj.weight", "model.layers.1.mlp.experts.1.w1.weight",
                              "model.layers.1.mlp.experts.up_proj.weight", "model.layers.", "visual.blocks.0.weight",
                              "model.layers.1.mlp.up_proj.scales"}) {
    EXPECT_EQ(hf_tensor_to_canonical(unknown), std::nullopt) << unknown;
  }
}

TEST(FormatHf, ConfigParsing) {
  TinySpec spec;
  Json config = test::tiny_hf_config(spec);
  ModelConfig c = parse_hf_config(config, "config.json");
  EXPECT_EQ(c.arch, "qwen3");
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.rope_style, RopeStyle::Neox);

  // Defaults: num_key_value_heads = heads, head_dim = hidden / heads.
  config.erase("num_key_value_heads");
  config["head_dim"] = nullptr;
  c = parse_hf_config(config, "config.json");
  EXPECT_EQ(c.num_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 16);

  // model_type when architectures is absent; Qwen2 always has biases.
  config.erase("architectures");
  config["model_type"] = "qwen2";
  c = parse_hf_config(config, "config.json");
  EXPECT_EQ(c.arch, "qwen2");
  EXPECT_TRUE(c.attention_bias);
  EXPECT_FALSE(c.qk_norm);

  // Llama 3 rope scaling (either key name for the type).
  TinySpec llama_spec;
  llama_spec.arch = "llama";
  Json llama = test::tiny_hf_config(llama_spec);
  llama["rope_scaling"] = {{"rope_type", "llama3"},
                           {"factor", 8.0},
                           {"low_freq_factor", 1.0},
                           {"high_freq_factor", 4.0},
                           {"original_max_position_embeddings", 64}};
  c = parse_hf_config(llama, "config.json");
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.rope_style, RopeStyle::Neox);  // HF checkpoints are rotate_half
  EXPECT_FALSE(c.attention_bias);
  EXPECT_EQ(c.rope_scaling.type, "llama3");
  EXPECT_FLOAT_EQ(c.rope_scaling.factor, 8.0f);
  EXPECT_EQ(c.rope_scaling.original_max_position, 64);
  llama["rope_scaling"] = {{"type", "llama3"}, {"factor", 2.0}};
  EXPECT_FLOAT_EQ(parse_hf_config(llama, "config.json").rope_scaling.factor, 2.0f);
  llama["rope_scaling"] = {{"rope_type", "default"}};
  EXPECT_EQ(parse_hf_config(llama, "config.json").rope_scaling.type, "");
  llama["attention_bias"] = true;
  EXPECT_TRUE(parse_hf_config(llama, "config.json").attention_bias);

  auto err = [](const Json& j) { return error_of([&] { parse_hf_config(j, "cfg/config.json"); }); };
  llama["rope_scaling"] = {{"rope_type", "longrope"}, {"factor", 4.0}};
  EXPECT_NE(err(llama).find("unsupported rope scaling type 'longrope'"), std::string::npos);
  llama["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 0.5}};
  EXPECT_NE(err(llama).find("rope scaling factor 0.5 is out of range"), std::string::npos);
  llama["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}, {"beta_fast", 1.0}, {"beta_slow", 2.0}};
  EXPECT_NE(err(llama).find("yarn needs beta_fast > beta_slow > 0"), std::string::npos);
  llama["rope_scaling"] = {{"rope_type", "linear"}};
  EXPECT_NE(err(llama).find("'factor'"), std::string::npos);
  Json bad = test::tiny_hf_config(spec);
  bad["architectures"] = {"GemmaForCausalLM"};
  EXPECT_NE(err(bad).find("cfg/config.json: unknown architecture 'GemmaForCausalLM'"), std::string::npos);
  bad = test::tiny_hf_config(spec);
  bad.erase("hidden_size");
  EXPECT_NE(err(bad).find("missing required key 'hidden_size'"), std::string::npos);
  bad = test::tiny_hf_config(spec);
  bad["hidden_size"] = "64";
  EXPECT_NE(err(bad).find("'hidden_size' must be an integer"), std::string::npos);
  bad = test::tiny_hf_config(spec);
  bad["num_hidden_layers"] = -1;
  EXPECT_NE(err(bad).find("num_layers = -1 is out of range"), std::string::npos);
  bad = test::tiny_hf_config(spec);
  bad["num_key_value_heads"] = 3;
  EXPECT_NE(err(bad).find("not a multiple"), std::string::npos);
  EXPECT_NE(err(Json::array()).find("must be a JSON object"), std::string::npos);

  TinySpec moe_spec;
  moe_spec.arch = "qwen3moe";
  moe_spec.experts = 8;
  moe_spec.experts_used = 2;
  moe_spec.moe_ffn = 64;
  Json moe = test::tiny_hf_config(moe_spec);
  c = parse_hf_config(moe, "config.json");
  EXPECT_EQ(c.num_experts, 8);
  EXPECT_EQ(c.num_experts_per_token, 2);
  EXPECT_EQ(c.moe_intermediate_size, 64);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_TRUE(c.qk_norm);
  moe["mlp_only_layers"] = {0};
  EXPECT_NE(err(moe).find("mlp_only_layers"), std::string::npos);
  moe["mlp_only_layers"] = Json::array();
  moe["decoder_sparse_step"] = 2;
  EXPECT_NE(err(moe).find("decoder_sparse_step"), std::string::npos);
  moe["decoder_sparse_step"] = 1;
  moe["num_experts_per_tok"] = 9;
  EXPECT_NE(err(moe).find("num_experts_per_token"), std::string::npos);
}

// Sliding-window attention: Mistral windows every layer, and the window no longer caps the context;
// a Llama config's window is not used (HF's Llama has none); Qwen2/Qwen3 use theirs only with
// use_sliding_window, on the layers from max_window_layers on, or on those layer_types names.
TEST(FormatHf, SlidingWindow) {
  TinySpec llama_spec;
  llama_spec.arch = "llama";
  Json mistral = test::tiny_hf_config(llama_spec);
  mistral["architectures"] = {"MistralForCausalLM"};
  mistral["model_type"] = "mistral";
  mistral["max_position_embeddings"] = 32768;
  mistral["sliding_window"] = 4096;  // Mistral 7B v0.1
  ModelConfig c = parse_hf_config(mistral, "config.json");
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.sliding_window, 4096);
  EXPECT_TRUE(c.window_layers.empty());
  EXPECT_EQ(c.layer_window(0), 4096);
  EXPECT_EQ(c.layer_window(1), 4096);
  EXPECT_EQ(c.max_context(), 32768);
  mistral.erase("architectures");  // model_type alone says Mistral too
  EXPECT_EQ(parse_hf_config(mistral, "config.json").sliding_window, 4096);
  mistral["sliding_window"] = nullptr;  // later Mistral models
  EXPECT_EQ(parse_hf_config(mistral, "config.json").sliding_window, 0);
  auto err = [](const Json& j) { return error_of([&] { parse_hf_config(j, "cfg/config.json"); }); };
  mistral["sliding_window"] = 0;
  EXPECT_NE(err(mistral).find("sliding_window 0 must be positive"), std::string::npos);

  Json llama = test::tiny_hf_config(llama_spec);
  llama["sliding_window"] = 16;
  EXPECT_EQ(parse_hf_config(llama, "config.json").sliding_window, 0);

  TinySpec qwen_spec;  // qwen3, 2 layers
  Json qwen = test::tiny_hf_config(qwen_spec);
  qwen["sliding_window"] = 16;
  EXPECT_EQ(parse_hf_config(qwen, "config.json").sliding_window, 0);  // use_sliding_window absent
  qwen["use_sliding_window"] = true;
  qwen["max_window_layers"] = 1;
  c = parse_hf_config(qwen, "config.json");
  EXPECT_EQ(c.sliding_window, 16);
  EXPECT_EQ(c.window_layers, (std::vector<bool>{false, true}));
  EXPECT_EQ(c.layer_window(0), 0);
  EXPECT_EQ(c.layer_window(1), 16);
  qwen["max_window_layers"] = 0;  // every layer
  c = parse_hf_config(qwen, "config.json");
  EXPECT_EQ(c.sliding_window, 16);
  EXPECT_TRUE(c.window_layers.empty());
  qwen.erase("max_window_layers");  // HF's default, 28: no layer of 2
  EXPECT_EQ(parse_hf_config(qwen, "config.json").sliding_window, 0);
  qwen["layer_types"] = {"sliding_attention", "full_attention"};
  c = parse_hf_config(qwen, "config.json");
  EXPECT_EQ(c.window_layers, (std::vector<bool>{true, false}));
  qwen["layer_types"] = {"sliding_attention"};
  EXPECT_NE(err(qwen).find("layer_types must list the 2 layers"), std::string::npos);
  qwen["layer_types"] = {"chunked_attention", "full_attention"};
  EXPECT_NE(err(qwen).find("layer type \"chunked_attention\" is neither"), std::string::npos);
}

// GLM-4.5's config.json (Glm4MoeForCausalLM) and its tensor names; and the errors a broken
// GLM model must give: expert groups that do not divide the experts, a missing shared expert.
Json glm4_moe_config() {
  TinySpec spec;
  Json c = test::tiny_hf_config(spec);
  c["architectures"] = {"Glm4MoeForCausalLM"};
  c["model_type"] = "glm4_moe";
  c["num_hidden_layers"] = 3;
  c["n_routed_experts"] = 8;
  c["num_experts_per_tok"] = 2;
  c["moe_intermediate_size"] = 64;
  c["n_shared_experts"] = 1;
  c["first_k_dense_replace"] = 1;
  c["n_group"] = 2;
  c["topk_group"] = 1;
  c["routed_scaling_factor"] = 2.5;
  c["norm_topk_prob"] = true;
  c["partial_rotary_factor"] = 0.5;
  c["use_qk_norm"] = true;
  c["attention_bias"] = true;
  c["num_nextn_predict_layers"] = 1;
  return c;
}

// Shape-only tensors (no data) for every weight a GLM-4.5 config of glm4_moe_config() needs.
model::WeightStore glm4_moe_weights(const ModelConfig& c) {
  model::WeightStore w("glm");
  auto add = [&](const std::string& name, std::vector<int64_t> shape) {
    Tensor t;
    t.shape = std::move(shape);
    w.add(name, t);
  };
  const int64_t h = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  add("token_embd.weight", {c.vocab_size, h});
  add("output_norm.weight", {h});
  add("output.weight", {c.vocab_size, h});
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const std::string b = "blk." + std::to_string(l) + ".";
    add(b + "attn_norm.weight", {h});
    add(b + "attn_q.weight", {q, h});
    add(b + "attn_k.weight", {kv, h});
    add(b + "attn_v.weight", {kv, h});
    add(b + "attn_q.bias", {q});
    add(b + "attn_k.bias", {kv});
    add(b + "attn_v.bias", {kv});
    add(b + "attn_q_norm.weight", {c.head_dim});
    add(b + "attn_k_norm.weight", {c.head_dim});
    add(b + "attn_output.weight", {h, q});
    add(b + "ffn_norm.weight", {h});
    if (l < c.first_dense_layers) {
      add(b + "ffn_gate.weight", {c.intermediate_size, h});
      add(b + "ffn_up.weight", {c.intermediate_size, h});
      add(b + "ffn_down.weight", {h, c.intermediate_size});
      continue;
    }
    add(b + "ffn_gate_inp.weight", {c.num_experts, h});
    add(b + "exp_probs_b.bias", {c.num_experts});
    for (int64_t e = 0; e < c.num_experts; ++e) {
      const std::string x = "." + std::to_string(e) + ".weight";
      add(b + "ffn_gate_exps" + x, {c.moe_intermediate_size, h});
      add(b + "ffn_up_exps" + x, {c.moe_intermediate_size, h});
      add(b + "ffn_down_exps" + x, {h, c.moe_intermediate_size});
    }
    add(b + "ffn_gate_shexp.weight", {c.moe_intermediate_size, h});
    add(b + "ffn_up_shexp.weight", {c.moe_intermediate_size, h});
    add(b + "ffn_down_shexp.weight", {h, c.moe_intermediate_size});
  }
  return w;
}

TEST(FormatHf, Glm4MoeConfigTensorsAndErrors) {
  const ModelConfig c = parse_hf_config(glm4_moe_config(), "config.json");
  EXPECT_EQ(c.arch, "glm4moe");
  EXPECT_EQ(c.num_layers, 3);  // the MTP layer is not one of them
  EXPECT_EQ(c.rotary_dim, 16);
  EXPECT_EQ(c.rope_dim(), 16);
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.attention_bias);
  EXPECT_EQ(c.num_experts, 8);
  EXPECT_EQ(c.num_experts_per_token, 2);
  EXPECT_EQ(c.first_dense_layers, 1);
  EXPECT_FALSE(c.is_moe_layer(0));
  EXPECT_TRUE(c.is_moe_layer(1));
  EXPECT_EQ(c.num_shared_experts, 1);
  EXPECT_EQ(c.router_gating, model::RouterGating::Sigmoid);
  EXPECT_TRUE(c.router_bias);
  EXPECT_EQ(c.expert_groups, 2);
  EXPECT_EQ(c.expert_groups_used, 1);
  EXPECT_FLOAT_EQ(c.routed_scaling, 2.5f);
  EXPECT_TRUE(c.norm_topk_prob);
  // Qwen3-MoE keeps the softmax router and its defaults.
  TinySpec qwen_moe;
  qwen_moe.arch = "qwen3moe";
  qwen_moe.experts = 8;
  qwen_moe.experts_used = 2;
  qwen_moe.moe_ffn = 64;
  const ModelConfig q = parse_hf_config(test::tiny_hf_config(qwen_moe), "config.json");
  EXPECT_EQ(q.router_gating, model::RouterGating::Softmax);
  EXPECT_FALSE(q.router_bias);
  EXPECT_EQ(q.num_shared_experts, 0);
  EXPECT_EQ(q.first_dense_layers, 0);
  EXPECT_EQ(q.rope_dim(), q.head_dim);

  const std::pair<const char*, const char*> names[] = {
      {"model.layers.1.mlp.gate.e_score_correction_bias", "blk.1.exp_probs_b.bias"},
      {"model.layers.1.mlp.shared_experts.gate_proj.weight", "blk.1.ffn_gate_shexp.weight"},
      {"model.layers.1.mlp.shared_experts.up_proj.weight", "blk.1.ffn_up_shexp.weight"},
      {"model.layers.1.mlp.shared_experts.down_proj.weight", "blk.1.ffn_down_shexp.weight"},
  };
  for (const auto& [hf, canonical] : names) EXPECT_EQ(hf_tensor_to_canonical(hf), std::string(canonical)) << hf;
  EXPECT_EQ(hf_tensor_to_canonical("model.layers.1.self_attn.q_proj.e_score_correction_bias"), std::nullopt);

  model::check_weights_match_config(glm4_moe_weights(c), c);  // complete: no error
  auto err = [](const Json& j) { return error_of([&] { parse_hf_config(j, "cfg/config.json"); }); };
  Json bad = glm4_moe_config();
  bad["n_group"] = 3;
  EXPECT_NE(err(bad).find("cfg/config.json: n_group (expert groups) 3 does not divide the 8 experts"),
            std::string::npos)
      << err(bad);
  bad = glm4_moe_config();
  bad["topk_group"] = 3;
  EXPECT_NE(err(bad).find("topk_group (expert groups used) = 3 is out of range [1, 2]"), std::string::npos) << err(bad);
  bad = glm4_moe_config();
  bad["num_experts_per_tok"] = 5;  // more than the 4 experts of one kept group
  EXPECT_NE(err(bad).find("5 experts per token do not fit in topk_group 1 groups of 4"), std::string::npos)
      << err(bad);
  bad = glm4_moe_config();
  bad["partial_rotary_factor"] = 0.3;  // 32 * 0.3 = 9 rotary dims: odd
  EXPECT_NE(err(bad).find("rotary dims 9"), std::string::npos) << err(bad);

  // One missing shared-expert tensor: one error that names it.
  const model::WeightStore complete = glm4_moe_weights(c);
  model::WeightStore missing("glm");
  for (const std::string& n : complete.names()) {
    if (n != "blk.2.ffn_up_shexp.weight") missing.add(n, complete.get(n));
  }
  const std::string e = error_of([&] { model::check_weights_match_config(missing, c); });
  EXPECT_NE(e.find("glm: missing required tensor 'blk.2.ffn_up_shexp.weight'"), std::string::npos) << e;
  // A missing score-correction bias, too.
  model::WeightStore no_bias("glm");
  for (const std::string& n : complete.names()) {
    if (n != "blk.1.exp_probs_b.bias") no_bias.add(n, complete.get(n));
  }
  EXPECT_NE(error_of([&] { model::check_weights_match_config(no_bias, c); })
                .find("glm: missing required tensor 'blk.1.exp_probs_b.bias'"),
            std::string::npos);
}

TEST(FormatHf, TokenizerAndGenerationConfigs) {
  HfTokenizerConfig tc = parse_hf_tokenizer_config(
      Json{{"bos_token", {{"content", "<s>"}}}, {"eos_token", "</s>"}, {"chat_template", "T"}, {"add_bos_token", true}},
      "tc.json");
  EXPECT_EQ(tc.bos_token, "<s>");
  EXPECT_EQ(tc.eos_token, "</s>");
  EXPECT_EQ(tc.chat_template, "T");
  EXPECT_EQ(tc.add_bos_token, true);
  tc = parse_hf_tokenizer_config(Json{{"chat_template", Json::array({{{"name", "tool_use"}, {"template", "X"}},
                                                                     {{"name", "default"}, {"template", "D"}}})},
                                      {"bos_token", nullptr}},
                                 "tc.json");
  EXPECT_EQ(tc.chat_template, "D");
  EXPECT_EQ(tc.bos_token, "");
  EXPECT_EQ(tc.add_bos_token, std::nullopt);
  EXPECT_NE(error_of([] {
              parse_hf_tokenizer_config(Json{{"chat_template", Json::array({{{"name", "x"}, {"template", "X"}}})}},
                                        "tc.json");
            }).find("no entry named 'default'"),
            std::string::npos);
  EXPECT_THROW(parse_hf_tokenizer_config(Json{{"chat_template", 3}}, "tc.json"), Error);

  GenerationDefaults g = parse_hf_generation_config(Json{{"eos_token_id", {1, 2, 1}},
                                                         {"temperature", 0.7},
                                                         {"top_k", 20},
                                                         {"top_p", 0.8},
                                                         {"repetition_penalty", 1.1}},
                                                    "gen.json");
  EXPECT_EQ(g.eos_token_ids, (std::vector<int32_t>{1, 2}));
  EXPECT_FLOAT_EQ(*g.temperature, 0.7f);
  EXPECT_EQ(*g.top_k, 20);
  EXPECT_FLOAT_EQ(*g.top_p, 0.8f);
  EXPECT_FLOAT_EQ(*g.repetition_penalty, 1.1f);
  EXPECT_FALSE(g.min_p.has_value());
  EXPECT_EQ(parse_hf_generation_config(Json{{"eos_token_id", 5}}, "gen.json").eos_token_ids, std::vector<int32_t>{5});
  EXPECT_THROW(parse_hf_generation_config(Json{{"eos_token_id", "x"}}, "gen.json"), Error);
  EXPECT_THROW(parse_hf_generation_config(Json{{"eos_token_id", -1}}, "gen.json"), Error);
}

void expect_same_config(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.arch, b.arch);
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.max_position, b.max_position);
  EXPECT_FLOAT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_FLOAT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.attention_bias, b.attention_bias);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
  EXPECT_EQ(a.num_experts, b.num_experts);
  EXPECT_EQ(a.num_experts_per_token, b.num_experts_per_token);
  EXPECT_EQ(a.moe_intermediate_size, b.moe_intermediate_size);
  EXPECT_EQ(a.norm_topk_prob, b.norm_topk_prob);
  EXPECT_EQ(a.rope_dim(), b.rope_dim());
  EXPECT_EQ(a.first_dense_layers, b.first_dense_layers);
  EXPECT_EQ(a.num_shared_experts, b.num_shared_experts);
  EXPECT_EQ(a.router_gating, b.router_gating);
  EXPECT_EQ(a.router_bias, b.router_bias);
  EXPECT_EQ(a.expert_groups, b.expert_groups);
  EXPECT_EQ(a.expert_groups_used, b.expert_groups_used);
  EXPECT_EQ(a.routed_scaling, b.routed_scaling);
  if (!a.is_moe()) {
    EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  }
}

// The same tiny model as a HF directory and as GGUF: same config, same canonical names, same bytes.
void check_hf_matches_gguf(const TinySpec& spec, int num_shards, const std::string& name) {
  const auto dir = test::fresh_dir(name);
  test::write_hf_dir(spec, dir, num_shards);
  const ModelFiles hf = open_model(dir.string());
  const TokenizerFiles hf_tokenizer = open_hf_tokenizer(dir.string());
  const auto gguf_bytes = test::tiny_gguf_writer(spec).build();
  const ModelFiles gg = model_from_gguf(GgufFile::parse(gguf_bytes.data(), gguf_bytes.size(), "x.gguf"), "x.gguf");

  EXPECT_EQ(hf.format, "safetensors");
  EXPECT_EQ(hf.name, name);
  expect_same_config(hf.config, gg.config);
  const std::vector<std::string> names = gg.weights.names();
  EXPECT_EQ(hf.weights.names(), names);
  for (const std::string& n : names) {
    const Tensor& a = hf.weights.get(n);
    const Tensor& b = gg.weights.get(n);
    EXPECT_EQ(a.shape, b.shape) << n;
    EXPECT_EQ(a.dtype, b.dtype) << n;
    EXPECT_EQ(std::memcmp(a.data, b.data, a.num_bytes()), 0) << n;
  }
  EXPECT_EQ(hf_tokenizer.vocab.tokens.size(), size_t(spec.vocab));
  EXPECT_EQ(hf_tokenizer.vocab.bos_token_id, 7);
  EXPECT_EQ(hf_tokenizer.vocab.eos_token_id, 8);
  EXPECT_EQ(hf_tokenizer.bos_token, "<|bos|>");
  EXPECT_EQ(hf_tokenizer.eos_token, "<|eos|>");
  EXPECT_EQ(hf_tokenizer.chat_template, "{% for m in messages %}{{ m.content }}{% endfor %}");
  EXPECT_EQ(hf.generation.eos_token_ids, (std::vector<int32_t>{8, 9}));
  EXPECT_FLOAT_EQ(hf.generation.temperature.value_or(-1), 0.6f);
  EXPECT_EQ(hf.generation.top_k.value_or(-1), 20);
}

TEST(FormatHf, DenseDirectoryMatchesGguf) {
  TinySpec spec;
  check_hf_matches_gguf(spec, 1, "tiny-qwen3");
  TinySpec qwen2;
  qwen2.arch = "qwen2";
  qwen2.tied = true;
  check_hf_matches_gguf(qwen2, 1, "tiny-qwen2");
}

TEST(FormatHf, ShardedMoeDirectoryMatchesGguf) {
  TinySpec spec;
  spec.arch = "qwen3moe";
  spec.experts = 4;
  spec.experts_used = 2;
  spec.moe_ffn = 32;
  check_hf_matches_gguf(spec, 2, "tiny-qwen3moe");
}

TEST(FormatHf, Bf16Directory) {
  const auto dir = test::fresh_dir("bf16");
  TinySpec spec;
  test::write_hf_dir(spec, dir, 1, "BF16");
  const ModelFiles m = open_model(dir.string() + "/");
  EXPECT_EQ(m.name, "bf16");
  for (const test::SpecTensor& t : test::spec_tensors(spec)) {
    const Tensor& view = m.weights.get(t.gguf_name);
    EXPECT_EQ(view.dtype, DType::BF16);
    EXPECT_EQ(first_value(view), t.start) << t.gguf_name;
  }
}

TEST(FormatHf, DirectoryErrors) {
  TinySpec spec;
  auto err = [](const std::filesystem::path& dir) { return error_of([&] { open_model(dir.string()); }); };
  {
    const auto dir = test::fresh_dir("err_empty");
    EXPECT_NE(err(dir).find("no config.json"), std::string::npos);
  }
  {
    const auto dir = test::fresh_dir("err_no_tokenizer");
    test::write_hf_dir(spec, dir);
    std::filesystem::remove(dir / "tokenizer.json");
    EXPECT_NE(error_of([&] { open_hf_tokenizer(dir.string()); }).find("missing tokenizer.json"), std::string::npos);
  }
  {
    const auto dir = test::fresh_dir("err_no_weights");
    test::write_hf_dir(spec, dir);
    std::filesystem::remove(dir / "model.safetensors");
    EXPECT_NE(err(dir).find("no model.safetensors"), std::string::npos);
  }
  {  // a shard listed in the index is missing
    const auto dir = test::fresh_dir("err_missing_shard");
    test::write_hf_dir(spec, dir, 2);
    std::filesystem::remove(dir / "model-00002-of-00002.safetensors");
    EXPECT_NE(err(dir).find("model-00002-of-00002.safetensors: cannot open"), std::string::npos) << err(dir);
  }
  {  // the index names a tensor no shard has
    const auto dir = test::fresh_dir("err_index");
    test::write_hf_dir(spec, dir, 2);
    Json index = format::json_util::parse_file((dir / "model.safetensors.index.json").string());
    index["weight_map"]["model.layers.9.mlp.up_proj.weight"] = "model-00001-of-00002.safetensors";
    test::write_text(dir / "model.safetensors.index.json", index.dump());
    EXPECT_NE(err(dir).find("'model.layers.9.mlp.up_proj.weight' is listed"), std::string::npos);
    index["weight_map"]["model.layers.9.mlp.up_proj.weight"] = "../../etc/passwd";
    test::write_text(dir / "model.safetensors.index.json", index.dump());
    EXPECT_NE(err(dir).find("is not a file name in the model directory"), std::string::npos);
  }
  {  // config contradicts the weights
    const auto dir = test::fresh_dir("err_shape");
    test::write_hf_dir(spec, dir);
    Json config = test::tiny_hf_config(spec);
    config["intermediate_size"] = 96;
    test::write_text(dir / "config.json", config.dump());
    const std::string e = err(dir);
    EXPECT_NE(e.find("'blk.0.ffn_gate.weight' has shape [128, 64], but the config implies [96, 64]"), std::string::npos)
        << e;
  }
  {  // a required tensor is missing (untied model without lm_head)
    const auto dir = test::fresh_dir("err_missing_tensor");
    TinySpec tied = spec;
    tied.tied = true;
    test::write_hf_dir(tied, dir);
    Json config = test::tiny_hf_config(tied);
    config["tie_word_embeddings"] = false;
    test::write_text(dir / "config.json", config.dump());
    EXPECT_NE(err(dir).find("missing required tensor 'output.weight'"), std::string::npos);
  }
  {  // truncated weights file
    const auto dir = test::fresh_dir("err_truncated");
    test::write_hf_dir(spec, dir);
    std::filesystem::resize_file(dir / "model.safetensors", std::filesystem::file_size(dir / "model.safetensors") - 1);
    EXPECT_NE(err(dir).find("truncated safetensors file"), std::string::npos);
  }
  {  // invalid config.json
    const auto dir = test::fresh_dir("err_json");
    test::write_hf_dir(spec, dir);
    test::write_text(dir / "config.json", "{\"hidden_size\": ");
    EXPECT_NE(err(dir).find("config.json: invalid JSON"), std::string::npos);
  }
  {  // a lone safetensors file
    const auto dir = test::fresh_dir("err_lone");
    test::write_hf_dir(spec, dir);
    EXPECT_NE(err(dir / "model.safetensors").find("pass the model directory"), std::string::npos);
  }
}

}  // namespace
}  // namespace llmesh
