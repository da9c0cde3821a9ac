// DeepSeek V2 / V3 and Kimi K2 configs: config.json and GGUF (llama.cpp's MLA layout and
// the older one) give the same multi-head latent attention config, the KV pool caches one
// latent row per position, and broken configs or files fail with one clear error.
#include <gtest/gtest.h>

#include "core/error.h"
#include "format/gguf.h"
#include "format_writers.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/model.h"
#include "model/weight_store.h"

namespace llmesh {
namespace {

using model::ModelConfig;
using Json = nlohmann::json;

using test::error_of;

// DeepSeek V3's config.json at tiny size (the keys and null q_lora_rank as the real files write them).
Json deepseek_v3_config() {
  return Json::parse(R"({
    "architectures": ["DeepseekV3ForCausalLM"], "model_type": "deepseek_v3",
    "vocab_size": 512, "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
    "num_key_value_heads": 4, "intermediate_size": 128, "max_position_embeddings": 16384,
    "rms_norm_eps": 1e-6, "rope_theta": 10000, "tie_word_embeddings": false, "attention_bias": false,
    "q_lora_rank": 32, "kv_lora_rank": 64, "qk_nope_head_dim": 32, "qk_rope_head_dim": 32, "v_head_dim": 32,
    "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 64, "n_shared_experts": 1,
    "first_k_dense_replace": 1, "moe_layer_freq": 1, "n_group": 2, "topk_group": 1, "topk_method": "noaux_tc",
    "scoring_func": "sigmoid", "routed_scaling_factor": 2.5, "norm_topk_prob": true,
    "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "beta_fast": 32,
                     "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}
  })");
}

void expect_tiny_mla(const ModelConfig& c) {
  EXPECT_EQ(c.arch, "deepseek2");
  EXPECT_TRUE(c.is_mla());
  EXPECT_EQ(c.q_lora_rank, 32);
  EXPECT_EQ(c.kv_lora_rank, 64);
  EXPECT_EQ(c.qk_nope_dim, 32);
  EXPECT_EQ(c.rope_dim(), 32);
  EXPECT_EQ(c.v_head_dim, 32);
  EXPECT_EQ(c.head_dim, 64);     // nope + rope: the scores' scale
  EXPECT_EQ(c.num_kv_heads, 1);  // one latent row per position
  EXPECT_EQ(c.kv_row_dim(), 96);
  EXPECT_EQ(c.rope_style, model::RopeStyle::Interleaved);
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_FLOAT_EQ(c.rope_scaling.mscale_all_dim, 1.0f);
  EXPECT_EQ(c.router_gating, model::RouterGating::Sigmoid);
  EXPECT_EQ(c.expert_groups, 2);
  EXPECT_EQ(c.first_dense_layers, 1);
  EXPECT_EQ(c.num_shared_experts, 1);
  EXPECT_FLOAT_EQ(c.routed_scaling, 2.5f);
  const kv::KvCacheShape kv = model::kv_cache_shape(c, 16, 4, DType::F16);
  EXPECT_EQ(kv.head_dim, 96);
  EXPECT_EQ(kv.value_dim(), 64);
  EXPECT_FALSE(kv.has_v_region());
  EXPECT_EQ(kv.bytes_per_token(), 3 * 96 * 2);  // layers x (latent + rotary key) x f16
}

TEST(DeepseekConfig, HfV3) {
  const ModelConfig c = model::parse_hf_config(deepseek_v3_config(), "config.json");
  expect_tiny_mla(c);
  EXPECT_TRUE(c.router_bias);
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.2.self_attn.kv_a_proj_with_mqa.weight"),
            std::string("blk.2.attn_kv_a_mqa.weight"));
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.0.self_attn.kv_b_proj.weight"),
            std::string("blk.0.attn_kv_b.weight"));
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.0.self_attn.q_a_layernorm.weight"),
            std::string("blk.0.attn_q_a_norm.weight"));
  // Kimi K2 names its model_type; the class is DeepSeek V3's.
  Json kimi = deepseek_v3_config();
  kimi.erase("architectures");
  kimi["model_type"] = "kimi_k2";
  EXPECT_EQ(model::parse_hf_config(kimi, "config.json").arch, "deepseek2");
}

TEST(DeepseekConfig, HfV2LiteHasNoQueryBottleneckAndASoftmaxRouter) {
  Json j = deepseek_v3_config();
  j["architectures"] = {"DeepseekV2ForCausalLM"};
  j["model_type"] = "deepseek_v2";
  j["q_lora_rank"] = nullptr;
  j["scoring_func"] = "softmax";
  j["topk_method"] = "greedy";
  j["n_group"] = 1;
  j["topk_group"] = 1;
  j["routed_scaling_factor"] = 1.0;
  j["norm_topk_prob"] = false;
  const ModelConfig c = model::parse_hf_config(j, "config.json");
  EXPECT_EQ(c.q_lora_rank, 0);
  EXPECT_EQ(c.router_gating, model::RouterGating::Softmax);
  EXPECT_FALSE(c.router_bias);
  EXPECT_EQ(c.expert_groups, 1);
}

TEST(DeepseekConfig, HfErrorsNameTheField) {
  auto err = [](const Json& j) { return error_of([&] { model::parse_hf_config(j, "cfg/config.json"); }); };
  Json bad = deepseek_v3_config();
  bad["topk_method"] = "group_limited_greedy";  // DeepSeek V2's
  EXPECT_NE(err(bad).find("topk_method 'group_limited_greedy'"), std::string::npos) << err(bad);
  bad = deepseek_v3_config();
  bad["qk_nope_head_dim"] = 128;  // wider than the latent
  EXPECT_NE(err(bad).find("qk_nope_head_dim 128 exceeds kv_lora_rank 64"), std::string::npos) << err(bad);
  bad = deepseek_v3_config();
  bad.erase("kv_lora_rank");
  EXPECT_NE(err(bad).find("kv_lora_rank"), std::string::npos) << err(bad);
  bad = deepseek_v3_config();
  bad["rope_scaling"]["type"] = "longrope";
  EXPECT_NE(err(bad).find("unsupported rope scaling type 'longrope'"), std::string::npos) << err(bad);
  bad = deepseek_v3_config();
  bad["rope_scaling"]["mscale"] = 0.5;  // a cos/sin factor of its own on the rotary dims
  EXPECT_NE(err(bad).find("partial rotary"), std::string::npos) << err(bad);
}

// GGUF metadata for the same tiny model, in llama.cpp's MLA layout or the older one.
test::GgufWriter deepseek_gguf(bool mla_layout) {
  test::GgufWriter w;
  const std::string a = "deepseek2.";
  w.kv_string("general.architecture", "deepseek2");
  w.kv_u32(a + "context_length", 16384);
  w.kv_u32(a + "embedding_length", 64);
  w.kv_u32(a + "block_count", 3);
  w.kv_u32(a + "feed_forward_length", 128);
  w.kv_u32(a + "attention.head_count", 4);
  w.kv_u32(a + "attention.head_count_kv", mla_layout ? 1 : 4);
  w.kv_u32(a + "attention.key_length", mla_layout ? 96 : 64);
  w.kv_u32(a + "attention.value_length", mla_layout ? 64 : 32);
  if (mla_layout) {
    w.kv_u32(a + "attention.key_length_mla", 64);
    w.kv_u32(a + "attention.value_length_mla", 32);
  }
  w.kv_u32(a + "attention.q_lora_rank", 32);
  w.kv_u32(a + "attention.kv_lora_rank", 64);
  w.kv_f32(a + "attention.layer_norm_rms_epsilon", 1e-6f);
  w.kv_f32(a + "rope.freq_base", 10000.0f);
  w.kv_u32(a + "rope.dimension_count", 32);
  w.kv_string(a + "rope.scaling.type", "yarn");
  w.kv_f32(a + "rope.scaling.factor", 4.0f);
  w.kv_u32(a + "rope.scaling.original_context_length", 4096);
  w.kv_f32(a + "rope.scaling.yarn_log_multiplier", 0.1f);
  w.kv_u32(a + "expert_count", 8);
  w.kv_u32(a + "expert_used_count", 2);
  w.kv_u32(a + "expert_feed_forward_length", 64);
  w.kv_u32(a + "expert_shared_count", 1);
  w.kv_u32(a + "leading_dense_block_count", 1);
  w.kv_f32(a + "expert_weights_scale", 2.5f);
  w.kv_u32(a + "expert_gating_func", 2);
  w.kv_u32(a + "expert_group_count", 2);
  w.kv_u32(a + "expert_group_used_count", 1);
  w.kv_u32(a + "vocab_size", 512);
  return w;
}

TEST(DeepseekConfig, GgufBothLayoutsGiveTheHfConfig) {
  for (bool mla_layout : {true, false}) {
    SCOPED_TRACE(mla_layout ? "attn_k_b / attn_v_b layout" : "attn_kv_b layout");
    const std::vector<uint8_t> bytes = deepseek_gguf(mla_layout).build();
    const format::GgufFile gguf = format::GgufFile::parse(bytes.data(), bytes.size(), "ds.gguf");
    const ModelConfig c = model::read_gguf_config(gguf);
    expect_tiny_mla(c);
    EXPECT_FLOAT_EQ(c.rope_scaling.mscale, 1.0f);  // llama.cpp's deepseek2 leaves cos/sin unscaled
  }
}

// The tensors MLA needs, shape-only: either split layout; a missing one is named.
TEST(DeepseekConfig, WeightChecksNameTheMissingTensor) {
  const ModelConfig c = model::parse_hf_config(deepseek_v3_config(), "config.json");
  for (bool split : {true, false}) {
    model::WeightStore w("ds");
    auto add = [&](const std::string& name, std::vector<int64_t> shape) {
      Tensor t;
      t.shape = std::move(shape);
      w.add(name, t);
    };
    add("token_embd.weight", {512, 64});
    add("output_norm.weight", {64});
    add("output.weight", {512, 64});
    for (int l = 0; l < 3; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      add(b + "attn_norm.weight", {64});
      add(b + "attn_q_a.weight", {32, 64});
      add(b + "attn_q_a_norm.weight", {32});
      add(b + "attn_q_b.weight", {4 * 64, 32});
      add(b + "attn_kv_a_mqa.weight", {96, 64});
      if (!(l == 2 && split)) add(b + "attn_kv_a_norm.weight", {64});
      if (split) {
        add(b + "attn_k_b.weight", {4, 64, 32});
        add(b + "attn_v_b.weight", {4, 32, 64});
      } else {
        add(b + "attn_kv_b.weight", {l == 1 ? 4 * 60 : 4 * 64, 64});
      }
      add(b + "attn_output.weight", {64, 4 * 32});
      add(b + "ffn_norm.weight", {64});
      if (l == 0) {
        add(b + "ffn_gate.weight", {128, 64});
        add(b + "ffn_up.weight", {128, 64});
        add(b + "ffn_down.weight", {64, 128});
        continue;
      }
      add(b + "ffn_gate_inp.weight", {8, 64});
      add(b + "exp_probs_b.bias", {8});
      for (int e = 0; e < 8; ++e) {
        const std::string x = "." + std::to_string(e) + ".weight";
        add(b + "ffn_gate_exps" + x, {64, 64});
        add(b + "ffn_up_exps" + x, {64, 64});
        add(b + "ffn_down_exps" + x, {64, 64});
      }
      add(b + "ffn_gate_shexp.weight", {64, 64});
      add(b + "ffn_up_shexp.weight", {64, 64});
      add(b + "ffn_down_shexp.weight", {64, 64});
    }
    const std::string e = error_of([&] { model::check_weights_match_config(w, c); });
    if (split) {
      EXPECT_NE(e.find("missing required tensor 'blk.2.attn_kv_a_norm.weight'"), std::string::npos) << e;
    } else {
      EXPECT_NE(e.find("'blk.1.attn_kv_b.weight' has shape [240, 64], but the config implies [256, 64]"),
                std::string::npos)
          << e;
    }
  }
}

}  // namespace
}  // namespace llmesh
