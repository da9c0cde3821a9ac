// One agent, no contention: the makespan must equal the sum of its think,
// prefill and decode times computed here by hand from the step-time model.
#include <gtest/gtest.h>

#include "sim/simulator.h"
#include "sim/step_time_model.h"
#include "sim/workload.h"
#include "sim_test_util.h"

namespace llmesh::sim {
namespace {

// The agent's makespan from first principles: turn k prefills its new input
// on top of the whole earlier context (all cached), then decodes output - 1
// tokens (the first token comes from prefill), each decode step attending
// over prompt + tokens generated so far.
double closed_form_makespan(const SessionScript& script, const StepTimeModel& model) {
  double t = script.start_s;
  int64_t context = 0;
  for (const TurnSpec& turn : script.turns) {
    t += turn.delay_s;
    StepShape prefill;
    prefill.phase = Phase::Prefill;
    prefill.num_sequences = 1;
    prefill.num_new_tokens = turn.input_tokens;
    prefill.group_new_tokens = turn.input_tokens;
    prefill.sum_context_tokens = context;
    prefill.sum_new_times_context = double(turn.input_tokens) * double(context + turn.input_tokens);
    prefill.sum_new_squared = double(turn.input_tokens) * double(turn.input_tokens);
    t += model.step_seconds(prefill);
    int64_t prompt = context + turn.input_tokens;
    for (int64_t generated = 1; generated < turn.output_tokens; ++generated) {
      StepShape decode;
      decode.phase = Phase::Decode;
      decode.num_sequences = 1;
      decode.num_new_tokens = 1;
      decode.group_new_tokens = 1;
      decode.sum_context_tokens = prompt + generated;
      t += model.step_seconds(decode);
    }
    context = prompt + turn.output_tokens;
  }
  return t;
}

TEST(SimClosedForm, SingleAgentCalibratedMatchesSumOfStepTimes) {
  SimConfig config = testing::single_worker_config();
  Workload workload = make_workload(config.workload, config.seed);
  ASSERT_EQ(workload.sessions.size(), 1u);
  SimResult result = run_simulation(config, workload);
  CalibratedStepTimeModel model(config.step_time.calibration);
  double expected = closed_form_makespan(workload.sessions[0], model);
  EXPECT_NEAR(result.makespan_s, expected, expected * 1e-3);
  // Every turn after the first hits its whole earlier context.
  EXPECT_EQ(result.evictions_live, 0);
  EXPECT_GT(result.hit_rate(), 0.5);
}

TEST(SimClosedForm, SingleAgentRooflineWithChunkingMatches) {
  // A roofline model, and a chunk budget so each prompt is one chunk anyway.
  SimConfig config = testing::single_worker_config();
  config.step_time.kind = StepTimeKind::Roofline;
  config.step_time.overhead_ms = 0.7;
  config.seed = 11;
  Workload workload = make_workload(config.workload, config.seed);
  SimResult result = run_simulation(config, workload);
  RooflineStepTimeModel model(config.hardware, config.model, config.step_time, 1, 1);
  double expected = closed_form_makespan(workload.sessions[0], model);
  EXPECT_NEAR(result.makespan_s, expected, expected * 1e-3);
  // The worker computes except during think time: busy = makespan - think.
  double think = 0;
  for (const TurnSpec& t : workload.sessions[0].turns) think += t.delay_s;
  const WorkerStats& w = result.workers[0];
  EXPECT_NEAR(w.seconds[0] + w.seconds[1], expected - think, expected * 1e-3);
  EXPECT_NEAR(w.seconds[static_cast<int>(Activity::Idle)], think, expected * 1e-3);
}

TEST(SimClosedForm, DecisionTickDelaysOnlyIdleStarts) {
  SimConfig config = testing::single_worker_config();
  SimResult base = run_simulation(config);
  config.scheduler.decision_tick_s = 0.25;
  SimResult ticked = run_simulation(config);
  // Each of the 6 turns may wait up to one tick for an idle scheduler to notice it.
  EXPECT_GE(ticked.makespan_s, base.makespan_s);
  EXPECT_LE(ticked.makespan_s, base.makespan_s + 6 * 0.25 + 1e-9);
}

}  // namespace
}  // namespace llmesh::sim
