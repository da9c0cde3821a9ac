// gpt-oss: its config.json (windowed even layers, sinks, the SwiGLU limit, YaRN without
// truncation), its fused HF expert tensors split into llmesh's per-expert matrices, and the
// MXFP4 release refused by name.
#include <gtest/gtest.h>

#include "core/error.h"
#include "format_writers.h"
#include "model/hf_config.h"
#include "model/hf_fused_experts.h"
#include "model/weight_store.h"

namespace llmesh {
namespace {

using model::ModelConfig;
using Json = nlohmann::json;
using test::error_of;

// gpt-oss-20b's config.json keys, at tiny size.
Json gpt_oss_config() {
  return Json::parse(R"({
    "architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "vocab_size": 512, "hidden_size": 64,
    "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
    "intermediate_size": 32, "num_local_experts": 8, "num_experts_per_tok": 4, "experts_per_token": 4,
    "max_position_embeddings": 131072, "initial_context_length": 4096, "rms_norm_eps": 1e-5,
    "rope_theta": 150000, "tie_word_embeddings": false, "attention_bias": true, "sliding_window": 128,
    "layer_types": ["sliding_attention", "full_attention", "sliding_attention", "full_attention"],
    "swiglu_limit": 7.0, "hidden_act": "silu",
    "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0, "beta_slow": 1.0,
                     "original_max_position_embeddings": 4096, "truncate": false}
  })");
}

TEST(GptOssConfig, HfConfig) {
  const ModelConfig c = model::parse_hf_config(gpt_oss_config(), "config.json");
  EXPECT_EQ(c.arch, "gpt-oss");
  EXPECT_TRUE(c.attention_sinks);
  EXPECT_TRUE(c.attention_bias);
  EXPECT_FLOAT_EQ(c.swiglu_limit, 7.0f);
  EXPECT_EQ(c.num_experts, 8);
  EXPECT_EQ(c.num_experts_per_token, 4);
  EXPECT_EQ(c.moe_intermediate_size, 32);
  EXPECT_TRUE(c.norm_topk_prob);
  EXPECT_EQ(c.router_gating, model::RouterGating::Softmax);
  EXPECT_EQ(c.rope_style, model::RopeStyle::Neox);
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_FALSE(c.rope_scaling.truncate);
  EXPECT_EQ(c.max_context(), 131072);
  for (int64_t l = 0; l < 4; ++l) EXPECT_EQ(c.layer_window(l), l % 2 == 0 ? 128 : 0) << l;
  // Without layer_types: GptOssConfig's default, the same alternation.
  Json config = gpt_oss_config();
  config.erase("layer_types");
  const ModelConfig d = model::parse_hf_config(config, "config.json");
  for (int64_t l = 0; l < 4; ++l) EXPECT_EQ(d.layer_window(l), c.layer_window(l)) << l;
  config["swiglu_limit"] = 0;
  EXPECT_NE(error_of([&] { model::parse_hf_config(config, "config.json"); }).find("swiglu_limit"), std::string::npos);
}

// HF's names for the attention sinks and the router.
TEST(GptOssConfig, TensorNames) {
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.3.self_attn.sinks"), "blk.3.attn_sinks.weight");
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.3.mlp.router.weight"), "blk.3.ffn_gate_inp.weight");
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.3.mlp.router.bias"), "blk.3.ffn_gate_inp.bias");
  EXPECT_EQ(model::hf_tensor_to_canonical("model.layers.3.self_attn.o_proj.bias"), "blk.3.attn_output.bias");
}

// A fused tensor of `shape` whose element at flat index i is i (exact in f32 and, below 256, in bf16).
struct FusedTensor {
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  Tensor tensor;
  FusedTensor(const std::string& name, std::vector<int64_t> shape, DType dtype) {
    tensor.name = name;
    tensor.dtype = dtype;
    tensor.shape = std::move(shape);
    for (int64_t i = 0; i < tensor.num_elements(); ++i) {
      f32.push_back(float(i));
      bf16.push_back(f32_to_bf16(float(i)));
    }
    tensor.data = dtype == DType::F32 ? static_cast<const void*>(f32.data()) : bf16.data();
  }
};

float value_at(const Tensor& t, int64_t i) {
  return t.dtype == DType::F32 ? t.f32()[i] : bf16_to_f32(static_cast<const uint16_t*>(t.data)[i]);
}

// gate_up_proj [experts, in, 2 out] interleaved -> gate / up {out, in} per expert; down_proj
// [experts, in, out] -> {out, in}; the biases likewise, in f32 and bf16.
TEST(GptOssConfig, FusedExpertsSplitPerExpert) {
  const int64_t experts = 2, hidden = 3, ffn = 4;
  for (DType dtype : {DType::F32, DType::BF16}) {
    SCOPED_TRACE(dtype_name(dtype));
    model::WeightStore w("gpt-oss");
    const FusedTensor gate_up("model.layers.1.mlp.experts.gate_up_proj", {experts, hidden, 2 * ffn}, dtype);
    const FusedTensor gate_up_bias("model.layers.1.mlp.experts.gate_up_proj_bias", {experts, 2 * ffn}, dtype);
    const FusedTensor down("model.layers.1.mlp.experts.down_proj", {experts, ffn, hidden}, dtype);
    const FusedTensor down_bias("model.layers.1.mlp.experts.down_proj_bias", {experts, hidden}, dtype);
    for (const FusedTensor* t : {&gate_up, &gate_up_bias, &down, &down_bias})
      EXPECT_TRUE(model::add_hf_fused_experts(t->tensor, 1, w));
    for (int64_t e = 0; e < experts; ++e) {
      const std::string id = "blk.1.ffn_{}_exps." + std::to_string(e) + ".";
      auto get = [&](const char* part, const char* kind) {
        std::string name = id;
        name.replace(name.find("{}"), 2, part);
        return w.get(name + kind);
      };
      const Tensor g = get("gate", "weight"), u = get("up", "weight"), d = get("down", "weight");
      ASSERT_EQ(g.shape, (std::vector<int64_t>{ffn, hidden}));
      ASSERT_EQ(d.shape, (std::vector<int64_t>{hidden, ffn}));
      for (int64_t o = 0; o < ffn; ++o)
        for (int64_t i = 0; i < hidden; ++i) {
          const int64_t fused = (e * hidden + i) * 2 * ffn + 2 * o;  // x @ W: row i, column 2o (+1 for up)
          EXPECT_EQ(value_at(g, o * hidden + i), float(fused));
          EXPECT_EQ(value_at(u, o * hidden + i), float(fused + 1));
        }
      for (int64_t o = 0; o < hidden; ++o)
        for (int64_t i = 0; i < ffn; ++i) EXPECT_EQ(value_at(d, o * ffn + i), float((e * ffn + i) * hidden + o));
      const Tensor gb = get("gate", "bias"), ub = get("up", "bias"), db = get("down", "bias");
      ASSERT_EQ(gb.shape, (std::vector<int64_t>{ffn}));
      for (int64_t o = 0; o < ffn; ++o) {
        EXPECT_EQ(value_at(gb, o), float(e * 2 * ffn + 2 * o));
        EXPECT_EQ(value_at(ub, o), float(e * 2 * ffn + 2 * o + 1));
      }
      for (int64_t o = 0; o < hidden; ++o) EXPECT_EQ(value_at(db, o), float(e * hidden + o));
    }
    // Other tensors are left to the name mapping.
    const FusedTensor other("model.layers.1.mlp.router.weight", {experts, hidden}, dtype);
    EXPECT_FALSE(model::add_hf_fused_experts(other.tensor, 1, w));
  }
}

TEST(GptOssConfig, Mxfp4AndMisshapenExpertsAreRefused) {
  model::WeightStore w("gpt-oss-20b");
  FusedTensor blocks("model.layers.0.mlp.experts.gate_up_proj_blocks", {2, 8, 1, 16}, DType::F32);
  EXPECT_NE(error_of([&] { model::add_hf_fused_experts(blocks.tensor, 0, w); }).find("MXFP4"), std::string::npos);
  FusedTensor odd("model.layers.0.mlp.experts.gate_up_proj", {2, 3, 5}, DType::F32);
  EXPECT_NE(error_of([&] { model::add_hf_fused_experts(odd.tensor, 0, w); }).find("gate_up_proj"), std::string::npos);
}

}  // namespace
}  // namespace llmesh
