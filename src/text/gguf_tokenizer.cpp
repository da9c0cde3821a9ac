#include "text/gguf_tokenizer.h"

#include <algorithm>

#include "core/error.h"

namespace llmesh::text {

namespace {

// llama.cpp token types (tokenizer.ggml.token_type).
enum GgufTokenType : int64_t { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

bool is_end_of_turn_marker(const std::string& token) {
  static const char* const kMarkers[] = {"<|eot_id|>",    "<|eom_id|>", "<|end_of_text|>", "<|im_end|>",
                                         "<|endoftext|>", "<|end|>",    "<end_of_turn>"};
  return std::find(std::begin(kMarkers), std::end(kMarkers), token) != std::end(kMarkers);
}

int32_t token_id_in_range(int64_t id, size_t num_tokens, const std::string& key, const std::string& source) {
  check(id >= 0 && uint64_t(id) < num_tokens, "{}: {} = {} is outside the vocabulary of {} tokens", source, key, id,
        num_tokens);
  return int32_t(id);
}

}  // namespace

BpeVocab read_gguf_vocab(const format::GgufFile& gguf) {
  const std::string& source = gguf.path();
  BpeVocab vocab;
  const std::string model = gguf.get_string("tokenizer.ggml.model");
  check(model == "gpt2", "{}: unsupported tokenizer model '{}' (llmesh reads byte-level BPE, 'gpt2')", source, model);
  const std::string pre = gguf.find_string("tokenizer.ggml.pre").value_or("default");
  vocab.pre_tokenizer = pre == "llama-bpe" ? "llama3" : pre == "default" ? "gpt2" : pre;
  vocab.ignore_merges = vocab.pre_tokenizer == "llama3";

  vocab.tokens = gguf.get_string_array("tokenizer.ggml.tokens");
  check(!vocab.tokens.empty(), "{}: tokenizer.ggml.tokens is empty", source);
  check(vocab.tokens.size() <= size_t(INT32_MAX), "{}: too many tokens", source);
  if (gguf.has("tokenizer.ggml.token_type")) {
    const std::vector<int64_t> types = gguf.get_int_array("tokenizer.ggml.token_type");
    check(types.size() == vocab.tokens.size(), "{}: tokenizer.ggml.token_type has {} entries for {} tokens", source,
          types.size(), vocab.tokens.size());
    for (size_t id = 0; id < types.size(); ++id) {
      if (types[id] == kControl || types[id] == kUserDefined) {
        vocab.added_tokens.push_back({int32_t(id), vocab.tokens[id], types[id] == kControl});
      }
    }
  }

  if (gguf.has("tokenizer.ggml.merges")) {
    const std::vector<std::string>& merges = gguf.get_string_array("tokenizer.ggml.merges");
    vocab.merges.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); ++i) {
      const size_t space = merges[i].find(' ');
      check(space != std::string::npos && space > 0 && space + 1 < merges[i].size(),
            "{}: tokenizer.ggml.merges[{}] '{}' is not two symbols separated by a space", source, i, merges[i]);
      vocab.merges.emplace_back(merges[i].substr(0, space), merges[i].substr(space + 1));
    }
  }
  check(!vocab.merges.empty(), "{}: byte-level BPE needs tokenizer.ggml.merges", source);

  const size_t n = vocab.tokens.size();
  if (auto bos = gguf.find_int("tokenizer.ggml.bos_token_id")) {
    vocab.bos_token_id = token_id_in_range(*bos, n, "tokenizer.ggml.bos_token_id", source);
  }
  if (auto eos = gguf.find_int("tokenizer.ggml.eos_token_id")) {
    vocab.eos_token_id = token_id_in_range(*eos, n, "tokenizer.ggml.eos_token_id", source);
  }
  // llama.cpp adds BOS by default for Llama 3 vocabularies; the key overrides.
  vocab.add_bos_token = gguf.find_bool("tokenizer.ggml.add_bos_token").value_or(vocab.pre_tokenizer == "llama3");
  check(!vocab.add_bos_token || vocab.bos_token_id >= 0, "{}: add_bos_token is set but there is no bos_token_id",
        source);
  return vocab;
}

TokenizerFiles tokenizer_from_gguf(const format::GgufFile& gguf) {
  const std::string& source = gguf.path();
  TokenizerFiles t;
  t.vocab = read_gguf_vocab(gguf);
  const BpeVocab& vocab = t.vocab;
  t.chat_template = gguf.find_string("tokenizer.chat_template").value_or("");
  if (vocab.bos_token_id >= 0) t.bos_token = vocab.tokens[size_t(vocab.bos_token_id)];
  if (vocab.eos_token_id >= 0) t.eos_token = vocab.tokens[size_t(vocab.eos_token_id)];

  std::vector<int32_t>& eos_ids = t.eos_token_ids;
  const size_t n = vocab.tokens.size();
  if (vocab.eos_token_id >= 0) eos_ids.push_back(vocab.eos_token_id);
  auto add_eos = [&](int32_t token) {
    if (std::find(eos_ids.begin(), eos_ids.end(), token) == eos_ids.end()) eos_ids.push_back(token);
  };
  for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
    if (auto id = gguf.find_int(key)) add_eos(token_id_in_range(*id, n, key, source));
  }
  // GGUF carries a single eos id, while HF generation_config lists every turn
  // terminator; like llama.cpp, treat the well-known end-of-turn control tokens
  // as end of generation too, so both formats stop on the same tokens.
  for (const AddedToken& added : vocab.added_tokens) {
    if (added.special && is_end_of_turn_marker(added.content)) add_eos(added.id);
  }
  return t;
}

}  // namespace llmesh::text
