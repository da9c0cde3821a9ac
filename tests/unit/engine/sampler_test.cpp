#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

namespace llmesh {

using engine::Sampler;
using engine::SamplingParams;

namespace {

std::vector<int32_t> none;

TEST(Sampler, GreedyPicksArgmax) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  std::vector<float> logits = {0.1f, 3.0f, -1.0f, 2.9f};
  EXPECT_EQ(s.sample(logits, none, none), 1);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.seed = 42;
  std::vector<float> base(100);
  for (size_t i = 0; i < base.size(); ++i) base[i] = float(i % 7) * 0.3f;
  std::vector<int32_t> a, b;
  Sampler s1(p), s2(p);
  for (int i = 0; i < 50; ++i) {
    auto l1 = base, l2 = base;
    a.push_back(s1.sample(l1, none, none));
    b.push_back(s2.sample(l2, none, none));
  }
  EXPECT_EQ(a, b);
  p.seed = 43;
  Sampler s3(p);
  std::vector<int32_t> c;
  for (int i = 0; i < 50; ++i) {
    auto l = base;
    c.push_back(s3.sample(l, none, none));
  }
  EXPECT_NE(a, c);
}

TEST(Sampler, TopKOneIsGreedy) {
  SamplingParams p;
  p.temperature = 5.0f;
  p.top_k = 1;
  p.seed = 1;
  Sampler s(p);
  for (int i = 0; i < 20; ++i) {
    std::vector<float> logits = {0.0f, 0.5f, 0.2f};
    EXPECT_EQ(s.sample(logits, none, none), 1);
  }
}

TEST(Sampler, TopPKeepsSmallestNucleus) {
  // probs ~ {0.6, 0.3, 0.1}: top_p 0.5 keeps only token 0; top_p 0.85 keeps {0, 1}.
  std::vector<float> base = {std::log(0.6f), std::log(0.3f), std::log(0.1f)};
  SamplingParams p;
  p.temperature = 1.0f;
  p.top_p = 0.5f;
  p.seed = 7;
  Sampler s(p);
  for (int i = 0; i < 50; ++i) {
    auto l = base;
    EXPECT_EQ(s.sample(l, none, none), 0);
  }
  p.top_p = 0.85f;
  Sampler s2(p);
  std::map<int32_t, int> counts;
  for (int i = 0; i < 2000; ++i) {
    auto l = base;
    counts[s2.sample(l, none, none)]++;
  }
  EXPECT_EQ(counts.count(2), 0u);
  EXPECT_NEAR(double(counts[0]) / 2000, 0.6 / 0.9, 0.05);
}

TEST(Sampler, MinPDropsUnlikely) {
  std::vector<float> base = {std::log(0.5f), std::log(0.4f), std::log(0.1f)};
  SamplingParams p;
  p.min_p = 0.5f;  // keep p >= 0.25
  p.seed = 3;
  Sampler s(p);
  for (int i = 0; i < 200; ++i) {
    auto l = base;
    EXPECT_NE(s.sample(l, none, none), 2);
  }
}

TEST(Sampler, PenaltiesChangeTheArgmax) {
  SamplingParams p;
  p.temperature = 0;
  p.repetition_penalty = 2.0f;
  Sampler s(p);
  std::vector<float> logits = {2.0f, 1.5f};
  std::vector<int32_t> prompt = {0};
  EXPECT_EQ(s.sample(logits, prompt, none), 1);  // 2.0 / 2 = 1.0 < 1.5

  SamplingParams q;
  q.temperature = 0;
  q.frequency_penalty = 0.3f;
  Sampler f(q);
  std::vector<float> l2 = {2.0f, 1.5f};
  std::vector<int32_t> out = {0, 0};
  EXPECT_EQ(f.sample(l2, none, out), 1);  // 2.0 - 0.6 = 1.4 < 1.5
  EXPECT_FLOAT_EQ(l2[0], 1.4f);
}

TEST(Sampler, LogprobsNormalize) {
  SamplingParams p;
  p.temperature = 0;
  Sampler s(p);
  s.set_keep_logprobs(true);
  std::vector<float> logits = {1.0f, 2.0f, 3.0f};
  s.sample(logits, none, none);
  double total = 0;
  for (float lp : s.last_logprobs()) total += std::exp(double(lp));
  EXPECT_NEAR(total, 1.0, 1e-6);
}

}  // namespace
}  // namespace llmesh
