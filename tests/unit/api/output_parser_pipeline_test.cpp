// Tool-call formats through the whole token -> text path, with the real
// DeepSeek-V3 tokenizer (assets/npm, scripts/fetch_assets.sh). Its tool-call
// markers are single added tokens; some GGUF files type such tokens as
// control (special) tokens, which the decoder skips. The pipeline must still
// hand the parser their text when they are markers the parser acts on.
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/token_text_pipeline.h"
#include "text/tokenizer_json.h"

namespace llmesh::api {

using engine::FinishReason;
using engine::TokenEvent;
using text::AddedToken;
using text::BpeVocab;
using text::OutputDelta;
using text::read_hf_tokenizer_json;
using text::Tokenizer;
using text::ToolCallFormat;

namespace {

const std::string kCallsBegin = "<｜tool▁calls▁begin｜>";
const std::string kCallsEnd = "<｜tool▁calls▁end｜>";
const std::string kCallBegin = "<｜tool▁call▁begin｜>";
const std::string kCallEnd = "<｜tool▁call▁end｜>";
const std::string kSep = "<｜tool▁sep｜>";

std::string deepseek_path() {
  return std::string(LLMESH_SOURCE_DIR) + "/assets/npm/tokenizer-deepseek_v3/models/tokenizer.json";
}

// The DeepSeek-V3 tokenizer with its tool tokens as in the file (not special)
// or typed as control tokens, the way some GGUF conversions store them.
const Tokenizer* deepseek_tokenizer(bool tool_tokens_special) {
  static std::unique_ptr<Tokenizer> loaded[2];
  auto& slot = loaded[tool_tokens_special ? 1 : 0];
  if (!slot && std::filesystem::exists(deepseek_path())) {
    BpeVocab vocab = read_hf_tokenizer_json(deepseek_path());
    for (AddedToken& token : vocab.added_tokens) {
      if (token.content.find("tool▁") != std::string::npos) token.special = tool_tokens_special;
    }
    slot = std::make_unique<Tokenizer>(std::move(vocab));
  }
  return slot.get();
}

OutputDelta run(const Tokenizer& tokenizer, const PipelineOptions& options, const std::string& text) {
  std::vector<int32_t> ids = tokenizer.encode(text, /*parse_special=*/true);
  TokenTextPipeline pipeline(tokenizer, options);
  OutputDelta all;
  for (size_t i = 0; i < ids.size(); ++i) {
    TokenEvent event;
    event.token_id = ids[i];
    if (i + 1 == ids.size()) event.finish_reason = FinishReason::Length;
    all.append(std::move(pipeline.push(event).delta));
  }
  return all;
}

const std::string kOutput = "Checking." + kCallsBegin + kCallBegin + "function" + kSep +
                            "get_weather\n```json\n{\"city\": \"Paris\"}\n```" + kCallEnd + kCallsEnd;

class DeepSeekPipelineTest : public ::testing::TestWithParam<bool> {};

TEST_P(DeepSeekPipelineTest, ToolCallsParsedWhetherMarkersAreSpecialOrNot) {
  const Tokenizer* tokenizer = deepseek_tokenizer(GetParam());
  if (!tokenizer) GTEST_SKIP() << "assets/npm/tokenizer-deepseek_v3 missing (run scripts/fetch_assets.sh)";
  const std::optional<int32_t> call_begin_id = tokenizer->token_id(kCallBegin);
  ASSERT_TRUE(call_begin_id.has_value());
  ASSERT_EQ(tokenizer->is_special(*call_begin_id), GetParam());
  const std::vector<int32_t> ids = tokenizer->encode(kOutput, /*parse_special=*/true);
  ASSERT_NE(std::find(ids.begin(), ids.end(), *call_begin_id), ids.end()) << "the marker is one token";

  PipelineOptions options;
  options.parser.parse_reasoning = false;
  options.parser.parse_tool_calls = true;
  options.parser.tool_call_format = ToolCallFormat::DeepSeekV3;
  const OutputDelta delta = run(*tokenizer, options, kOutput);
  EXPECT_EQ(delta.content, "Checking.");
  ASSERT_EQ(delta.tool_calls.size(), 1u);
  EXPECT_EQ(delta.tool_calls[0].name, "get_weather");
  EXPECT_EQ(nlohmann::json::parse(delta.tool_calls[0].arguments_json), nlohmann::json({{"city", "Paris"}}));
}

TEST_P(DeepSeekPipelineTest, WithoutToolParsingSpecialTokensStayHidden) {
  const Tokenizer* tokenizer = deepseek_tokenizer(GetParam());
  if (!tokenizer) GTEST_SKIP() << "assets/npm/tokenizer-deepseek_v3 missing (run scripts/fetch_assets.sh)";
  PipelineOptions options;
  options.parser.parse_reasoning = false;
  options.parser.parse_tool_calls = false;
  const OutputDelta delta = run(*tokenizer, options, kOutput);
  EXPECT_TRUE(delta.tool_calls.empty());
  if (GetParam()) {
    // Control tokens are not text: the markers vanish, as before this change.
    EXPECT_EQ(delta.content, "Checking.function" + std::string("get_weather\n```json\n{\"city\": \"Paris\"}\n```"));
  } else {
    EXPECT_EQ(delta.content, kOutput);
  }
}

INSTANTIATE_TEST_SUITE_P(ToolTokensSpecial, DeepSeekPipelineTest, ::testing::Bool());

}  // namespace
}  // namespace llmesh::api
