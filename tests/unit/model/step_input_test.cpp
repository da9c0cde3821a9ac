// StepInput is plain data: it round-trips through its serialized form byte
// for byte, and a damaged buffer is refused with an Error, never read past.
#include "model/step_input.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace llmesh {

using model::deserialize_step_input;
using model::StepInput;

namespace {

// Two sequences: a 3-token prefill chunk at positions 16..18 (blocks 7, 2) and
// one decode token at position 5 (block 4); both sample.
StepInput two_sequences() {
  StepInput s;
  const int32_t blocks_a[] = {7, 2}, blocks_b[] = {4};
  s.add_sequence(blocks_a);
  for (int32_t p = 16; p < 19; ++p) {
    s.token_ids.push_back(100 + p);
    s.positions.push_back(p);
    s.seq_index.push_back(0);
    s.slot_mapping.push_back(2 * 16 + (p - 16));
  }
  s.logits_indices.push_back(2);
  s.add_sequence(blocks_b);
  s.token_ids.push_back(9);
  s.positions.push_back(5);
  s.seq_index.push_back(1);
  s.slot_mapping.push_back(4 * 16 + 5);
  s.logits_indices.push_back(3);
  return s;
}

TEST(StepInput, CsrBlockTables) {
  const StepInput s = two_sequences();
  EXPECT_EQ(s.num_sequences(), 2);
  EXPECT_EQ(s.block_table_offsets, (std::vector<int32_t>{0, 2, 3}));
  EXPECT_EQ(std::vector<int32_t>(s.block_table(0).begin(), s.block_table(0).end()), (std::vector<int32_t>{7, 2}));
  EXPECT_EQ(std::vector<int32_t>(s.block_table(1).begin(), s.block_table(1).end()), (std::vector<int32_t>{4}));
}

TEST(StepInput, RoundTripsByteForByte) {
  const StepInput s = two_sequences();
  const std::string bytes = serialize(s);
  const StepInput back = deserialize_step_input(bytes);
  EXPECT_EQ(back, s);
  EXPECT_EQ(serialize(back), bytes);
  EXPECT_EQ(deserialize_step_input(serialize(StepInput{})), StepInput{});
}

TEST(StepInput, DamagedBuffersAreRefused) {
  const std::string bytes = serialize(two_sequences());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(deserialize_step_input(std::string_view(bytes).substr(0, n)), Error) << "truncated to " << n;
  }
  EXPECT_THROW(deserialize_step_input(bytes + "x"), Error);
  std::string bad_magic = bytes;
  bad_magic[0] = 'X';
  EXPECT_THROW(deserialize_step_input(bad_magic), Error);
  StepInput bad_index = two_sequences();
  bad_index.seq_index[3] = 2;  // only 2 sequences
  EXPECT_THROW(deserialize_step_input(serialize(bad_index)), Error);
  StepInput bad_row = two_sequences();
  bad_row.logits_indices[1] = 4;  // only 4 tokens
  EXPECT_THROW(deserialize_step_input(serialize(bad_row)), Error);
}

}  // namespace
}  // namespace llmesh
