// Request parts a client sent that this server does not act on, reported
// instead of refused. Agent clients are often ahead of us (Codex sends input
// items of type `additional_tools`, Claude Code blocks and fields added each
// release): what the model need not see is ignored, logged once per kind per
// process, and listed in the x-llmesh-ignored-request-parts response header.
// What it would have to see to answer correctly (an image, a content part of
// an unknown type) stays a 400 naming it: ignoring it would answer a
// different question.
//
// Each protocol parser names what it ignores ("field 'service_tier'",
// "input item type 'additional_tools'"); docs/serve.md lists both sets.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace llmesh::api {

// The response header listing what a request's parser ignored (comma-separated).
inline constexpr const char* kIgnoredPartsHeader = "x-llmesh-ignored-request-parts";

class IgnoredParts {
 public:
  // Records one ignored kind for this request (once; made printable and
  // bounded), and logs it the first time any request of `endpoint` ignores it.
  void add(std::string_view endpoint, std::string_view kind);
  const std::vector<std::string>& kinds() const { return kinds_; }
  bool empty() const { return kinds_.empty(); }

 private:
  std::vector<std::string> kinds_;
};

// Top-level members of `body` not among `known`: each becomes "field 'NAME'".
template <typename Json>
void add_unknown_fields(const Json& body, std::initializer_list<std::string_view> known, std::string_view endpoint,
                        IgnoredParts& ignored) {
  for (auto it = body.begin(); it != body.end(); ++it) {
    bool is_known = false;
    for (std::string_view k : known) is_known = is_known || it.key() == k;
    if (!is_known) ignored.add(endpoint, "field '" + std::string(it.key()) + "'");
  }
}

// A comma-separated list made header-safe (printable ASCII) and bounded, for
// the x-llmesh-* headers that list names.
std::string header_list_value(const std::vector<std::string>& entries);

}  // namespace llmesh::api
