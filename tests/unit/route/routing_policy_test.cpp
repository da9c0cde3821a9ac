#include "route/routing_policy.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <map>

#include "route/cache_aware_policy.h"
#include "route/prefix_history.h"
#include "route/session_policy.h"

namespace llmesh::route {
namespace {

uint64_t key_hash(const std::string& k) { return XXH3_64bits(k.data(), k.size()); }

std::vector<HashRing::Target> three_targets() { return {{"a", 1}, {"b", 1}, {"c", 1}}; }

std::vector<TargetLoad> loads(const std::vector<HashRing::Target>& targets) {
  std::vector<TargetLoad> out;
  for (const auto& t : targets) out.push_back({t.name, t.weight, true, 0, 0});
  return out;
}

RouteQuery session(const std::string& key) { return {true, key_hash(key), nullptr}; }

// Routes one request the way Router::pick does: choose, remember, count it in flight.
RoutingDecision route(RoutingPolicy& p, const RouteQuery& q, std::vector<TargetLoad>& targets) {
  const RoutingDecision d = p.choose(q, targets);
  if (d.target >= 0) {
    p.routed(q, d.target);
    ++targets[size_t(d.target)].in_flight;
  }
  return d;
}

TEST(LoadBound, Formula) {
  EXPECT_EQ(load_bound(0, 1, 3, 1.25), 1);     // ceil(1.25 * 1 / 3)
  EXPECT_EQ(load_bound(29, 1, 3, 1.25), 13);   // ceil(1.25 * 30 / 3) = ceil(12.5)
  EXPECT_EQ(load_bound(11, 1, 3, 1.0), 4);     // exactly the average
  EXPECT_EQ(load_bound(9, 2, 4, 1.25), 7);     // weight 2 of 4: ceil(1.25 * 10 / 2) = ceil(6.25)
  EXPECT_EQ(load_bound(0, 1, 0, 1.25), 1);
}

TEST(LoadBound, SomeEligibleTargetAlwaysHasRoom) {
  std::vector<TargetLoad> t = {{"a", 1, true, 5, 0}, {"b", 2, true, 9, 0}, {"c", 1, false, 50, 0}, {"d", 1, true, 0, 0}};
  for (int step = 0; step < 200; ++step) {
    const std::vector<int64_t> bounds = load_bounds(t, 1.0);
    int with_room = -1;
    for (size_t i = 0; i < t.size(); ++i)
      if (has_room(t[i], &bounds, i)) with_room = int(i);
    ASSERT_GE(with_room, 0) << "step " << step;
    ++t[size_t(with_room)].in_flight;
  }
}

TEST(SessionPolicy, ThirtyConcurrentSessionsStayWithinTheBound) {
  PolicyOptions o;
  SessionPolicy p(three_targets(), o);
  std::vector<TargetLoad> t = loads(three_targets());
  for (int s = 0; s < 30; ++s) {
    int64_t total = 0;
    for (const auto& x : t) total += x.in_flight;
    const RoutingDecision d = route(p, session("s" + std::to_string(s)), t);
    ASSERT_GE(d.target, 0);
    EXPECT_LE(t[size_t(d.target)].in_flight, load_bound(total, 1, 3, o.load_factor));
  }
  for (const auto& x : t) {
    EXPECT_LE(x.in_flight, 13) << x.name;
    EXPECT_GE(x.in_flight, 1) << x.name;
  }
}

TEST(SessionPolicy, OneHotSessionOverflowsAlongTheRing) {
  SessionPolicy p(three_targets(), PolicyOptions{});
  std::vector<TargetLoad> t = loads(three_targets());
  std::map<DecisionReason, int> reasons;
  for (int i = 0; i < 30; ++i) ++reasons[route(p, session("hot"), t).reason];
  for (const auto& x : t) EXPECT_LE(x.in_flight, 13) << x.name;
  EXPECT_EQ(reasons[DecisionReason::ring], 1);
  EXPECT_GT(reasons[DecisionReason::overflow], 0);
}

TEST(SessionPolicy, StickyAcrossTurnsAndAfterLoadEases) {
  SessionPolicy p(three_targets(), PolicyOptions{});
  std::vector<TargetLoad> t = loads(three_targets());
  const int home = p.ring().home(key_hash("s"));
  // Turn 1 finds its home full (another session's burst): it overflows elsewhere.
  t[size_t(home)].in_flight = 10;
  const RoutingDecision first = route(p, session("s"), t);
  ASSERT_NE(first.target, home);
  EXPECT_EQ(first.reason, DecisionReason::overflow);
  // The burst ends; turns 2 and 3 stay where the session's cache now is.
  for (auto& x : t) x.in_flight = 0;
  for (int turn = 2; turn <= 3; ++turn) {
    const RoutingDecision d = route(p, session("s"), t);
    EXPECT_EQ(d.target, first.target);
    EXPECT_EQ(d.reason, DecisionReason::sticky);
    --t[size_t(d.target)].in_flight;
  }
}

TEST(SessionPolicy, ADownTargetMovesOnlyItsSessions) {
  SessionPolicy p(three_targets(), PolicyOptions{});
  std::vector<TargetLoad> t = loads(three_targets());
  std::map<std::string, int> placed;
  for (int s = 0; s < 60; ++s) {
    const std::string key = "s" + std::to_string(s);
    placed[key] = route(p, session(key), t).target;
    --t[size_t(placed[key])].in_flight;  // one turn at a time
  }
  t[1].eligible = false;  // b goes down
  for (const auto& [key, before] : placed) {
    const RoutingDecision d = route(p, session(key), t);
    --t[size_t(d.target)].in_flight;
    if (before != 1) {
      EXPECT_EQ(d.target, before) << key;
      EXPECT_EQ(d.reason, DecisionReason::sticky);
    } else {
      EXPECT_NE(d.target, 1) << key;
      EXPECT_EQ(d.reason, DecisionReason::failover);
      EXPECT_EQ(d.target, p.ring().walk(key_hash(key))[1]) << key;
    }
  }
}

TEST(SessionPolicy, MaxConcurrentIsAHardLimit) {
  SessionPolicy p(three_targets(), PolicyOptions{});
  std::vector<TargetLoad> t = loads(three_targets());
  for (auto& x : t) x.max_concurrent = 2;
  for (int i = 0; i < 6; ++i) ASSERT_GE(route(p, session("k" + std::to_string(i)), t).target, 0);
  const RoutingDecision d = p.choose(session("one-more"), t);
  EXPECT_EQ(d.target, -1);
  EXPECT_EQ(d.reason, DecisionReason::none);
}

TEST(SessionPolicy, NoKeyGoesToTheLeastLoaded) {
  SessionPolicy p(three_targets(), PolicyOptions{});
  std::vector<TargetLoad> t = loads(three_targets());
  t[0].in_flight = 3;
  t[1].in_flight = 1;
  t[2].in_flight = 2;
  const RoutingDecision d = p.choose(RouteQuery{}, t);
  EXPECT_EQ(d.target, 1);
  EXPECT_EQ(d.reason, DecisionReason::no_session);
}

TEST(SessionPolicy, AffinityTableIsBounded) {
  PolicyOptions o;
  o.max_sessions = 100;
  SessionPolicy p(three_targets(), o);
  std::vector<TargetLoad> t = loads(three_targets());
  for (int s = 0; s < 1000; ++s) {
    const RoutingDecision d = route(p, session("s" + std::to_string(s)), t);
    --t[size_t(d.target)].in_flight;
  }
  int64_t total = 0;
  for (int64_t n : p.sessions_per_target()) total += n;
  EXPECT_LE(total, 100);
  EXPECT_GE(total, 80);
}

TEST(PrefixHistory, ChainedBlocksMatchLeadingPrefixOnly) {
  const std::string a = std::string(64, 'a') + std::string(64, 'b') + std::string(64, 'c');
  const std::string b = std::string(64, 'a') + std::string(64, 'x') + std::string(64, 'c');
  const auto ha = prefix_block_hashes(a, 64), hb = prefix_block_hashes(b, 64);
  ASSERT_EQ(ha.size(), 3u);
  EXPECT_EQ(ha[0], hb[0]);
  EXPECT_NE(ha[2], hb[2]);  // same bytes, different prefix
  EXPECT_EQ(prefix_block_hashes(a + "tail", 64).size(), 3u);  // partial block left out
  PrefixHistory h(100);
  h.insert(ha);
  EXPECT_EQ(h.match_blocks(ha), 3);
  EXPECT_EQ(h.match_blocks(hb), 1);
}

TEST(PrefixHistory, EvictsTailsBeforeHeads) {
  PrefixHistory h(4);
  const std::string text(64 * 6, 'z');
  std::vector<uint64_t> blocks = prefix_block_hashes(text, 64);
  h.insert(blocks);
  EXPECT_EQ(h.size(), 4);
  EXPECT_EQ(h.match_blocks(blocks), 4);
}

TEST(CacheAwarePolicy, LongestMatchWinsShortMatchFallsBack) {
  PolicyOptions o;
  o.min_match_blocks = 2;
  CacheAwarePolicy p(3, o);
  std::vector<TargetLoad> t = loads(three_targets());
  const std::string shared(64 * 8, 's');
  const auto prompt_a = prefix_block_hashes(shared + std::string(64 * 4, 'a'), 64);
  const auto prompt_b = prefix_block_hashes(shared + std::string(64 * 4, 'b'), 64);
  const auto unrelated = prefix_block_hashes(std::string(64 * 12, 'u'), 64);
  p.routed({false, 0, &prompt_a}, 2);
  // A prompt sharing 8 blocks with what target 2 saw goes there.
  RoutingDecision d = p.choose({false, 0, &prompt_b}, t);
  EXPECT_EQ(d.target, 2);
  EXPECT_EQ(d.reason, DecisionReason::prefix_match);
  EXPECT_EQ(d.matched_blocks, 8);
  // An unrelated one goes to the least loaded.
  t[0].in_flight = 2;
  t[1].in_flight = 0;
  t[2].in_flight = 1;
  d = p.choose({false, 0, &unrelated}, t);
  EXPECT_EQ(d.target, 1);
  EXPECT_EQ(d.reason, DecisionReason::short_match);
  // Over its bound, the best match gives way.
  t[2].in_flight = 20;
  d = p.choose({false, 0, &prompt_b}, t);
  EXPECT_EQ(d.reason, DecisionReason::match_overloaded);
  EXPECT_NE(d.target, 2);
  // A target that went down forgets what it held.
  t[2].in_flight = 0;
  p.target_down(2);
  EXPECT_EQ(p.choose({false, 0, &prompt_b}, t).reason, DecisionReason::short_match);
}

TEST(SimplePolicies, RoundRobinSkipsIneligible) {
  auto p = make_routing_policy("round_robin", three_targets(), PolicyOptions{});
  std::vector<TargetLoad> t = loads(three_targets());
  t[1].eligible = false;
  std::vector<int> got;
  for (int i = 0; i < 4; ++i) got.push_back(p->choose({}, t).target);
  EXPECT_EQ(got, (std::vector<int>{0, 2, 0, 2}));
}

TEST(SimplePolicies, RandomFollowsWeights) {
  PolicyOptions o;
  o.random_seed = 7;
  std::vector<HashRing::Target> targets = {{"a", 1}, {"b", 3}};
  auto p = make_routing_policy("random", targets, o);
  std::vector<TargetLoad> t = loads(targets);
  int b = 0;
  for (int i = 0; i < 4000; ++i) b += p->choose({}, t).target == 1 ? 1 : 0;
  EXPECT_NEAR(b / 4000.0, 0.75, 0.04);
}

TEST(SimplePolicies, LeastLoadedUsesWeight) {
  std::vector<HashRing::Target> targets = {{"a", 1}, {"b", 4}};
  auto p = make_routing_policy("least_loaded", targets, PolicyOptions{});
  std::vector<TargetLoad> t = loads(targets);
  t[0].in_flight = 1;
  t[1].in_flight = 3;  // 3/4 < 1/1
  EXPECT_EQ(p->choose({}, t).target, 1);
}

TEST(SimplePolicies, UnknownNameIsAnError) {
  EXPECT_THROW(make_routing_policy("fastest", three_targets(), PolicyOptions{}), std::exception);
}

}  // namespace
}  // namespace llmesh::route
