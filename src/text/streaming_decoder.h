// Turns a stream of token ids into text pieces that never split a UTF-8
// character, for streaming responses (SSE deltas must be valid UTF-8, and one
// character such as an emoji often spans several byte-level tokens).
//
// Guarantee: for ids whose decode() is valid UTF-8, the pieces returned by
// push() and flush() concatenate to exactly decode(ids, skip_special), and each
// piece is valid UTF-8. Bytes that can never become valid (e.g. a stray
// continuation byte) are replaced by U+FFFD as soon as that is certain, one
// U+FFFD per maximal invalid subpart; flush() replaces a truncated tail.
#pragma once

#include <cstdint>
#include <string>

#include "text/tokenizer.h"

namespace llmesh::text {

class StreamingDecoder {
 public:
  explicit StreamingDecoder(const Tokenizer& tokenizer, bool skip_special = false);

  // The complete characters now available (maybe ""). Ids outside the vocabulary add nothing.
  std::string push(int32_t id);
  // At the end of the stream: the held-back bytes, an incomplete tail replaced by U+FFFD.
  std::string flush();

  // Bytes held back because they may be the start of a character (at most 3).
  size_t num_pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::string pending_;
};

}  // namespace llmesh::text
