// How long one engine step takes on one worker.
//
// A step is either a prefill step (chunks of several requests' prompts) or a
// decode step (one new token for each running request). The simulator
// describes a step by its StepShape and asks a StepTimeModel for seconds.
// Two models ship: a roofline of hardware and model facts, and a calibrated
// fit of measured points (`llmesh sim fit`). Another model (e.g. the real
// engine's cost model) plugs in by implementing StepTimeModel.
#pragma once

#include <cstdint>
#include <memory>

#include "sim/config.h"

namespace llmesh::sim {

enum class Phase { Prefill, Decode };

struct StepShape {
  Phase phase = Phase::Decode;
  int num_sequences = 0;
  // Prefill: prompt tokens computed in this step (sum of n_i over chunks).
  // Decode: equals num_sequences.
  int64_t num_new_tokens = 0;
  // Prefill: sum of c_i, tokens already in KV before each chunk.
  // Decode: sum of each sequence's context (prompt + generated so far).
  int64_t sum_context_tokens = 0;
  // Prefill attention work: sum of n_i * (c_i + n_i). With no cache hit and
  // one chunk per prompt this is the sum of squared prompt lengths.
  double sum_new_times_context = 0;
  // Prefill: sum of n_i^2 (the causal triangle of each chunk).
  double sum_new_squared = 0;
  // Tokens of this phase across the whole phase-synchronized group; expert
  // weights touched and EP traffic depend on them. Equals num_new_tokens
  // when the worker is not in a DP-attention group.
  int64_t group_new_tokens = 0;
};

class StepTimeModel {
 public:
  virtual ~StepTimeModel() = default;
  // Seconds for a step of this shape; 0 for an empty step.
  virtual double step_seconds(const StepShape& shape) const = 0;
};

// Roofline: max(compute, memory) + communication + fixed overhead, with
//   compute = (2 * active_params * tokens + 4 * layers * attention_dim * attended) / (tp * peak * mfu)
//   memory  = (weight bytes touched + KV bytes read) / (tp * bandwidth * efficiency)
//   comm    = per layer, TP all-reduce (tp > 1) and EP all-to-all (ep > 1), bandwidth + latency terms.
// `ep_size` is the number of GPUs experts are spread over (tp * dp for DP attention + EP).
class RooflineStepTimeModel : public StepTimeModel {
 public:
  RooflineStepTimeModel(const HardwareConfig& hardware, const ModelSpec& model, const StepTimeConfig& step_time,
                        int tp_size, int ep_size);
  double step_seconds(const StepShape& shape) const override;

 private:
  double linear_flops_per_token_ = 0;
  double attention_flops_per_position_ = 0;
  double seconds_per_flop_ = 0;
  double weight_bytes_per_token_ = 0;
  double weight_bytes_all_ = 0;
  double kv_bytes_per_token_ = 0;
  double seconds_per_byte_ = 0;
  double comm_seconds_per_token_ = 0;
  double comm_fixed_s_ = 0;
  double comm_seconds_per_sequence_ = 0;  // a planned job's logits: one row per sequence and step
  double overhead_s_ = 0;
};

// Calibrated:
//   prefill = fixed + per_token * sum n_i + per_token_context * sum n_i (c_i + n_i)
//   decode  = fixed + per_context_token * sum context + per_sequence * batch
class CalibratedStepTimeModel : public StepTimeModel {
 public:
  explicit CalibratedStepTimeModel(const CalibrationCoefficients& coefficients) : c_(coefficients) {}
  double step_seconds(const StepShape& shape) const override;

 private:
  CalibrationCoefficients c_;
};

std::unique_ptr<StepTimeModel> make_step_time_model(const SimConfig& config, int tp_size, int ep_size);

}  // namespace llmesh::sim
