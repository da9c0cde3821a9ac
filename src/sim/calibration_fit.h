// Fits the calibrated step-time model's coefficients to measured steps.
//
// Input CSV (header required; `llmesh bench` fixed points are to be written
// in this shape), one row per measured step of a uniform batch:
//   phase,batch_size,new_tokens_per_seq,context_tokens_per_seq,seconds
//   prefill,1,4096,0,0.412
//   decode,8,1,12000,0.0213
// prefill: n = new_tokens_per_seq prompt tokens per sequence on top of
//   c = context_tokens_per_seq cached tokens; decode: c = each sequence's
//   context; new_tokens_per_seq is ignored.
// Least squares on
//   prefill = fixed + per_token * B n + per_token_context * B n (c + n)
//   decode  = fixed + per_context_token * B c + per_sequence * B
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/config.h"

namespace llmesh::sim {

struct MeasuredStep {
  bool is_prefill = true;
  int64_t batch_size = 1;
  int64_t new_tokens_per_seq = 0;
  int64_t context_tokens_per_seq = 0;
  double seconds = 0;
};

struct CalibrationFit {
  CalibrationCoefficients coefficients;
  int num_prefill_points = 0;
  int num_decode_points = 0;
  double prefill_max_relative_error = 0;
  double decode_max_relative_error = 0;
};

std::vector<MeasuredStep> parse_measured_steps_csv(const std::string& text, const std::string& source_name);
CalibrationFit fit_calibration(const std::vector<MeasuredStep>& steps);
// The calibration file `step_time.calibration_file` reads.
nlohmann::json calibration_json(const CalibrationFit& fit);

// Least squares for a small dense system (rows x cols, cols <= 8); returns
// the coefficients. Throws when the columns are linearly dependent.
std::vector<double> least_squares(const std::vector<std::vector<double>>& rows, const std::vector<double>& targets);

}  // namespace llmesh::sim
