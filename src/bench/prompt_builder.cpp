#include "bench/prompt_builder.h"

#include <filesystem>
#include <random>

#include "core/error.h"
#include "text/tokenizer_files.h"
#include "text/tokenizer_json.h"

namespace llmesh::bench {

namespace fs = std::filesystem;

std::shared_ptr<const text::Tokenizer> load_tokenizer(const std::string& path) {
  check(fs::exists(path), "tokenizer {}: no such file or folder", path);
  if (path.ends_with(".json")) return std::make_shared<text::Tokenizer>(text::read_hf_tokenizer_json(path));
  if (fs::is_directory(path) && fs::exists(fs::path(path) / "tokenizer.json") &&
      !fs::exists(fs::path(path) / "config.json"))
    return std::make_shared<text::Tokenizer>(
        text::read_hf_tokenizer_json((fs::path(path) / "tokenizer.json").string()));
  // A model: its tokenizer files only (a .gguf file's metadata; no weights are mapped into a model).
  return std::make_shared<text::Tokenizer>(text::open_tokenizer_files(path).vocab);
}

namespace {

bool is_plain_word(std::string_view s) {
  if (s.size() < 3 || s.size() > 10) return false;
  for (char c : s)
    if (c < 'a' || c > 'z') return false;
  return true;
}

}  // namespace

PromptBuilder::PromptBuilder(std::shared_ptr<const text::Tokenizer> tokenizer, std::string corpus_text)
    : tokenizer_(std::move(tokenizer)) {
  check(tokenizer_ != nullptr, "PromptBuilder: no tokenizer");
  const text::Tokenizer& tok = *tokenizer_;
  for (int32_t id = 0; id < tok.vocab_size() && spaced_words_.size() < 4096; ++id) {
    if (tok.is_added(id)) continue;
    const std::string bytes = tok.token_bytes(id);
    if (bytes.size() < 4 || bytes[0] != ' ' || !is_plain_word(std::string_view(bytes).substr(1))) continue;
    // Only words whose own encoding is this one token (BPE may not reach every vocab entry).
    if (tok.encode(bytes, false).size() != 1) continue;
    spaced_words_.push_back(bytes);
    const std::string bare = bytes.substr(1);
    if (tok.encode(bare, false).size() == 1) bare_words_.push_back(bare);
  }
  check(spaced_words_.size() >= 64 && !bare_words_.empty(),
        "the tokenizer has too few whole-word tokens ({}) to build prompts; pass --corpus FILE", spaced_words_.size());
  if (!corpus_text.empty()) {
    corpus_ids_ = tok.encode(corpus_text, false);
    check(corpus_ids_.size() >= 16, "--corpus: the corpus has only {} tokens", corpus_ids_.size());
  }
}

std::string PromptBuilder::words_text(int64_t num_words, uint64_t seed, bool leading_word_bare) const {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
  std::string text;
  text.reserve(static_cast<size_t>(num_words) * 8);
  for (int64_t i = 0; i < num_words; ++i) {
    if (i == 0 && leading_word_bare)
      text += bare_words_[rng() % bare_words_.size()];
    else
      text += spaced_words_[rng() % spaced_words_.size()];
  }
  return text;
}

std::string PromptBuilder::corpus_text_of_tokens(int64_t num_tokens, uint64_t seed) const {
  const size_t n = corpus_ids_.size();
  const size_t start = static_cast<size_t>((seed * 0x9E3779B97F4A7C15ull) % n);
  int64_t take = num_tokens;
  std::string text;
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::vector<int32_t> ids(static_cast<size_t>(std::max<int64_t>(take, 1)));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = corpus_ids_[(start + i) % n];
    text = tokenizer_->decode(ids);
    const int64_t got = count_tokens(text);
    if (got <= num_tokens) break;
    take -= got - num_tokens;  // merges across the window's edges: shrink and retry
  }
  // Pad with whole words (one token each) up to the count, and trim if still over.
  int64_t got = count_tokens(text);
  if (got < num_tokens) text += words_text(num_tokens - got, seed, false);
  got = count_tokens(text);
  while (got > num_tokens && !text.empty()) {
    text.pop_back();
    got = count_tokens(text);
  }
  return text;
}

std::string PromptBuilder::text_of_tokens(int64_t num_tokens, uint64_t seed) const {
  check(num_tokens >= 1, "a prompt needs at least one token (asked for {})", num_tokens);
  std::string text = corpus_ids_.empty() ? words_text(num_tokens, seed, true) : corpus_text_of_tokens(num_tokens, seed);
  const int64_t got = count_tokens(text);
  check(got == num_tokens, "could not build a text of exactly {} tokens (got {}); try --corpus", num_tokens, got);
  return text;
}

int64_t PromptBuilder::count_tokens(std::string_view text) const {
  return static_cast<int64_t>(tokenizer_->encode(text, false).size());
}

}  // namespace llmesh::bench
