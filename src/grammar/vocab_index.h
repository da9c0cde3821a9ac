// The tokenizer's vocabulary as a byte trie, built once per tokenizer and
// shared by every constrained request on it.
//
// Nodes are stored in preorder with the index just past each subtree, so a
// walk that finds a dead prefix skips the whole subtree in one jump:
//
//
// Special (control) tokens are left out: a grammar never produces them (the
// engine alone decides about end-of-sequence). Non-special added tokens such
// as Qwen's <tool_call> and <think> are in, matched by their text.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace llmesh::grammar {

struct VocabIndex {
  struct Node {
    int32_t skip;    // the first node after this one's subtree
    int32_t token;   // the token ending here, -1 when none
    uint16_t depth;  // 1 = a token's first byte
    uint8_t byte;
  };
  std::vector<Node> nodes;                                    // [num_nodes] preorder
  std::vector<std::pair<int32_t, int32_t>> duplicate_tokens;  // (node, token id) when two tokens share bytes
  std::vector<std::string> token_bytes;  // [vocab_size] bytes of each token; empty for special tokens
  int32_t vocab_size = 0;                // the tokenizer's; logits beyond it are never allowed
  int32_t max_depth = 0;

  int32_t num_nodes() const { return int32_t(nodes.size()); }

  explicit VocabIndex(const text::Tokenizer& tokenizer);

  // Built on first use for this tokenizer and kept for the process lifetime
  // (keyed by address: a server loads its tokenizer once).
  static std::shared_ptr<const VocabIndex> for_tokenizer(const text::Tokenizer& tokenizer);
};

}  // namespace llmesh::grammar
