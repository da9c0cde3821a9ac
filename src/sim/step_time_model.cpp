#include "sim/step_time_model.h"

#include <algorithm>

namespace llmesh::sim {

RooflineStepTimeModel::RooflineStepTimeModel(const HardwareConfig& hardware, const ModelSpec& model,
                                             const StepTimeConfig& step_time, int tp_size, int ep_size) {
  // Everything that does not depend on the step is folded into constants here:
  // the simulator calls step_seconds for every worker of every step.
  const double active_params = model.active_params_b * 1e9;
  const double total_params = model.total_params_b * 1e9;
  // Weights are sharded over ep GPUs (ep counts every GPU holding a slice, tp included).
  const int weight_shards = std::max(ep_size, tp_size);
  linear_flops_per_token_ = 2.0 * active_params;
  attention_flops_per_position_ = 4.0 * model.num_layers * model.attention_dim;
  seconds_per_flop_ = 1.0 / (tp_size * hardware.flops_per_gpu_tflops * 1e12 * step_time.mfu);
  weight_bytes_per_token_ = model.bytes_per_param * active_params / weight_shards;
  weight_bytes_all_ = model.bytes_per_param * total_params / weight_shards;
  kv_bytes_per_token_ = model.kv_bytes_per_token / tp_size;
  seconds_per_byte_ = 1.0 / (hardware.memory_bandwidth_gb_per_s * 1e9 * step_time.bandwidth_efficiency);
  // Per layer: 2 all-reduces for TP, 2 all-to-alls (dispatch, combine) for EP,
  // each moving bf16 activations (2 bytes x hidden per token).
  const double link = hardware.interconnect_gb_per_s * 1e9;
  const double latency_s = hardware.interconnect_latency_us * 1e-6;
  const double activation_bytes_per_token = 2.0 * model.hidden_size;
  if (model.planned.given) {
    // An llmesh job's own traffic (f32 activations): ring all-reduces over the
    // stage's ranks, one hand-off per stage boundary, the sampled logits to rank 0.
    const PlannedComm& p = model.planned;
    if (p.width > 1 && p.all_reduces_per_step > 0) {
      const double fraction = 2.0 * (p.width - 1) / p.width;
      comm_seconds_per_token_ += double(p.all_reduces_per_step) * fraction * double(p.all_reduce_bytes) / link;
      comm_fixed_s_ += double(p.all_reduces_per_step) * 2 * (p.width - 1) * latency_s;
    }
    comm_seconds_per_token_ += double(p.stage_boundaries * p.handoff_bytes) / link;
    comm_seconds_per_sequence_ = double(p.logits_bytes) / link;
    comm_fixed_s_ += double(p.stage_boundaries + (p.logits_bytes > 0 ? 1 : 0)) * latency_s;
  } else if (tp_size > 1) {
    double fraction = 2.0 * (tp_size - 1) / tp_size;
    comm_seconds_per_token_ += model.num_layers * 2 * fraction * activation_bytes_per_token / link;
    comm_fixed_s_ += model.num_layers * 2 * latency_s;
  }
  if (!model.planned.given && ep_size > tp_size) {
    double fraction = static_cast<double>(ep_size - 1) / ep_size;
    comm_seconds_per_token_ += model.num_layers * 2 * fraction * activation_bytes_per_token / link;
    comm_fixed_s_ += model.num_layers * 2 * latency_s;
  }
  overhead_s_ = step_time.overhead_ms * 1e-3;
}

double RooflineStepTimeModel::step_seconds(const StepShape& shape) const {
  if (shape.num_new_tokens <= 0) return 0;
  const double tokens = static_cast<double>(shape.num_new_tokens);
  // Key positions attended, summed over the step's new tokens: a chunk of n
  // on top of c cached tokens attends n c + n^2 / 2 (causal); decode attends
  // its whole context.
  const double attended = shape.phase == Phase::Prefill ? shape.sum_new_times_context - 0.5 * shape.sum_new_squared
                                                        : static_cast<double>(shape.sum_context_tokens);
  const double compute_s =
      (linear_flops_per_token_ * tokens + attention_flops_per_position_ * attended) * seconds_per_flop_;
  // Weights: each token touches the active parameters; a batch touches at most
  // all of them. Expert traffic depends on the whole synchronized group's tokens.
  const double group_tokens = static_cast<double>(std::max(shape.group_new_tokens, shape.num_new_tokens));
  const double weight_bytes = std::min(weight_bytes_all_, weight_bytes_per_token_ * group_tokens);
  const double kv_bytes = kv_bytes_per_token_ * static_cast<double>(shape.sum_context_tokens);
  const double memory_s = (weight_bytes + kv_bytes) * seconds_per_byte_;
  const double comm_s = comm_fixed_s_ + comm_seconds_per_token_ * tokens +
                        comm_seconds_per_sequence_ * static_cast<double>(shape.num_sequences);
  return std::max(compute_s, memory_s) + comm_s + overhead_s_;
}

double CalibratedStepTimeModel::step_seconds(const StepShape& shape) const {
  if (shape.num_new_tokens <= 0) return 0;
  if (shape.phase == Phase::Prefill) {
    return c_.prefill_fixed_s + c_.prefill_per_token_s * static_cast<double>(shape.num_new_tokens) +
           c_.prefill_per_token_context_s * shape.sum_new_times_context;
  }
  return c_.decode_fixed_s + c_.decode_per_context_token_s * static_cast<double>(shape.sum_context_tokens) +
         c_.decode_per_sequence_s * shape.num_sequences;
}

std::unique_ptr<StepTimeModel> make_step_time_model(const SimConfig& config, int tp_size, int ep_size) {
  if (config.step_time.kind == StepTimeKind::Calibrated) {
    return std::make_unique<CalibratedStepTimeModel>(config.step_time.calibration);
  }
  return std::make_unique<RooflineStepTimeModel>(config.hardware, config.model, config.step_time, tp_size, ep_size);
}

}  // namespace llmesh::sim
