// The layout of a multi-rank job: which rank holds which layers, heads and experts.
#include "dist/parallel_layout.h"
#include "dist/parallel_plan.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace llmesh::dist {
namespace {

model::ModelConfig moe(int64_t layers = 28, int64_t experts = 384) {
  model::ModelConfig c;
  c.num_layers = layers;
  c.num_heads = 16;
  c.num_kv_heads = 4;
  c.num_experts = experts;
  c.num_experts_per_token = 8;
  return c;
}

std::vector<double> gib(std::initializer_list<double> v) {
  std::vector<double> out;
  for (double x : v) out.push_back(x * double(1ull << 30));
  return out;
}

TEST(SplitByWeight, EqualWeightsSplitEvenlyWithTheRemainderFirst) {
  EXPECT_EQ(split_by_weight(28, {1, 1, 1}), (std::vector<int64_t>{10, 9, 9}));
  EXPECT_EQ(split_by_weight(8, {1, 1}), (std::vector<int64_t>{4, 4}));
}

TEST(SplitByWeight, ProportionalAndNeverEmpty) {
  EXPECT_EQ(split_by_weight(384, {96, 84, 84, 84}), (std::vector<int64_t>{106, 93, 93, 92}));
  const std::vector<int64_t> tiny = split_by_weight(3, {1000, 1, 1});
  EXPECT_EQ(tiny, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_THROW(split_by_weight(2, {1, 1, 1}), Error);
}

TEST(ParseSplit, CountsOrAClearError) {
  EXPECT_EQ(parse_split("10,9,9", "--layer-split"), (std::vector<int64_t>{10, 9, 9}));
  EXPECT_TRUE(parse_split("", "--layer-split").empty());
  for (const char* bad : {"10,,9", "10,x", "0,28", "-1,29", "10,"}) EXPECT_THROW(parse_split(bad, "--layer-split"), Error) << bad;
}

TEST(PlanLayout, PipelineStagesFollowMemory) {
  ParallelSizes sizes{.tp = 1, .pp = 2};
  const ParallelLayout layout = plan_layout(moe(30), sizes, {}, {}, gib({40, 20}));
  EXPECT_EQ(layout.stage_layers, (std::vector<int64_t>{20, 10}));
  const model::ModelShard second = layout.shard(1);
  EXPECT_EQ(second.layer_begin, 20);
  EXPECT_EQ(second.layer_end, 30);
  EXPECT_FALSE(second.first_stage());
  EXPECT_TRUE(second.computes_logits(30));
  EXPECT_EQ(layout.logits_rank(), 1);
}

TEST(PlanLayout, PlacementLeavesRoomForTheEmbeddingAndTheHead) {
  const int64_t g = int64_t(1) << 30;
  // Equal 10 GiB stages; stage 0 also holds a 4 GiB embedding: layers in proportion to 6 : 10.
  const ParallelLayout pp = plan_layout(moe(32), {.pp = 2}, {}, {}, gib({10, 10}), {.embedding_bytes = 4 * g});
  EXPECT_EQ(pp.stage_layers, split_by_weight(32, {6, 10}));
  // Expert lanes: lane 0 (the logits lane) carries a 2 GiB head and 1 GiB of dense layers on every lane.
  const PlacementCosts costs{.head_bytes = 2 * g, .dense_layer_bytes = g / 28};
  const ParallelLayout ep = plan_layout(moe(28, 64), {.ep = 2}, {}, {}, gib({11, 9}), costs);
  EXPECT_EQ(ep.lane_experts, split_by_weight(64, {8, 8}));  // 11 - 2 - 1 = 9 - 1
}

TEST(PlanLayout, RanksAreStageMajorAndTensorParallelLanesShareALayerRange) {
  ParallelSizes sizes{.tp = 2, .pp = 2};
  const ParallelLayout layout = plan_layout(moe(28), sizes, {}, {}, gib({8, 8, 8, 8}));
  EXPECT_EQ(layout.sizes.world(), 4);
  for (int r = 0; r < 4; ++r) {
    const model::ModelShard s = layout.shard(r);
    EXPECT_EQ(s.tp_rank, r % 2);
    EXPECT_EQ(s.tp_size, 2);
    EXPECT_EQ(s.layer_begin, r < 2 ? 0 : 14);
    EXPECT_EQ(s.expert_begin, 0);
    EXPECT_EQ(s.end_expert(384), 384);  // tp alone slices each expert, it does not partition them
  }
  EXPECT_EQ(layout.logits_rank(), 2);
  EXPECT_FALSE(layout.shard(3).computes_logits(28));  // lane 1 of the last stage leaves them to lane 0
}

TEST(PlanLayout, ExpertsFollowMemoryOrTheExplicitSplit) {
  ParallelSizes sizes{.ep = 4};
  const ParallelLayout weighted = plan_layout(moe(), sizes, {}, {}, gib({96, 84, 84, 84}));
  EXPECT_EQ(weighted.lane_experts, (std::vector<int64_t>{106, 93, 93, 92}));
  const ParallelLayout given = plan_layout(moe(), sizes, {}, {108, 92, 92, 92}, gib({1, 1, 1, 1}));
  EXPECT_EQ(given.shard(1).expert_begin, 108);
  EXPECT_EQ(given.shard(1).expert_end, 200);
  EXPECT_EQ(given.shard(3).expert_end, 384);
  EXPECT_EQ(given.shard(2).tp_size, 1);  // attention replicated
}

TEST(PlanLayout, BadSizesAndSplitsNameTheFlag) {
  auto expect_error = [](const ParallelSizes& sizes, std::vector<int64_t> layers, std::vector<int64_t> experts,
                         const model::ModelConfig& config, const char* needle) {
    try {
      plan_layout(config, sizes, layers, experts, std::vector<double>(size_t(sizes.world()), 1e9));
      ADD_FAILURE() << "no error for " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error({.tp = 3}, {}, {}, moe(), "--tp 3");
  expect_error({.tp = 8}, {}, {}, moe(), "KV heads");
  expect_error({.ep = 2}, {}, {}, moe(28, 0), "dense");
  expect_error({.tp = 2, .ep = 4}, {}, {}, moe(), "--ep 4");
  expect_error({.pp = 40}, {}, {}, moe(), "--pp 40");
  expect_error({.pp = 2}, {10, 9, 9}, {}, moe(), "--layer-split names 3 stages");
  expect_error({.pp = 2}, {10, 9}, {}, moe(), "adds up to 19");
  expect_error({.ep = 2}, {}, {100, 200}, moe(), "adds up to 300");
  expect_error({.tp = 2}, {}, {192, 192}, moe(), "--expert-split needs --ep");
}

TEST(PlanLayout, TheKeyNamesTheLayout) {
  const ParallelLayout a = plan_layout(moe(), {.pp = 2}, {14, 14}, {}, gib({1, 1}));
  const ParallelLayout b = plan_layout(moe(), {.pp = 2}, {15, 13}, {}, gib({1, 1}));
  EXPECT_NE(a.key(), b.key());
  EXPECT_EQ(a.key(), plan_layout(moe(), {.pp = 2}, {}, {}, gib({1, 1})).key());
}

}  // namespace
}  // namespace llmesh::dist

namespace llmesh::dist {

TEST(PlanComm, CountsTheReductionsHandOffsAndLogitsTheExecutorSends) {
  model::ModelConfig c;
  c.hidden_size = 1024;
  c.num_layers = 28;
  c.num_heads = 16;
  c.num_kv_heads = 8;
  c.vocab_size = 1000;
  const auto plan = [&](ParallelSizes sizes) {
    return plan_comm(c, plan_layout(c, sizes, {}, {}, std::vector<double>(size_t(sizes.world()), 1.0)));
  };
  const CommPlan tp = plan({2, 1, 1});
  EXPECT_EQ(tp.reductions_per_stage, 56);  // attention and FFN output of every layer
  EXPECT_EQ(tp.reduce_bytes, 56 * 1024 * 4);
  EXPECT_EQ(tp.logits_bytes, 0);  // rank 0 computes them
  const CommPlan pp = plan({1, 2, 1});
  EXPECT_EQ(pp.reductions_per_stage, 0);
  EXPECT_EQ(pp.num_boundaries, 1);
  EXPECT_EQ(pp.rank0_sent_per_token(), 1024 * 4);
  EXPECT_EQ(pp.logits_bytes, 1000 * 4);
  const CommPlan both = plan({2, 2, 1});
  EXPECT_EQ(both.reductions_per_stage, 28);
  EXPECT_EQ(both.reductions_in_model, 56);
  // A faster link never costs more; one rank costs nothing.
  EXPECT_LT(both.decode_seconds(100e9, 1e-6), both.decode_seconds(1e9, 1e-6));
  EXPECT_EQ(plan({1, 1, 1}).decode_seconds(1e9, 1e-5), 0);
}

}  // namespace llmesh::dist
