#include "text/streaming_decoder.h"

#include "text/utf8.h"

namespace llmesh::text {

StreamingDecoder::StreamingDecoder(const Tokenizer& tokenizer, bool skip_special)
    : tokenizer_(tokenizer), skip_special_(skip_special) {}

std::string StreamingDecoder::push(int32_t id) {
  if (id < 0 || id >= tokenizer_.vocab_size()) return "";
  if (skip_special_ && tokenizer_.is_special(id)) return "";
  pending_ += tokenizer_.token_bytes(id);
  const size_t complete = utf8::complete_prefix_length(pending_);
  if (complete == 0) return "";
  std::string out = utf8::replace_invalid(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return out;
}

std::string StreamingDecoder::flush() {
  std::string out = utf8::replace_invalid(pending_);
  pending_.clear();
  return out;
}

}  // namespace llmesh::text
