// A parsed Jinja template, rendered the way HF transformers renders chat
// templates with Python jinja2 (trim_blocks and lstrip_blocks on, the
// loopcontrols extension, default Undefined, HF's tojson/raise_exception/
// strftime_now). Output is meant to be byte-identical to that reference;
// tests/golden/templates/ checks it against real model templates.
//
// Supported: {{ }}, {% %}, {# #}, whitespace control, if/elif/else, for
// (loop.*, else, `if` filter, unpacking, break/continue), set (namespace
// attributes, block set), macro/call, filter blocks, HF's {% generation %},
// the common filters, tests, str/list/dict methods and Python operators.
// Anything else (include/extends/import, recursive loops, ...) is an Error
// naming the template line and the construct.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace llmesh::text::jinja {

struct Stmt;

// What one render may do, so that a hostile or broken template ends in an
// Error naming the limit instead of hanging or exhausting memory. Real chat
// templates stay far below these (a conversation is rendered in one pass over
// its messages). Nesting is bounded too: blocks and expressions by the parser
// (200 levels), macro recursion by the interpreter (256 calls deep).
struct RenderLimits {
  // for-loop iterations (a loop's items are counted when it starts) plus macro
  // and caller() calls, over the whole render.
  int64_t max_iterations = 1'000'000;
  // The rendered text, and any string the template computes (a `set` block,
  // a `~` / `+` / `*` / replace / indent / format result, ...).
  int64_t max_output_bytes = int64_t{64} << 20;
  // Items in any list the template computes (a `+` or `*` result, ...).
  int64_t max_list_items = int64_t{1} << 20;
};

class Template {
 public:
  // Parses; throws llmesh::Error "<name> line N: ..." on syntax errors.
  explicit Template(std::string source, std::string name = "chat_template");
  ~Template();
  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;

  // Renders with `context` (a JSON object) as the template's variables.
  // Throws llmesh::Error "<name> line N: ..." on runtime errors (including
  // raise_exception(message)) and unsupported constructs. Thread-safe.
  std::string render(const nlohmann::json& context) const;
  // Same, keeping the context's key order (what tojson prints for dicts).
  std::string render(const nlohmann::ordered_json& context) const;

  const std::string& name() const { return name_; }

  // Replaces the default RenderLimits (set it before rendering from other threads).
  void set_limits(const RenderLimits& limits) { limits_ = limits; }
  const RenderLimits& limits() const { return limits_; }

 private:
  struct Parsed;
  std::string name_;
  RenderLimits limits_;
  std::unique_ptr<Parsed> parsed_;
};

}  // namespace llmesh::text::jinja
