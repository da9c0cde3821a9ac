// Streaming checks shared by the OutputParser tests: random cuts of a text, and the same
// parse whatever the cuts.
#pragma once

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "text/output_parser.h"

namespace llmesh::test {

// Random cut points, pieces of 0..max_piece bytes: empty pieces too, and cuts inside UTF-8 characters.
inline std::vector<std::string> random_split(const std::string& text, std::mt19937& rng, int max_piece = 9) {
  std::vector<std::string> pieces;
  std::uniform_int_distribution<int> piece_size(0, max_piece);
  for (size_t pos = 0; pos < text.size();) {
    const size_t n = std::min(text.size() - pos, size_t(piece_size(rng)));
    pieces.push_back(text.substr(pos, n));
    pos += n;
  }
  return pieces;
}

inline void expect_same(const text::OutputDelta& expected, const text::OutputDelta& actual, const std::string& what) {
  EXPECT_EQ(actual.reasoning, expected.reasoning) << what;
  EXPECT_EQ(actual.content, expected.content) << what;
  ASSERT_EQ(actual.tool_calls.size(), expected.tool_calls.size()) << what;
  for (size_t i = 0; i < expected.tool_calls.size(); ++i) {
    EXPECT_EQ(actual.tool_calls[i].name, expected.tool_calls[i].name) << what;
    EXPECT_EQ(actual.tool_calls[i].arguments_json, expected.tool_calls[i].arguments_json) << what;
  }
}

}  // namespace llmesh::test
