#include "text/tokenizer_json.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "text/pretokenizer.h"

namespace llmesh::text {

namespace {

using nlohmann::json;

json parse_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  check(in.good(), "{}: cannot open the file", path);
  std::string text(static_cast<size_t>(in.tellg()), '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  check(in.good(), "{}: cannot read the file", path);
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    fail("{}: not valid JSON: {}", path, e.what());
  }
}

std::string type_of(const json& node) {
  if (!node.is_object() || !node.contains("type") || !node["type"].is_string()) return "";
  return node["type"].get<std::string>();
}

bool is_nfc_or_noop(const json& normalizer, const std::string& path, bool& nfc) {
  if (normalizer.is_null()) return true;
  const std::string type = type_of(normalizer);
  if (type == "NFC") {
    nfc = true;
    return true;
  }
  if (type == "Sequence") {
    for (const json& inner : normalizer.value("normalizers", json::array())) {
      if (!is_nfc_or_noop(inner, path, nfc)) return false;
    }
    return true;
  }
  return false;
}

void check_byte_level(const json& node, const std::string& path, const char* where) {
  check(!node.value("add_prefix_space", false), "{}: {} ByteLevel with add_prefix_space=true is not supported", path,
        where);
}

// Fills pre_tokenizer_regexes from the pre_tokenizer node.
void read_pre_tokenizer(const json& node, const std::string& path, BpeVocab& vocab) {
  const std::string type = type_of(node);
  std::vector<json> steps;
  if (type == "Sequence") {
    for (const json& step : node.value("pretokenizers", json::array())) steps.push_back(step);
  } else {
    steps.push_back(node);
  }
  check(!steps.empty() && type_of(steps.back()) == "ByteLevel",
        "{}: pre_tokenizer must end with ByteLevel (only byte-level BPE is supported)", path);
  for (size_t i = 0; i + 1 < steps.size(); ++i) {
    const json& step = steps[i];
    check(type_of(step) == "Split", "{}: pre_tokenizer step '{}' is not supported (only Split and ByteLevel)", path,
          type_of(step));
    check(step.value("behavior", "") == "Isolated" && !step.value("invert", false),
          "{}: pre_tokenizer Split must have behavior Isolated and invert false", path);
    const json& pattern = step.value("pattern", json::object());
    check(pattern.contains("Regex") && pattern["Regex"].is_string(), "{}: pre_tokenizer Split needs a Regex pattern",
          path);
    vocab.pre_tokenizer_regexes.push_back(pattern["Regex"].get<std::string>());
  }
  const json& byte_level = steps.back();
  check_byte_level(byte_level, path, "pre_tokenizer");
  if (byte_level.value("use_regex", true)) {
    check(vocab.pre_tokenizer_regexes.empty(),
          "{}: ByteLevel(use_regex=true) after Split steps is not supported", path);
    vocab.pre_tokenizer_regexes = PreTokenizer::patterns_for("gpt2");
  }
  vocab.pre_tokenizer = PreTokenizer::name_of(vocab.pre_tokenizer_regexes);
}

// A TemplateProcessing whose single-sequence template starts with a special token means "add BOS".
void read_post_processor(const json& node, BpeVocab& vocab) {
  const std::string type = type_of(node);
  if (type == "Sequence") {
    for (const json& inner : node.value("processors", json::array())) read_post_processor(inner, vocab);
    return;
  }
  if (type != "TemplateProcessing") return;
  const json& single = node.value("single", json::array());
  if (!single.empty() && single[0].contains("SpecialToken")) {
    vocab.add_bos_token = true;
    const std::string token = single[0]["SpecialToken"].value("id", "");
    const json& specials = node.value("special_tokens", json::object());
    if (specials.contains(token) && !specials[token].value("ids", json::array()).empty()) {
      vocab.bos_token_id = specials[token]["ids"][0].get<int32_t>();
    }
  }
}

// tokenizer_config.json stores a token either as a string or as {"content": ...}.
std::string config_token(const json& config, const char* key) {
  if (!config.contains(key)) return "";
  const json& value = config[key];
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value["content"].is_string()) {
    return value["content"].get<std::string>();
  }
  return "";
}

void read_tokenizer_config(const std::string& path, BpeVocab& vocab) {
  const json config = parse_json_file(path);
  const auto lookup = [&](const char* key) -> int32_t {
    const std::string token = config_token(config, key);
    if (token.empty()) return -1;
    const int32_t id = find_token_id(vocab, token);
    check(id >= 0, "{}: {} '{}' is not in the vocabulary", path, key, token);
    return id;
  };
  if (const int32_t bos = lookup("bos_token"); bos >= 0) vocab.bos_token_id = bos;
  if (const int32_t eos = lookup("eos_token"); eos >= 0) vocab.eos_token_id = eos;
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean()) {
    vocab.add_bos_token = config["add_bos_token"].get<bool>();
  }
}

BpeVocab read_vocab(const std::string& path) {
  const json root = parse_json_file(path);
  check(root.is_object() && root.contains("model"), "{}: no 'model' object (not a tokenizer.json?)", path);
  const json& model = root["model"];
  check(type_of(model) == "BPE", "{}: model.type '{}' is not supported (only BPE)", path, type_of(model));
  check(!model.value("byte_fallback", false), "{}: BPE with byte_fallback is not supported", path);
  check(model.contains("vocab") && model["vocab"].is_object(), "{}: model.vocab must be an object", path);
  check(model.contains("merges") && model["merges"].is_array(), "{}: model.merges must be an array", path);

  BpeVocab vocab;
  int32_t max_id = -1;
  for (const auto& [token, id_node] : model["vocab"].items()) {
    check(id_node.is_number_integer() && id_node.get<int64_t>() >= 0 && id_node.get<int64_t>() < INT32_MAX,
          "{}: model.vocab['{}'] is not a valid id", path, token);
    max_id = std::max(max_id, id_node.get<int32_t>());
  }
  const json& added_tokens = root.value("added_tokens", json::array());
  for (const json& added : added_tokens) {
    check(added.contains("id") && added["id"].is_number_integer() && added.contains("content") &&
              added["content"].is_string(),
          "{}: an added_tokens entry lacks id or content", path);
    AddedToken token;
    token.id = added["id"].get<int32_t>();
    check(token.id >= 0, "{}: added token '{}' has a negative id", path, added["content"].get<std::string>());
    token.content = added["content"].get<std::string>();
    token.special = added.value("special", false);
    max_id = std::max(max_id, token.id);
    vocab.added_tokens.push_back(std::move(token));
  }

  // Model tokens take precedence over added-token contents at the same id.
  vocab.tokens.resize(max_id + 1);
  for (const auto& [token, id_node] : model["vocab"].items()) vocab.tokens[id_node.get<int32_t>()] = token;
  for (const AddedToken& added : vocab.added_tokens) {
    if (vocab.tokens[added.id].empty()) vocab.tokens[added.id] = added.content;
  }

  vocab.merges.reserve(model["merges"].size());
  for (const json& merge : model["merges"]) {
    if (merge.is_string()) {
      const std::string& text = merge.get_ref<const std::string&>();
      const size_t space = text.find(' ', 1);  // byte-level symbols never contain a raw space
      check(space != std::string::npos, "{}: merge '{}' is not of the form 'a b'", path, text);
      vocab.merges.emplace_back(text.substr(0, space), text.substr(space + 1));
    } else {
      check(merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string(),
            "{}: a merge is neither 'a b' nor [a, b]", path);
      vocab.merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    }
  }
  vocab.ignore_merges = model.value("ignore_merges", false);

  bool nfc = false;
  const json normalizer = root.value("normalizer", json());
  check(is_nfc_or_noop(normalizer, path, nfc), "{}: normalizer '{}' is not supported (only none or NFC)", path,
        normalizer.dump().substr(0, 200));
  vocab.normalize_nfc = nfc;

  check(root.contains("pre_tokenizer") && !root["pre_tokenizer"].is_null(), "{}: no pre_tokenizer", path);
  read_pre_tokenizer(root["pre_tokenizer"], path, vocab);

  const json& decoder = root.value("decoder", json());
  check(decoder.is_null() || type_of(decoder) == "ByteLevel", "{}: decoder '{}' is not supported (only ByteLevel)",
        path, type_of(decoder));
  read_post_processor(root.value("post_processor", json()), vocab);

  const std::filesystem::path config_path = std::filesystem::path(path).parent_path() / "tokenizer_config.json";
  if (std::filesystem::exists(config_path)) read_tokenizer_config(config_path.string(), vocab);
  return vocab;
}

}  // namespace

int32_t find_token_id(const BpeVocab& vocab, const std::string& token) {
  if (token.empty()) return -1;
  for (const AddedToken& added : vocab.added_tokens) {
    if (added.content == token) return added.id;
  }
  const auto it = std::find(vocab.tokens.begin(), vocab.tokens.end(), token);
  return it == vocab.tokens.end() ? -1 : static_cast<int32_t>(it - vocab.tokens.begin());
}

BpeVocab read_hf_tokenizer_json(const std::string& path) {
  try {
    return read_vocab(path);
  } catch (const json::exception& e) {  // a field of the wrong JSON type somewhere
    fail("{}: unexpected tokenizer.json structure: {}", path, e.what());
  }
}

}  // namespace llmesh::text
