// The weights' content identity (the prefix cache's namespace): the same
// bytes under another path keep it; a changed tensor byte or shape changes it.
#include "model/model_identity.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "format_writers.h"
#include "model/model_files.h"

namespace llmesh {

using model::model_identity;
using model::open_model;

namespace {

std::string identity_of(const std::filesystem::path& path) {
  const model::ModelFiles files = open_model(path.string());
  return model_identity(files.weights, files.config);
}

TEST(ModelIdentity, FollowsContentNotPath) {
  const auto dir = test::fresh_dir("model_identity");
  const auto bytes = test::tiny_gguf_writer(test::TinySpec{}).build();
  test::write_file(dir / "a.gguf", bytes);
  test::write_file(dir / "b.gguf", bytes);
  const std::string a = identity_of(dir / "a.gguf");
  EXPECT_EQ(a.size(), 16u);
  EXPECT_EQ(a, identity_of(dir / "b.gguf"));

  auto changed = bytes;
  changed[changed.size() - 3] ^= 0x01;  // a weight byte of the last tensor
  test::write_file(dir / "a.gguf", changed);  // replaced in place: same path, new content
  EXPECT_NE(a, identity_of(dir / "a.gguf"));

  test::TinySpec wider;
  wider.ffn = 192;
  test::write_file(dir / "c.gguf", test::tiny_gguf_writer(wider).build());
  EXPECT_NE(a, identity_of(dir / "c.gguf"));
}

// A sliding window changes the K/V cached past it: the same weights with and without one (or
// with it on other layers) have other identities.
TEST(ModelIdentity, IncludesTheSlidingWindow) {
  const auto dir = test::fresh_dir("model_identity_window");
  test::write_file(dir / "a.gguf", test::tiny_gguf_writer(test::TinySpec{}).build());
  const model::ModelFiles files = open_model((dir / "a.gguf").string());
  model::ModelConfig every_layer = files.config;
  every_layer.sliding_window = 16;
  model::ModelConfig layer_0 = every_layer;
  layer_0.window_layers = {true, false};
  const std::string full = model_identity(files.weights, files.config);
  EXPECT_NE(full, model_identity(files.weights, every_layer));
  EXPECT_NE(full, model_identity(files.weights, layer_0));
  EXPECT_NE(model_identity(files.weights, every_layer), model_identity(files.weights, layer_0));
}

}  // namespace
}  // namespace llmesh
