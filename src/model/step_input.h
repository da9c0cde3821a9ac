// What one forward step computes: a flattened batch, as plain data.
//
// Every array is a flat vector of integers (block tables in CSR form), so a
// step can be serialized as is and broadcast to other ranks, copied to a
// device, or logged and replayed. Filled by the engine's executor from the
// scheduled batch; read by Model::forward.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace llmesh::model {

struct StepInput {
  std::vector<int32_t> token_ids;           // [T] input token of each row
  std::vector<int32_t> positions;           // [T] its position within its own sequence
  std::vector<int32_t> seq_index;           // [T] which sequence (index into the block tables) it belongs to
  std::vector<int64_t> slot_mapping;        // [T] where its K/V go: block_id * block_size + offset
  std::vector<int32_t> block_table_offsets; // [S + 1] sequence s's blocks are block_ids[offsets[s], offsets[s+1])
  std::vector<int32_t> block_ids;           // [offsets[S]] pool blocks of positions [j*bs, (j+1)*bs), per sequence
  std::vector<int32_t> logits_indices;      // [L] rows whose next-token logits are wanted

  int64_t num_tokens() const { return int64_t(token_ids.size()); }
  int64_t num_sequences() const { return block_table_offsets.empty() ? 0 : int64_t(block_table_offsets.size()) - 1; }
  // Sequence s's block table.
  std::span<const int32_t> block_table(int64_t s) const {
    return {block_ids.data() + block_table_offsets[size_t(s)],
            size_t(block_table_offsets[size_t(s) + 1] - block_table_offsets[size_t(s)])};
  }
  // Starts a new sequence whose block table is `blocks`; its rows follow.
  void add_sequence(std::span<const int32_t> blocks) {
    if (block_table_offsets.empty()) block_table_offsets.push_back(0);
    block_ids.insert(block_ids.end(), blocks.begin(), blocks.end());
    block_table_offsets.push_back(int32_t(block_ids.size()));
  }
  void clear() {
    token_ids.clear(), positions.clear(), seq_index.clear(), slot_mapping.clear();
    block_table_offsets.clear(), block_ids.clear(), logits_indices.clear();
  }
  bool operator==(const StepInput&) const = default;
};

// A self-describing little-endian byte string (magic, version, array lengths,
// arrays) and back. deserialize throws Error on a truncated or inconsistent
// buffer (lengths that disagree, an index out of range), never reads past it.
std::string serialize(const StepInput& input);
StepInput deserialize_step_input(std::string_view bytes);

}  // namespace llmesh::model
