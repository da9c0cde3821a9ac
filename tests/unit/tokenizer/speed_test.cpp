// Prints encode speed on ~1 MB of English-like prose, CJK and code (not asserted:
// the brief's floor is 1 MB/s; timings on shared CI machines are noisy).
#include <chrono>
#include <random>

#include "tokenizer_assets.h"

namespace llmesh {

using text::Tokenizer;

namespace {

std::string english_text(size_t num_bytes) {
  static const char* kWords[] = {"the", "of", "and", "to", "in", "is", "was", "request", "server", "latency",
                                 "tokenizer", "we", "don't", "it's", "model", "cache", "prefix", "with", "for",
                                 "because", "through", "Claude", "agent", "tool", "call", "result", "file",
                                 "function", "returns", "value", "error", "handling", "2024", "42", "3.14"};
  std::mt19937 rng(1);
  std::string text;
  while (text.size() < num_bytes) {
    text += kWords[rng() % std::size(kWords)];
    const unsigned r = rng() % 20;
    text += r == 0 ? ".\n\n" : r == 1 ? ", " : r == 2 ? ". " : " ";
  }
  return text;
}

std::string cjk_text(size_t num_bytes) {
  std::mt19937 rng(2);
  std::string text;
  while (text.size() < num_bytes) {
    const char32_t cp = rng() % 10 == 0 ? U'，' : 0x4E00 + rng() % 3000;
    // UTF-8 of a BMP code point (3 bytes)
    text += static_cast<char>(0xE0 | (cp >> 12));
    text += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    text += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return text;
}

std::string code_text(size_t num_bytes) {
  const std::string snippet =
      "    for (int i = 0; i < num_tokens; ++i) {\n        if (ids[i] == eos_id) return Status::kDone;\n"
      "        total_bytes += pieces[i].size();  // count bytes\n    }\n";
  std::string text;
  for (int n = 0; text.size() < num_bytes; ++n) text += snippet + "// line " + std::to_string(n) + "\n";
  return text;
}

double megabytes_per_second(const Tokenizer& tokenizer, const std::string& text, size_t& num_tokens) {
  const auto start = std::chrono::steady_clock::now();
  num_tokens = tokenizer.encode(text).size();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return text.size() / 1e6 / seconds;
}

TEST(TokenizerSpeed, PrintsEncodeThroughput) {
  const size_t kBytes = 1 << 20;
  const std::pair<const char*, std::string> corpora[] = {
      {"english", english_text(kBytes)}, {"cjk", cjk_text(kBytes)}, {"code", code_text(kBytes)}};
  for (const char* name : {"qwen3", "llama3_1", "deepseek_v3"}) {
    if (!test::has_asset(name)) continue;
    const auto load_start = std::chrono::steady_clock::now();
    const Tokenizer& tokenizer = test::asset_tokenizer(name);
    const double load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    std::printf("[speed] %-12s load %.2f s (0 if loaded by an earlier test)\n", name, load_seconds);
    for (const auto& [corpus, text] : corpora) {
      size_t num_tokens = 0;
      const double first = megabytes_per_second(tokenizer, text, num_tokens);
      const double again = megabytes_per_second(tokenizer, text, num_tokens);
      std::printf("[speed] %-12s %-8s %.2f MB -> %zu tokens: %.1f MB/s first pass, %.1f MB/s with warm cache\n", name,
                  corpus, text.size() / 1e6, num_tokens, first, again);
      EXPECT_GT(num_tokens, 0u);
    }
  }
}

}  // namespace
}  // namespace llmesh

namespace llmesh {
namespace {

// Inputs that would be quadratic in a naive BPE or regex: one 100 KB word, a
// 100 KB whitespace run. They must round-trip; the time is printed.
TEST(TokenizerSpeed, PathologicalInputsRoundTrip) {
  LLMESH_REQUIRE_TOKENIZER_ASSET("llama3_1");
  const Tokenizer& tokenizer = test::asset_tokenizer("llama3_1");
  std::mt19937 rng(3);
  std::string random_letters(100000, 'a');
  for (char& c : random_letters) c = static_cast<char>('a' + rng() % 26);
  std::string space_newlines;
  while (space_newlines.size() < 100000) space_newlines += " \n\t ";
  const std::pair<const char*, std::string> inputs[] = {{"100K 'a'", std::string(100000, 'a')},
                                                        {"100K random letters", random_letters},
                                                        {"100K spaces", std::string(100000, ' ')},
                                                        {"100K mixed whitespace", space_newlines},
                                                        {"100K digits", std::string(100000, '7')}};
  for (const auto& [name, text] : inputs) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int32_t> ids = tokenizer.encode(text);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("[speed] llama3_1 %-22s -> %zu tokens in %.3f s\n", name, ids.size(), seconds);
    EXPECT_EQ(tokenizer.decode(ids), text) << name;
  }
}

}  // namespace
}  // namespace llmesh
