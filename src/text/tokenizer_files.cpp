#include "text/tokenizer_files.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "format/json_util.h"
#include "text/gguf_tokenizer.h"
#include "text/hf_tokenizer_config.h"
#include "text/tokenizer_json.h"

namespace llmesh::text {

namespace fs = std::filesystem;
namespace ju = format::json_util;

namespace {

std::string token_text(const BpeVocab& vocab, int32_t id) {
  return id >= 0 && size_t(id) < vocab.tokens.size() ? vocab.tokens[size_t(id)] : "";
}

}  // namespace

TokenizerFiles open_hf_tokenizer(const std::string& path) {
  const fs::path dir(path);
  TokenizerFiles t;
  const fs::path tokenizer_path = dir / "tokenizer.json";
  check(fs::exists(tokenizer_path), "{}: missing tokenizer.json", path);
  t.vocab = read_hf_tokenizer_json(tokenizer_path.string());

  const fs::path tokenizer_config_path = dir / "tokenizer_config.json";
  if (fs::exists(tokenizer_config_path)) {
    const HfTokenizerConfig tc =
        parse_hf_tokenizer_config(ju::parse_file(tokenizer_config_path.string()), tokenizer_config_path.string());
    t.chat_template = tc.chat_template;
    t.bos_token = tc.bos_token;
    t.eos_token = tc.eos_token;
    if (tc.add_bos_token) t.vocab.add_bos_token = *tc.add_bos_token;
  }
  // Newer checkpoints keep the template in a file of its own (transformers' chat_template.jinja).
  if (const fs::path template_path = dir / "chat_template.jinja";
      t.chat_template.empty() && fs::exists(template_path)) {
    std::ifstream in(template_path, std::ios::binary);
    check(in.good(), "{}: cannot read", template_path.string());
    t.chat_template.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Token ids: the tokenizer's own, else the configured token strings, else config.json's ids.
  BpeVocab& vocab = t.vocab;
  if (vocab.bos_token_id < 0) vocab.bos_token_id = find_token_id(vocab, t.bos_token);
  if (vocab.eos_token_id < 0) vocab.eos_token_id = find_token_id(vocab, t.eos_token);
  const fs::path config_path = dir / "config.json";
  if ((vocab.bos_token_id < 0 || vocab.eos_token_id < 0) && fs::exists(config_path)) {
    const std::string source = config_path.string();
    const ju::Json config = ju::parse_file(source);
    if (config.is_object()) {
      if (vocab.bos_token_id < 0) {
        if (auto id = ju::find_int(config, "bos_token_id", source);
            id && *id >= 0 && size_t(*id) < vocab.tokens.size()) {
          vocab.bos_token_id = int32_t(*id);
        }
      }
      const std::vector<int32_t> config_eos_ids = ju::find_ids(config, "eos_token_id", source);
      if (vocab.eos_token_id < 0 && !config_eos_ids.empty() && size_t(config_eos_ids[0]) < vocab.tokens.size()) {
        vocab.eos_token_id = config_eos_ids[0];
      }
    }
  }
  if (t.bos_token.empty()) t.bos_token = token_text(vocab, vocab.bos_token_id);
  if (t.eos_token.empty()) t.eos_token = token_text(vocab, vocab.eos_token_id);
  if (vocab.eos_token_id >= 0) t.eos_token_ids.push_back(vocab.eos_token_id);
  return t;
}

TokenizerFiles open_tokenizer_files(const std::string& path) {
  std::error_code ec;
  check(fs::exists(path, ec), "{}: no such file or directory", path);
  if (fs::is_directory(path, ec)) return open_hf_tokenizer(path);
  return tokenizer_from_gguf(format::GgufFile::open(path));
}

}  // namespace llmesh::text
