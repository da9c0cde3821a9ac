// `llmesh tokenize`: the model's tokenizer on a piece of text.
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/llmesh/commands.h"
#include "runtime/model_file_set.h"
#include "text/tokenizer.h"

namespace llmesh::app {

namespace {

struct TokenizeOptions {
  std::string model_path;
  std::string text;
  bool no_special = false;
  bool json = false;
};

void tokenize(const TokenizeOptions& o) {
  const runtime::ModelFileSet files = runtime::ModelFileSet::open(o.model_path);
  text::Tokenizer tokenizer(files.tokenizer.vocab);
  std::vector<int32_t> ids = tokenizer.encode(o.text, /*parse_special=*/!o.no_special);
  nlohmann::json pieces = nlohmann::json::array();
  for (int32_t id : ids) pieces.push_back(tokenizer.token_string(id));
  if (o.json) {
    nlohmann::json out = {{"ids", ids}, {"pieces", pieces}};
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  for (size_t i = 0; i < ids.size(); ++i) fmt::print("{:>8}  {}\n", ids[i], pieces[i].get<std::string>());
  fmt::print("{} tokens\n", ids.size());
}

}  // namespace

void add_tokenize_command(CLI::App& app) {
  auto o = std::make_shared<TokenizeOptions>();
  CLI::App* cmd = app.add_subcommand("tokenize", "Split text into the model's tokens.");
  cmd->add_option("-m,--model", o->model_path, "GGUF file or Hugging Face model directory")->required();
  cmd->add_option("--text", o->text, "Text to tokenize")->required();
  cmd->add_flag("--no-special", o->no_special, "Treat special-token strings as plain text");
  cmd->add_flag("--json", o->json, "Print {\"ids\": [...], \"pieces\": [...]}");
  cmd->callback([o] { tokenize(*o); });
}

}  // namespace llmesh::app
