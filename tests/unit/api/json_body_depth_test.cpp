// Request bodies nested deeper than kMaxJsonBodyDepth are a 400, not a stack
// overflow further on (found by tests/fuzz/fuzz_api_request: tools[].parameters
// or tool_use input nested 500,000 deep crashed the copy into ordered_json).
#include <gtest/gtest.h>

#include <string>

#include "api/anthropic_request.h"
#include "api/api_error.h"
#include "api/json_fields.h"
#include "api/openai_request.h"

namespace llmesh::api {
namespace {

std::string nested(int depth) { return std::string(size_t(depth), '[') + std::string(size_t(depth), ']'); }

TEST(JsonBodyDepth, DeepBodiesAreRejected) {
  const std::string deep = R"({"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function",
      "function":{"name":"f","parameters":{"type":"object","properties":{"a":)" + nested(500000) + "}}}}]}";
  EXPECT_THROW(parse_json_body(deep), ApiError);
  EXPECT_THROW(parse_ordered_json_body(deep), ApiError);
  try {
    parse_json_body(deep);
  } catch (const ApiError& e) {
    EXPECT_EQ(e.http_status(), 400);
    EXPECT_NE(std::string(e.what()).find("levels deep"), std::string::npos);
  }
}

TEST(JsonBodyDepth, ModerateNestingAndBracketsInStringsAreFine) {
  EXPECT_NO_THROW(parse_json_body(R"({"a":)" + nested(kMaxJsonBodyDepth - 1) + "}"));
  EXPECT_THROW(parse_json_body(R"({"a":)" + nested(kMaxJsonBodyDepth) + "}"), ApiError);
  const std::string brackets(100000, '[');
  EXPECT_NO_THROW(parse_json_body(R"({"a":")" + brackets + R"(\"[[["})"));
  EXPECT_FALSE(json_nesting_exceeds(R"({"s":"\\"})", 1));
}

// A number too large for a double is nlohmann's out_of_range, not a parse_error
// (found by fuzz_api_request: it escaped the parsers as an uncaught exception).
TEST(JsonBodyDepth, NumberOverflowIsA400) {
  for (const char* body : {R"({"model": 1e88888})", R"({"messages": [88888888888888888888e88888]})"}) {
    SCOPED_TRACE(body);
    EXPECT_THROW(parse_json_body(body), ApiError);
    EXPECT_THROW(parse_ordered_json_body(body), ApiError);
  }
}

}  // namespace
}  // namespace llmesh::api
