// `llmesh run`: load a model and generate from a prompt, or chat in the terminal.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/llmesh/commands.h"
#include "core/error.h"
#include "engine/loaded_model.h"
#include "engine/sequence_runner.h"
#include "text/streaming_decoder.h"

namespace llmesh::app {

namespace {

struct RunOptions {
  std::string model_path;
  std::string weights = "auto";
  std::string prompt;
  std::string prompt_ids;  // comma-separated ids: bypasses the tokenizer (tests, goldens)
  bool chat = false;
  std::string system;
  int64_t max_tokens = 256;
  std::optional<float> temperature, top_p, min_p, repetition_penalty;
  std::optional<int> top_k;
  float presence_penalty = 0, frequency_penalty = 0;
  std::optional<uint64_t> seed;
  int threads = 0;
  int64_t ctx_size = 0;
  bool show_prompt = false;
  bool json = false;
  bool ignore_eos = false;
  std::optional<bool> enable_thinking;
  std::string dump_logits;
};

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      long v = std::stol(item, &used);
      check(used == item.size() || item.find_first_not_of(" ", used) == std::string::npos, "");
      ids.push_back(int32_t(v));
    } catch (const std::exception&) {
      fail("--prompt-ids: '{}' is not an integer", item);
    }
  }
  return ids;
}

SamplingParams sampling_from(const RunOptions& o, const GenerationDefaults& defaults) {
  SamplingParams p;
  p.temperature = o.temperature.value_or(defaults.temperature.value_or(0.8f));
  p.top_p = o.top_p.value_or(defaults.top_p.value_or(1.0f));
  p.top_k = o.top_k.value_or(defaults.top_k.value_or(0));
  p.min_p = o.min_p.value_or(defaults.min_p.value_or(0.0f));
  p.repetition_penalty = o.repetition_penalty.value_or(defaults.repetition_penalty.value_or(1.0f));
  p.presence_penalty = o.presence_penalty;
  p.frequency_penalty = o.frequency_penalty;
  p.seed = o.seed;
  return p;
}

void write_logits(const std::string& path, const std::vector<float>& logits) {
  std::ofstream out(path, std::ios::binary);
  check(bool(out), "--dump-logits: cannot write {}", path);
  out.write(reinterpret_cast<const char*>(logits.data()), std::streamsize(logits.size() * sizeof(float)));
}

// One generation; streams text to stdout unless --json. Returns the text.
std::string generate_and_print(LoadedModel& model, SequenceRunner& runner, const std::vector<int32_t>& prompt_ids,
                               const RunOptions& o, GenerateResult* result_out) {
  GenerateOptions options;
  options.max_tokens = o.max_tokens;
  options.sampling = sampling_from(o, model.files.generation);
  options.ignore_eos = o.ignore_eos;
  StreamingDecoder decoder(*model.tokenizer, /*skip_special=*/true);
  std::string text;
  auto on_token = [&](int32_t id) {
    std::string piece = decoder.push(id);
    text += piece;
    if (!o.json && !piece.empty()) {
      std::fwrite(piece.data(), 1, piece.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  };
  *result_out = runner.generate(prompt_ids, options, on_token, !o.dump_logits.empty());
  std::string rest = decoder.flush();
  text += rest;
  if (!o.json) std::fwrite(rest.data(), 1, rest.size(), stdout);
  if (!o.dump_logits.empty()) write_logits(o.dump_logits, result_out->first_logits);
  return text;
}

void print_stats(const GenerateResult& r) {
  const double prefill_tps = double(r.num_prompt_tokens - r.num_cached_tokens) / std::max(r.prefill_seconds, 1e-9);
  const int64_t decoded = int64_t(r.output_ids.size()) - 1;
  const double decode_tps = decoded > 0 ? double(decoded) / std::max(r.decode_seconds, 1e-9) : 0.0;
  std::fprintf(stderr, "\n\n[prompt %lld tokens (%lld cached), generated %zu | prefill %.1f tok/s, decode %.1f tok/s]\n",
               (long long)r.num_prompt_tokens, (long long)r.num_cached_tokens, r.output_ids.size(), prefill_tps,
               decode_tps);
}

void interactive_chat(LoadedModel& model, SequenceRunner& runner, const RunOptions& o) {
  nlohmann::json messages = nlohmann::json::array();
  if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
  const bool tty = ::isatty(STDIN_FILENO);
  std::string line;
  while (true) {
    if (tty) std::fputs("\n> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line)) break;
    if (line.empty()) continue;
    if (line == "/exit" || line == "/quit") break;
    messages.push_back({{"role", "user"}, {"content", line}});
    ChatTemplateOptions options;
    options.enable_thinking = o.enable_thinking;
    const std::string prompt = model.render_chat(messages, nlohmann::json::array(), options);
    if (o.show_prompt) std::fprintf(stderr, "%s", prompt.c_str());
    GenerateResult result;
    std::string reply = generate_and_print(model, runner, model.encode_prompt(prompt), o, &result);
    print_stats(result);
    messages.push_back({{"role", "assistant"}, {"content", reply}});
  }
}

void run(const RunOptions& o) {
  const int sources = int(!o.prompt.empty()) + int(!o.prompt_ids.empty());
  check(sources <= 1, "give either --prompt or --prompt-ids, not both");
  check(sources == 1 || o.chat, "nothing to do: pass --prompt TEXT, or --chat for an interactive chat");
  check(o.max_tokens >= 1, "--max-tokens must be at least 1 (got {})", o.max_tokens);

  ThreadPool pool(o.threads);
  auto model = LoadedModel::load(o.model_path, pool, parse_weight_residency(o.weights));
  const int64_t ctx = o.ctx_size > 0 ? o.ctx_size : model->config().max_position;
  check(ctx > 1, "--ctx-size must be at least 2");

  std::vector<int32_t> prompt_ids;
  if (!o.prompt_ids.empty()) {
    prompt_ids = parse_ids(o.prompt_ids);
    for (int32_t id : prompt_ids)
      check(id >= 0 && id < model->config().vocab_size, "--prompt-ids: {} is outside the vocabulary (size {})", id,
            model->config().vocab_size);
  } else if (!o.prompt.empty()) {
    std::string text = o.prompt;
    if (o.chat) {
      nlohmann::json messages = nlohmann::json::array();
      if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
      messages.push_back({{"role", "user"}, {"content", o.prompt}});
      ChatTemplateOptions options;
      options.enable_thinking = o.enable_thinking;
      text = model->render_chat(messages, nlohmann::json::array(), options);
    }
    if (o.show_prompt) std::fprintf(stderr, "%s", text.c_str());
    prompt_ids = model->encode_prompt(text);
  }
  // Size the KV cache to what this run can use, not to the whole trained context.
  const int64_t needed = o.chat && prompt_ids.empty() ? ctx : int64_t(prompt_ids.size()) + o.max_tokens;
  check(prompt_ids.empty() || int64_t(prompt_ids.size()) < ctx,
        "the prompt has {} tokens but the context holds {} (--ctx-size)", prompt_ids.size(), ctx);
  SequenceRunner runner(*model, std::min(ctx, needed));

  if (prompt_ids.empty()) {
    interactive_chat(*model, runner, o);
    return;
  }
  GenerateResult result;
  std::string text = generate_and_print(*model, runner, prompt_ids, o, &result);
  if (o.json) {
    const int64_t decoded = int64_t(result.output_ids.size()) - 1;
    nlohmann::json out = {
        {"prompt_ids", prompt_ids},
        {"output_ids", result.output_ids},
        {"text", text},
        {"prompt_tokens", result.num_prompt_tokens},
        {"output_tokens", result.output_ids.size()},
        {"finish_reason", openai_finish_reason(result.finish_reason)},
        {"prefill_tokens_per_s", double(result.num_prompt_tokens) / std::max(result.prefill_seconds, 1e-9)},
        {"decode_tokens_per_s", decoded > 0 ? double(decoded) / std::max(result.decode_seconds, 1e-9) : 0.0},
    };
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    print_stats(result);
  }
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand("run", "Generate text from a prompt, or chat in the terminal.");
  cmd->footer(
      "\nExamples:\n"
      "  llmesh run --model models/tiny-qwen3 --prompt \"Once upon a time\" --max-tokens 32\n"
      "  llmesh run --model model.gguf --chat --system \"You are terse.\"        (interactive; /exit quits)\n"
      "  llmesh run --model model.gguf --chat --prompt \"Hi\" --show-prompt --json\n");
  cmd->add_option("-m,--model", o->model_path, "GGUF file or Hugging Face model directory")->required();
  cmd->add_option("--weights", o->weights,
                  "Where weights live: ram (a copy in 2 MiB huge pages: fastest decode), mmap (the file's page cache; "
                  "for models larger than RAM), auto (ram when it fits)")
      ->check(CLI::IsMember({"auto", "ram", "mmap"}))
      ->capture_default_str();
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text (with --chat: the user message)");
  cmd->add_option("--prompt-ids", o->prompt_ids, "Prompt as comma-separated token ids (skips the tokenizer)");
  cmd->add_flag("--chat", o->chat, "Apply the model's chat template; without --prompt, chat interactively");
  cmd->add_option("--system", o->system, "System message for --chat");
  cmd->add_option("-n,--max-tokens", o->max_tokens, "Maximum tokens to generate")->capture_default_str();
  cmd->add_option("--temperature", o->temperature, "Sampling temperature; 0 = greedy (default: the model's, else 0.8)");
  cmd->add_option("--top-p", o->top_p, "Nucleus sampling: keep the smallest set with probability >= P");
  cmd->add_option("--top-k", o->top_k, "Keep only the K most likely tokens (0 = off)");
  cmd->add_option("--min-p", o->min_p, "Drop tokens less likely than MIN_P x the top token");
  cmd->add_option("--repetition-penalty", o->repetition_penalty, "Penalize tokens already seen (>1)");
  cmd->add_option("--presence-penalty", o->presence_penalty, "Subtract from logits of generated tokens");
  cmd->add_option("--frequency-penalty", o->frequency_penalty, "Subtract per occurrence in generated tokens");
  cmd->add_option("--seed", o->seed, "Random seed: the same seed gives the same tokens");
  cmd->add_option("-t,--threads", o->threads, "Worker threads (default: all cores)");
  cmd->add_option("-c,--ctx-size", o->ctx_size, "Context length (default: the model's)");
  cmd->add_flag("--ignore-eos", o->ignore_eos, "Keep generating past end-of-sequence tokens");
  cmd->add_option("--enable-thinking", o->enable_thinking, "Pass enable_thinking to the chat template (true/false)");
  cmd->add_flag("--show-prompt", o->show_prompt, "Print the rendered prompt to stderr");
  cmd->add_flag("--json", o->json, "Print one JSON object instead of streaming text");
  cmd->add_option("--dump-logits", o->dump_logits, "Write the last prompt position's logits (float32) to FILE")
      ->group("");  // for reference checks; hidden from --help
  cmd->callback([o] { run(*o); });
}

}  // namespace llmesh::app
