// RoPE scaling for long contexts: what the config readers make of HF rope_scaling and GGUF
// rope.scaling.*, the frequencies and attention factor each type gives, the context each
// reaches, and --rope-scaling overrides. The end-to-end check (logits of a YaRN model against
// the numpy reference, GGUF == safetensors) is the tiny-qwen2 golden model.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "format/gguf.h"
#include "format_writers.h"
#include "model/blocks/rope.h"
#include "model/gguf_config.h"
#include "model/hf_config.h"
#include "model/model_files.h"
#include "model/weight_store.h"

namespace llmesh {
namespace {

using model::ModelConfig;
using model::RopeScaling;
using nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

ModelConfig hf_config_with(const json& rope_scaling, int64_t max_position = 40960) {
  test::TinySpec spec;
  spec.arch = "qwen3";
  json c = test::tiny_hf_config(spec);
  c["max_position_embeddings"] = max_position;
  c["rope_scaling"] = rope_scaling;
  return model::parse_hf_config(c, "config.json");
}

std::vector<double> base_freq(const ModelConfig& c) {
  std::vector<double> f(size_t(c.head_dim / 2));
  for (size_t i = 0; i < f.size(); ++i) f[i] = std::pow(double(c.rope_theta), -2.0 * double(i) / double(c.head_dim));
  return f;
}

TEST(RopeScaling, YarnAsQwenDocumentsIt) {
  // Qwen3's model card: rope_scaling {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}.
  const ModelConfig c =
      hf_config_with({{"rope_type", "yarn"}, {"factor", 4.0}, {"original_max_position_embeddings", 32768}});
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_EQ(c.rope_scaling.original_max_position, 32768);
  EXPECT_FLOAT_EQ(c.rope_scaling.beta_fast, 32.0f);
  EXPECT_FLOAT_EQ(c.rope_scaling.beta_slow, 1.0f);
  EXPECT_EQ(c.max_position, 40960);
  EXPECT_EQ(c.max_context(), 131072);  // original x factor
  EXPECT_NEAR(model::rope_attention_factor(c), 0.1 * std::log(4.0) + 1, 1e-6);

  // The highest-frequency pairs turn many times over 32K tokens: kept. The lowest: divided by 4.
  const std::vector<float> f = model::rope_inv_freq(c, model::WeightStore());
  const std::vector<double> base = base_freq(c);
  EXPECT_NEAR(f.front(), base.front(), 1e-7 * base.front());
  EXPECT_NEAR(f.back(), base.back() / 4, 1e-6 * base.back());
  for (size_t i = 0; i < f.size(); ++i) {
    EXPECT_LE(f[i], base[i] * (1 + 1e-6)) << i;
    EXPECT_GE(f[i], base[i] / 4 * (1 - 1e-6)) << i;
  }
}

TEST(RopeScaling, YarnAttentionFactorForms) {
  // No original context: the config's max_position is the original one.
  ModelConfig c = hf_config_with({{"rope_type", "yarn"}, {"factor", 2.0}}, 8192);
  EXPECT_EQ(c.rope_scaling.original_max_position, 8192);
  EXPECT_EQ(c.max_context(), 16384);
  // An explicit attention_factor wins.
  c = hf_config_with({{"rope_type", "yarn"}, {"factor", 4.0}, {"attention_factor", 1.5}});
  EXPECT_FLOAT_EQ(model::rope_attention_factor(c), 1.5f);
  // DeepSeek's mscale / mscale_all_dim ratio.
  c = hf_config_with({{"rope_type", "yarn"}, {"factor", 40.0}, {"mscale", 1.0}, {"mscale_all_dim", 0.5},
                      {"original_max_position_embeddings", 4096}},
                     163840);
  EXPECT_NEAR(model::rope_attention_factor(c), (0.1 * std::log(40.0) + 1) / (0.05 * std::log(40.0) + 1), 1e-6);
  EXPECT_EQ(c.max_context(), 163840);
}

TEST(RopeScaling, LinearDynamicAndLlama3) {
  ModelConfig c = hf_config_with({{"rope_type", "linear"}, {"factor", 2.0}}, 4096);
  EXPECT_EQ(c.max_context(), 8192);
  std::vector<float> f = model::rope_inv_freq(c, model::WeightStore());
  std::vector<double> base = base_freq(c);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], base[i] / 2, 1e-6 * base[i]) << i;
  EXPECT_FLOAT_EQ(model::rope_attention_factor(c), 1.0f);

  // Dynamic NTK at the full scaled context: theta' = theta * (f^2 - f + 1)^(d / (d - 2)).
  c = hf_config_with({{"type", "dynamic"}, {"factor", 2.0}}, 4096);
  EXPECT_EQ(c.max_context(), 8192);
  f = model::rope_inv_freq(c, model::WeightStore());
  const double d = double(c.head_dim);
  const double theta = double(c.rope_theta) * std::pow(3.0, d / (d - 2));
  for (size_t i = 0; i < f.size(); ++i) EXPECT_NEAR(f[i], std::pow(theta, -2.0 * double(i) / d), 1e-6) << i;

  // Llama 3.1's max_position is already the long context.
  c = hf_config_with({{"rope_type", "llama3"}, {"factor", 8.0}, {"original_max_position_embeddings", 8192}}, 131072);
  EXPECT_EQ(c.max_context(), 131072);
}

TEST(RopeScaling, GgufKeys) {
  test::TinySpec spec;
  spec.arch = "qwen3";
  test::GgufWriter w = test::tiny_gguf_writer(spec);
  w.kv_string("qwen3.rope.scaling.type", "yarn");
  w.kv_f32("qwen3.rope.scaling.factor", 4.0f);
  w.kv_u32("qwen3.rope.scaling.original_context_length", 1024);
  w.kv_f32("qwen3.rope.scaling.yarn_beta_fast", 16.0f);
  const auto bytes = w.build();
  const auto gguf = format::GgufFile::parse(bytes.data(), bytes.size(), "yarn.gguf");
  const ModelConfig c = model::read_gguf_config(gguf);
  EXPECT_EQ(c.rope_scaling.type, "yarn");
  EXPECT_FLOAT_EQ(c.rope_scaling.factor, 4.0f);
  EXPECT_EQ(c.rope_scaling.original_max_position, 1024);
  EXPECT_FLOAT_EQ(c.rope_scaling.beta_fast, 16.0f);
  EXPECT_FLOAT_EQ(c.rope_scaling.ext_factor, 1.0f);  // not given: llama.cpp's default for yarn
  EXPECT_EQ(c.max_context(), 4096);                  // max(context_length 4096, 1024 x 4)

  test::GgufWriter bad = test::tiny_gguf_writer(spec);
  bad.kv_string("qwen3.rope.scaling.type", "longrope");
  const auto bad_bytes = bad.build();
  const auto bad_gguf = format::GgufFile::parse(bad_bytes.data(), bad_bytes.size(), "bad.gguf");
  EXPECT_NE(error_of([&] { model::read_gguf_config(bad_gguf); }).find("unsupported rope scaling type 'longrope'"),
            std::string::npos);
}

TEST(RopeScaling, CommandLineOverride) {
  const auto dir = test::fresh_dir("rope_override");
  test::TinySpec spec;
  spec.arch = "qwen3";
  const auto path = (dir / "tiny.gguf").string();
  test::write_file(path, test::tiny_gguf_writer(spec).build());

  model::ConfigOverrides o;
  o.rope_scaling = RopeScaling{};
  o.rope_scaling->type = "yarn";
  o.rope_scaling->factor = 8.0f;
  const model::ModelFiles files = model::open_model(path, o);
  EXPECT_EQ(files.config.rope_scaling.type, "yarn");
  EXPECT_EQ(files.config.rope_scaling.original_max_position, 4096);  // the file's context
  EXPECT_EQ(files.config.max_context(), 32768);
  EXPECT_EQ(model::open_model(path).config.max_context(), 4096);

  o.rope_scaling->factor = 0.5f;
  EXPECT_NE(error_of([&] { model::open_model(path, o); }).find("with --rope-scaling: rope scaling factor 0.5"),
            std::string::npos);
}

}  // namespace
}  // namespace llmesh
