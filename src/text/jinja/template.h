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

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace llmesh::text::jinja {

struct Stmt;

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

 private:
  struct Parsed;
  std::string name_;
  std::unique_ptr<Parsed> parsed_;
};

}  // namespace llmesh::text::jinja
