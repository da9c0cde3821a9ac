// Model weights by canonical (GGUF-style) name, as views into memory-mapped files.
//
// Canonical names are llama.cpp's: token_embd.weight, output_norm.weight,
// output.weight, blk.N.attn_{norm,q,k,v,output,q_norm,k_norm}.*,
// blk.N.ffn_{norm,gate,up,down}.weight, blk.N.ffn_gate_inp.weight (router),
// blk.N.ffn_{gate,up,down}_exps.E.weight (expert E, 2-D, both formats), rope_freqs.weight.
// The store owns the mappings, so every view stays valid as long as the store
// lives (moving the store keeps them valid: mappings are heap-owned).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "core/tensor.h"

namespace llmesh::model {

struct ModelConfig;

class WeightStore {
 public:
  WeightStore() = default;
  explicit WeightStore(std::string model_path) : model_path_(std::move(model_path)) {}

  // Keeps a mapping alive for as long as the store.
  void keep_mapping(std::shared_ptr<const MappedFile> mapping);
  // Keeps a buffer the store's views point into (tensors converted at load) alive as long.
  void keep_buffer(std::shared_ptr<const uint8_t[]> buffer) { buffers_.push_back(std::move(buffer)); }
  // A tensor as stored in a file (for `llmesh inspect`; stacked expert tensors appear once).
  void add_file_tensor(const Tensor& tensor);
  // A canonical view; Error on a duplicate name.
  void add(const std::string& canonical_name, Tensor view);

  // Error naming the tensor and the model path when absent.
  const Tensor& get(const std::string& canonical_name) const;
  const Tensor* find(const std::string& canonical_name) const;
  bool has(const std::string& canonical_name) const { return find(canonical_name) != nullptr; }

  const std::vector<Tensor>& file_tensors() const { return file_tensors_; }
  size_t num_tensors() const { return by_name_.size(); }
  std::vector<std::string> names() const;  // sorted canonical names
  uint64_t file_bytes() const;             // sum of file_tensors() sizes
  const std::string& model_path() const { return model_path_; }
  // Reads every mapping once (progress bar on a terminal) so the first forward
  // pass does not stall on page faults; `residency` picks RAM or the file mapping.
  void load(WeightResidency residency) const;

 private:
  std::string model_path_;
  std::vector<std::shared_ptr<const MappedFile>> mappings_;
  std::vector<std::shared_ptr<const uint8_t[]>> buffers_;
  std::vector<Tensor> file_tensors_;
  std::unordered_map<std::string, Tensor> by_name_;
};

// Checks that every tensor the architecture needs is present with the shape the
// config implies (e.g. token_embd {vocab, hidden}); Error naming the tensor, the
// expected and the actual shape, and the model path.
void check_weights_match_config(const WeightStore& weights, const ModelConfig& config);

// Checks that a config is internally consistent and within sane bounds
// (positive sizes, heads divisible by kv heads, ...). `source` names the file.
void check_model_config(const ModelConfig& config, const std::string& source);

}  // namespace llmesh::model
