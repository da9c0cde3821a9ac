// `llmesh run`: load a model and generate from a prompt, or chat in the
// terminal. A client of the same Engine as `serve` (scheduler, prefix cache,
// sampler, stop rules): an interactive chat reuses its previous turns through
// the prefix cache, and several --prompt-ids run as one continuously batched
// set of requests (the served-batch golden checks use that).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "apps/llmesh/commands.h"
#include "core/error.h"
#include "runtime/loaded_model.h"
#include "text/streaming_decoder.h"

namespace llmesh::app {

namespace {

using Clock = std::chrono::steady_clock;

struct RunOptions {
  std::string model_path;
  dist::ParallelOptions parallel;
  std::string weights = "auto";
  std::string prompt;
  std::vector<std::string> prompt_ids;  // each: comma-separated ids (bypasses the tokenizer); several run batched
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
  engine::EngineOptions engine;
  bool no_prefix_cache = false;
  RopeScalingFlags rope;
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

engine::SamplingParams sampling_from(const RunOptions& o, const model::GenerationDefaults& defaults) {
  engine::SamplingParams p;
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

// One request's outcome as `run` reports it.
struct Generation {
  std::vector<int32_t> prompt_ids, output_ids;
  std::string text;
  engine::FinishReason finish_reason = engine::FinishReason::None;
  int64_t num_cached_tokens = 0;
  double prefill_seconds = 0;  // submit until the first token
  double decode_seconds = 0;   // the remaining tokens
  std::vector<float> first_logits;

  nlohmann::json to_json() const {
    const int64_t decoded = int64_t(output_ids.size()) - 1;
    return {{"prompt_ids", prompt_ids},
            {"output_ids", output_ids},
            {"text", text},
            {"prompt_tokens", prompt_ids.size()},
            {"cached_tokens", num_cached_tokens},
            {"output_tokens", output_ids.size()},
            {"finish_reason", engine::openai_finish_reason(finish_reason)},
            {"prefill_tokens_per_s", double(prompt_ids.size() - size_t(num_cached_tokens)) /
                                         std::max(prefill_seconds, 1e-9)},
            {"decode_tokens_per_s", decoded > 0 ? double(decoded) / std::max(decode_seconds, 1e-9) : 0.0}};
  }
};

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

class Runner {
 public:
  Runner(runtime::LoadedModel& model, const RunOptions& o, engine::EngineOptions engine_options)
      : model_(model), o_(o), engine_(runtime::make_engine(model, std::move(engine_options))) {}

  engine::Request request(const std::vector<int32_t>& prompt_ids) {
    engine::Request r;
    r.request_id = "run-" + std::to_string(next_id_++);
    r.prompt_ids = prompt_ids;
    r.sampling = sampling_from(o_, model_.files.generation);
    // Generation stops at the context's end, as it always has for `run`.
    r.max_tokens = std::min(o_.max_tokens, engine_->context_tokens() - int64_t(prompt_ids.size()));
    r.ignore_eos = o_.ignore_eos;
    r.return_first_logits = !o_.dump_logits.empty();
    return r;
  }

  // Reads a request to its end; `stream` prints text as it arrives.
  Generation collect(engine::RequestHandle& handle, const std::vector<int32_t>& prompt_ids, Clock::time_point submitted,
                     bool stream) {
    Generation g;
    g.prompt_ids = prompt_ids;
    text::StreamingDecoder decoder(*model_.tokenizer, /*skip_special=*/true);
    auto emit = [&](const std::string& piece) {
      g.text += piece;
      if (stream && !piece.empty()) {
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
      }
    };
    std::optional<Clock::time_point> first;
    engine::TokenEvent ev;
    while (handle.next(&ev)) {
      check(ev.error.empty(), "generation failed: {}", ev.error);
      if (!first) {
        first = Clock::now();
        g.num_cached_tokens = ev.num_cached_tokens;
        g.first_logits = std::move(ev.first_logits);
      }
      if (ev.token_id >= 0) {
        g.output_ids.push_back(ev.token_id);
        emit(decoder.push(ev.token_id));
      }
      if (ev.finish_reason != engine::FinishReason::None) g.finish_reason = ev.finish_reason;
    }
    emit(decoder.flush());
    const auto end = Clock::now();
    g.prefill_seconds = first ? seconds(submitted, *first) : seconds(submitted, end);
    g.decode_seconds = first ? seconds(*first, end) : 0.0;
    return g;
  }

  Generation generate(const std::vector<int32_t>& prompt_ids, bool stream) {
    const auto submitted = Clock::now();
    auto handle = engine_->submit(request(prompt_ids));
    return collect(*handle, prompt_ids, submitted, stream);
  }

  // All prompts queued in one go, so the engine batches them the same way on
  // every run (the counters and tokens are reproducible); results in prompt order.
  std::vector<Generation> generate_batch(const std::vector<std::vector<int32_t>>& prompts) {
    const auto submitted = Clock::now();
    std::vector<engine::Request> requests;
    for (const auto& p : prompts) requests.push_back(request(p));
    const auto handles = engine_->submit_all(std::move(requests));
    std::vector<Generation> out;
    for (size_t i = 0; i < prompts.size(); ++i) out.push_back(collect(*handles[i], prompts[i], submitted, false));
    return out;
  }

  engine::EngineStats stats() const { return engine_->stats(); }

 private:
  runtime::LoadedModel& model_;
  const RunOptions& o_;
  std::unique_ptr<engine::Engine> engine_;
  int64_t next_id_ = 0;
};

void write_logits(const std::string& path, const std::vector<Generation>& results) {
  std::ofstream out(path, std::ios::binary);
  check(bool(out), "--dump-logits: cannot write {}", path);
  for (const auto& g : results)
    out.write(reinterpret_cast<const char*>(g.first_logits.data()), std::streamsize(g.first_logits.size() * sizeof(float)));
}

void print_stats(const Generation& g) {
  const nlohmann::json j = g.to_json();
  std::fprintf(stderr, "\n\n[prompt %zu tokens (%lld cached), generated %zu | prefill %.1f tok/s, decode %.1f tok/s]\n",
               g.prompt_ids.size(), (long long)g.num_cached_tokens, g.output_ids.size(),
               j["prefill_tokens_per_s"].get<double>(), j["decode_tokens_per_s"].get<double>());
}

nlohmann::json engine_json(const engine::EngineStats& s) {
  return {{"prefix_hit_tokens", s.prefix_hit_tokens},
          {"preemptions", s.num_preemptions},
          {"evicted_blocks", s.num_evicted_blocks}};
}

void interactive_chat(runtime::LoadedModel& model, Runner& runner, const RunOptions& o) {
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
    text::ChatTemplateOptions options;
    options.enable_thinking = o.enable_thinking;
    const std::string prompt = model.render_chat(messages, nlohmann::json::array(), options);
    if (o.show_prompt) std::fprintf(stderr, "%s", prompt.c_str());
    const Generation g = runner.generate(model.encode_prompt(prompt), /*stream=*/true);
    print_stats(g);
    messages.push_back({{"role", "assistant"}, {"content", g.text}});
  }
}

std::vector<int32_t> checked_ids(const std::string& text, const model::ModelConfig& config) {
  std::vector<int32_t> ids = parse_ids(text);
  check(!ids.empty(), "--prompt-ids: no ids given");
  for (int32_t id : ids)
    check(id >= 0 && id < config.vocab_size, "--prompt-ids: {} is outside the vocabulary (size {})", id,
          config.vocab_size);
  return ids;
}

// Rank 0's communication (compare with `llmesh inspect --plan`).
nlohmann::json comm_json(const dist::CommCounters& c) {
  return {{"rank0_bytes_sent", c.bytes_sent}, {"rank0_calls", c.num_calls}, {"rank0_seconds", c.seconds}};
}

void print_comm(const dist::CommCounters& c) {
  std::fprintf(stderr, "[comm: rank 0 sent %.2f MiB in %llu calls, %.3f s inside them]\n",
               double(c.bytes_sent) / double(1 << 20), (unsigned long long)c.num_calls, c.seconds);
}

void run(const RunOptions& o) {
  const int sources = int(!o.prompt.empty()) + int(!o.prompt_ids.empty());
  check(sources <= 1, "give either --prompt or --prompt-ids, not both");
  check(sources == 1 || o.chat, "nothing to do: pass --prompt TEXT, or --chat for an interactive chat");
  check(o.max_tokens >= 1, "--max-tokens must be at least 1 (got {})", o.max_tokens);

  std::unique_ptr<dist::Job> job = dist::Job::start(o.parallel);
  ThreadPool pool(o.threads);
  const WeightResidency residency = parse_weight_residency(o.weights);
  if (job && !job->serves()) {
    run_worker_rank(*job, [&] {
      return runtime::LoadedModel::load(o.model_path, pool, residency, job.get(), o.rope.overrides());
    });
    return;
  }
  auto model = runtime::LoadedModel::load(o.model_path, pool, residency, job.get(), o.rope.overrides());
  check_ctx_size(model->config(), o.ctx_size);
  const int64_t ctx = o.ctx_size > 0 ? o.ctx_size : model->config().max_context();
  check(ctx > 1, "--ctx-size must be at least 2");

  std::vector<std::vector<int32_t>> prompts;
  for (const auto& text : o.prompt_ids) prompts.push_back(checked_ids(text, model->config()));
  if (!o.prompt.empty()) {
    std::string text = o.prompt;
    if (o.chat) {
      nlohmann::json messages = nlohmann::json::array();
      if (!o.system.empty()) messages.push_back({{"role", "system"}, {"content", o.system}});
      messages.push_back({{"role", "user"}, {"content", o.prompt}});
      text::ChatTemplateOptions options;
      options.enable_thinking = o.enable_thinking;
      text = model->render_chat(messages, nlohmann::json::array(), options);
    }
    if (o.show_prompt) std::fprintf(stderr, "%s", text.c_str());
    prompts.push_back(model->encode_prompt(text));
  }
  // Size the KV cache to what this run can use, not to the whole trained context.
  engine::EngineOptions engine = o.engine;
  int64_t needed = 0;  // whole blocks per request: every request fits at once
  for (const auto& p : prompts) {
    check(int64_t(p.size()) < ctx, "the prompt has {} tokens but the context holds {} (--ctx-size)", p.size(), ctx);
    const int64_t tokens = std::min(ctx, int64_t(p.size()) + o.max_tokens);
    needed += (tokens + engine.block_size - 1) / engine.block_size * engine.block_size;
  }
  engine.context_tokens = ctx;
  engine.enable_prefix_cache = !o.no_prefix_cache;
  if (engine.kv_cache_tokens <= 0) engine.kv_cache_tokens = prompts.empty() ? ctx : needed;
  Runner runner(*model, o, engine);

  if (prompts.empty()) {
    interactive_chat(*model, runner, o);
    return;
  }
  if (prompts.size() == 1) {
    const Generation g = runner.generate(prompts[0], /*stream=*/!o.json);
    if (!o.dump_logits.empty()) write_logits(o.dump_logits, {g});
    if (o.json) {
      nlohmann::json out = g.to_json();
      out["engine"] = engine_json(runner.stats());
      if (job) out["comm"] = comm_json(job->counters());
      std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    } else {
      print_stats(g);
      if (job) print_comm(job->counters());
    }
    return;
  }
  const std::vector<Generation> results = runner.generate_batch(prompts);
  if (!o.dump_logits.empty()) write_logits(o.dump_logits, results);
  if (o.json) {
    nlohmann::json out = {{"results", nlohmann::json::array()}, {"engine", engine_json(runner.stats())}};
    if (job) out["comm"] = comm_json(job->counters());
    for (const auto& g : results) out["results"].push_back(g.to_json());
    std::printf("%s\n", out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    std::printf("[%zu] %s\n", i, results[i].text.c_str());
    print_stats(results[i]);
  }
  if (job) print_comm(job->counters());
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
  cmd->add_option("--prompt-ids", o->prompt_ids,
                  "Prompt as comma-separated token ids (skips the tokenizer); repeat it to run several prompts as one "
                  "continuously batched set of requests (--json then prints {\"results\": [...]})");
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
  cmd->add_option("--dump-logits", o->dump_logits,
                  "Write the last prompt position's logits (float32; one row per prompt, in order) to FILE")
      ->group("");  // for reference checks; hidden from --help
  cmd->add_option("--max-batched-tokens", o->engine.max_batched_tokens,
                  "Tokens per engine step (prefill chunk size; decodes and chunks share it)")
      ->capture_default_str();
  cmd->add_option("--max-running-requests", o->engine.max_running_requests,
                  "Requests computed together (with several --prompt-ids)")
      ->capture_default_str();
  cmd->add_option("--kv-cache-tokens", o->engine.kv_cache_tokens,
                  "KV cache size in tokens (default: what the prompts and --max-tokens need)");
  add_kv_cache_dtype_option(cmd, &o->engine.kv_dtype);
  add_rope_scaling_options(cmd, &o->rope);
  cmd->add_flag("--no-prefix-cache", o->no_prefix_cache, "Recompute every prompt instead of reusing cached blocks");
  add_parallel_options(cmd, &o->parallel);
  cmd->callback([o] { run(*o); });
}

}  // namespace llmesh::app
