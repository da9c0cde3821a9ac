// The fit must recover known coefficients from synthetic measured steps.
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "sim/calibration_fit.h"
#include "sim/step_time_model.h"

namespace llmesh::sim {
namespace {

CalibrationCoefficients truth() { return {0.015, 7e-5, 2.5e-10, 0.011, 1.8e-8, 2.2e-4}; }

std::vector<MeasuredStep> synthetic_points(double noise, uint64_t seed) {
  CalibratedStepTimeModel model(truth());
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> jitter(0.0, noise);
  std::vector<MeasuredStep> steps;
  for (int64_t batch : {1, 2, 4}) {
    for (int64_t n : {256, 1024, 4096, 16384}) {
      for (int64_t c : {0, 8192, 32768}) {
        StepShape s;
        s.phase = Phase::Prefill;
        s.num_sequences = static_cast<int>(batch);
        s.num_new_tokens = batch * n;
        s.sum_context_tokens = batch * c;
        s.sum_new_times_context = double(batch) * n * double(c + n);
        steps.push_back({true, batch, n, c, model.step_seconds(s) * (1 + jitter(rng))});
      }
    }
  }
  for (int64_t batch : {1, 4, 16, 64}) {
    for (int64_t c : {1000, 8000, 32000, 100000}) {
      StepShape s;
      s.phase = Phase::Decode;
      s.num_sequences = static_cast<int>(batch);
      s.num_new_tokens = batch;
      s.sum_context_tokens = batch * c;
      steps.push_back({false, batch, 1, c, model.step_seconds(s) * (1 + jitter(rng))});
    }
  }
  return steps;
}

TEST(SimCalibrationFit, RecoversExactCoefficients) {
  CalibrationFit fit = fit_calibration(synthetic_points(0.0, 1));
  CalibrationCoefficients t = truth(), c = fit.coefficients;
  EXPECT_NEAR(c.prefill_fixed_s, t.prefill_fixed_s, 1e-6 * t.prefill_fixed_s + 1e-9);
  EXPECT_NEAR(c.prefill_per_token_s, t.prefill_per_token_s, 1e-6 * t.prefill_per_token_s);
  EXPECT_NEAR(c.prefill_per_token_context_s, t.prefill_per_token_context_s, 1e-6 * t.prefill_per_token_context_s);
  EXPECT_NEAR(c.decode_fixed_s, t.decode_fixed_s, 1e-6 * t.decode_fixed_s);
  EXPECT_NEAR(c.decode_per_context_token_s, t.decode_per_context_token_s, 1e-6 * t.decode_per_context_token_s);
  EXPECT_NEAR(c.decode_per_sequence_s, t.decode_per_sequence_s, 1e-6 * t.decode_per_sequence_s);
  EXPECT_LT(fit.prefill_max_relative_error, 1e-6);
}

TEST(SimCalibrationFit, NoisyPointsGiveCloseCoefficientsAndPredictions) {
  CalibrationFit fit = fit_calibration(synthetic_points(0.02, 7));  // 2% measurement noise
  CalibrationCoefficients t = truth(), c = fit.coefficients;
  EXPECT_NEAR(c.prefill_per_token_s, t.prefill_per_token_s, 0.1 * t.prefill_per_token_s);
  EXPECT_NEAR(c.prefill_per_token_context_s, t.prefill_per_token_context_s, 0.1 * t.prefill_per_token_context_s);
  EXPECT_NEAR(c.decode_per_context_token_s, t.decode_per_context_token_s, 0.1 * t.decode_per_context_token_s);
  EXPECT_NEAR(c.decode_fixed_s, t.decode_fixed_s, 0.1 * t.decode_fixed_s);
  // Predictions at an unseen point stay within a few percent.
  CalibratedStepTimeModel fitted(c), real(t);
  StepShape s;
  s.phase = Phase::Prefill;
  s.num_sequences = 3;
  s.num_new_tokens = 3 * 6000;
  s.sum_context_tokens = 3 * 20000;
  s.sum_new_times_context = 3.0 * 6000 * 26000;
  EXPECT_NEAR(fitted.step_seconds(s), real.step_seconds(s), 0.03 * real.step_seconds(s));
}

TEST(SimCalibrationFit, CsvRoundTripAndErrors) {
  std::string csv =
      "phase,batch_size,new_tokens_per_seq,context_tokens_per_seq,seconds\n"
      "prefill,1,512,0,0.05\nprefill,1,2048,0,0.16\nprefill,2,1024,4096,0.2\n"
      "decode,1,1,1000,0.01\ndecode,8,1,4000,0.012\ndecode,32,1,500,0.018\n";
  std::vector<MeasuredStep> steps = parse_measured_steps_csv(csv, "t.csv");
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_TRUE(steps[2].is_prefill);
  EXPECT_EQ(steps[2].context_tokens_per_seq, 4096);
  EXPECT_FALSE(steps[4].is_prefill);
  nlohmann::json j = calibration_json(fit_calibration(steps));
  EXPECT_TRUE(j["prefill"].contains("per_token_context_s"));
  EXPECT_THROW(parse_measured_steps_csv("phase,seconds\nprefill,1\n", "bad.csv"), Error);
  EXPECT_THROW(parse_measured_steps_csv(csv + "warmup,1,1,1,1\n", "bad.csv"), Error);
  // Too few distinct points: two prefill rows cannot fix three coefficients.
  steps.erase(steps.begin());
  EXPECT_THROW(fit_calibration(steps), Error);
}

}  // namespace
}  // namespace llmesh::sim
