#include "text/hf_tokenizer_config.h"

#include "core/error.h"

namespace llmesh::text {

namespace ju = format::json_util;

namespace {

// A token given as "text" or {"content": "text", ...}.
std::string token_string(const ju::Json& config, const char* key, const std::string& source) {
  auto it = config.find(key);
  if (it == config.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  check(it->is_object(), "{}: '{}' must be a string or an object with 'content'", source, key);
  return ju::find_string(*it, "content", source).value_or("");
}

}  // namespace

HfTokenizerConfig parse_hf_tokenizer_config(const ju::Json& config, const std::string& source) {
  check(config.is_object(), "{}: tokenizer_config.json must be a JSON object", source);
  HfTokenizerConfig out;
  auto tmpl = config.find("chat_template");
  if (tmpl != config.end() && !tmpl->is_null()) {
    if (tmpl->is_string()) {
      out.chat_template = tmpl->get<std::string>();
    } else {
      check(tmpl->is_array(), "{}: chat_template must be a string or a list of {{name, template}}", source);
      bool found = false;
      for (const ju::Json& entry : *tmpl) {
        check(entry.is_object(), "{}: chat_template list entries must be objects", source);
        if (ju::find_string(entry, "name", source) == "default") {
          out.chat_template = ju::get_string(entry, "template", source);
          found = true;
        }
      }
      check(found, "{}: chat_template list has no entry named 'default'", source);
    }
  }
  out.bos_token = token_string(config, "bos_token", source);
  out.eos_token = token_string(config, "eos_token", source);
  out.add_bos_token = ju::find_bool(config, "add_bos_token", source);
  return out;
}

}  // namespace llmesh::text
