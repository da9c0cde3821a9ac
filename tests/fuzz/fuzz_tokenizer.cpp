// libFuzzer target: the byte-level BPE tokenizer on arbitrary bytes. A small
// vocabulary is built here (the 256 byte tokens, merges of common English
// pieces, chat-template added tokens both special and not), once per
// pre-tokenizer (qwen2 with NFC, llama3 with ignore_merges, deepseek-v3, gpt2),
// so the target needs no files. Input: byte 0 picks the pre-tokenizer (bits
// 0-1) and parse_special (bit 2); the rest is the text. Checks:
// decode(encode(s)) == s where the tokenizer does not normalize (the header's
// promise, for any bytes), and the StreamingDecoder's pieces concatenate to
// decode(ids) when that is valid UTF-8, each piece valid UTF-8.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "text/bpe_vocab.h"
#include "text/byte_level.h"
#include "text/streaming_decoder.h"
#include "text/tokenizer.h"
#include "text/utf8.h"

namespace {

using namespace llmesh::text;

Tokenizer make_tokenizer(const std::string& pre_tokenizer) {
  BpeVocab vocab;
  for (int b = 0; b < 256; ++b) vocab.tokens.push_back(byte_level::encode(std::string(1, char(b))));
  // Merges in rank order, each joining two existing tokens (byte-level form: "Ġ" is a space).
  const char* merges[][2] = {{"t", "h"}, {"th", "e"}, {"Ġ", "t"}, {"Ġt", "he"}, {"i", "n"}, {"in", "g"},
                             {"Ġ", "a"}, {"e", "r"}, {"o", "n"},  {"Ġ", "the"}, {"r", "e"}, {"Ġ", "i"},
                             {"a", "n"}, {"an", "d"}, {"Ġ", "and"}, {"Ċ", "Ċ"}, {"Ġ", "Ġ"}, {"ĠĠ", "ĠĠ"},
                             {"{", "\""}, {"\"", ":"}, {"Ã", "©"}, {"ä", "½"}};
  for (const auto& merge : merges) {
    vocab.merges.emplace_back(merge[0], merge[1]);
    vocab.tokens.push_back(std::string(merge[0]) + merge[1]);
  }
  const std::pair<const char*, bool> added[] = {{"<|im_start|>", true}, {"<|im_end|>", true},
                                                {"<|endoftext|>", true}, {"<think>", false},
                                                {"</think>", false},     {"<tool_call>", false},
                                                {"</tool_call>", false}, {"<|python_tag|>", true}};
  for (const auto& [content, special] : added) {
    vocab.added_tokens.push_back({int32_t(vocab.tokens.size()), content, special});
    vocab.tokens.push_back(content);
  }
  vocab.pre_tokenizer = pre_tokenizer;
  vocab.bos_token_id = vocab.added_tokens[2].id;
  vocab.eos_token_id = vocab.added_tokens[1].id;
  return Tokenizer(std::move(vocab));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kPreTokenizers[] = {"qwen2", "llama3", "deepseek-v3", "gpt2"};
  static std::vector<Tokenizer>* tokenizers = [] {
    auto* list = new std::vector<Tokenizer>();
    for (const char* name : kPreTokenizers) list->push_back(make_tokenizer(name));
    return list;
  }();
  const Tokenizer& tokenizer = (*tokenizers)[data[0] & 3];
  const bool parse_special = data[0] & 4;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);

  const std::vector<int32_t> ids = tokenizer.encode(text, parse_special);
  const std::string decoded = tokenizer.decode(ids);
  if (!tokenizer.normalizes_nfc() && decoded != text) {
    std::fprintf(stderr, "decode(encode(s)) != s (%zu bytes in, %zu out)\n", text.size(), decoded.size());
    std::abort();
  }
  for (int32_t id : ids) {
    if (id < 0 || id >= tokenizer.vocab_size()) {
      std::fprintf(stderr, "encode returned id %d outside the vocabulary\n", id);
      std::abort();
    }
    (void)tokenizer.token_bytes(id);
  }
  for (const bool skip_special : {false, true}) {
    StreamingDecoder decoder(tokenizer, skip_special);
    std::string streamed;
    for (int32_t id : ids) {
      const std::string piece = decoder.push(id);
      if (!utf8::is_valid(piece)) {
        std::fprintf(stderr, "StreamingDecoder returned invalid UTF-8\n");
        std::abort();
      }
      streamed += piece;
    }
    streamed += decoder.flush();
    const std::string expected = tokenizer.decode(ids, skip_special);
    if (utf8::is_valid(expected) && streamed != expected) {
      std::fprintf(stderr, "StreamingDecoder pieces differ from decode()\n");
      std::abort();
    }
  }
  (void)tokenizer.encode(text, !parse_special);
  return 0;
}
