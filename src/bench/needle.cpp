// Needle in a haystack: for each context length, a one-sentence fact (a
// random 6-digit code) is placed at num_depths evenly spaced depths (0 = the
// start, 1 = just before the question) in filler text; the model is asked for
// the code. A depth passes when the answer contains it. Context lengths are
// approximate (filler is sized to them; the real prompt length is reported).
#include <fmt/format.h>

#include <random>

#include "bench/analysis.h"
#include "bench/run_context.h"
#include "bench/stats.h"

namespace llmesh::bench {

using nlohmann::json;

namespace {
const char* const kQuestion = "\n\nWhat is the secret code of the vault mentioned above? Answer with the code only.";

// At most max_bytes of `text`, never cutting a UTF-8 character.
std::string utf8_prefix(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string code_for(uint64_t seed) { return std::to_string(100000 + seed % 900000); }
}  // namespace

void run_needle(RunContext& ctx, const PointSpec& spec) {
  ctx.store->mark_point_start(spec);
  json notes = json::array();
  std::shared_ptr<ServerClient> client = ctx.make_client();
  constexpr int64_t kAnswerTokens = 24;
  if (ctx.progress != nullptr)
    ctx.progress->set_phase("depths", static_cast<int64_t>(spec.context_lengths.size()) * spec.num_depths);
  int64_t index = 0;
  for (int64_t length : spec.context_lengths) {
    if (ctx.context_limit > 0 && length + kAnswerTokens > ctx.context_limit) {
      notes.push_back(fmt::format("context {} skipped: over the server's {} tokens", length, ctx.context_limit));
      continue;
    }
    for (int64_t d = 0; d < spec.num_depths && !ctx.stopping(); ++d, ++index) {
      const double depth =
          spec.num_depths == 1 ? 0.5 : static_cast<double>(d) / static_cast<double>(spec.num_depths - 1);
      const std::string code = code_for(ctx.seed(spec, "code", index));
      const std::string needle = " The secret code of the vault is " + code + ". ";
      const int64_t fixed_tokens =
          ctx.prompts->count_tokens(needle) + ctx.prompts->count_tokens(kQuestion) + ctx.chat_overhead_tokens;
      const int64_t filler = std::max<int64_t>(2, length - fixed_tokens);
      const int64_t before = std::max<int64_t>(1, std::llround(static_cast<double>(filler) * depth));
      const int64_t after = std::max<int64_t>(1, filler - before);
      const std::string text = ctx.prompts->text_of_tokens(before, ctx.seed(spec, "before", index)) + needle +
                               ctx.prompts->text_of_tokens(after, ctx.seed(spec, "after", index)) + kQuestion;
      RequestRecord r;
      r.point_key = spec.key();
      r.role = "needle";
      r.index = index;
      r.depth = depth;
      r.expected_prompt_tokens = -1;
      r.expected_text = code;
      r.context_tokens = length;
      GenerationRequest request{json::array({{{"role", "user"}, {"content", text}}}), kAnswerTokens, false, true};
      client->generate(request, r, ctx.run_start, ctx.stop);
      ctx.store->append(r);
      if (ctx.progress != nullptr) ctx.progress->request_done(r.ok);
    }
  }
  if (ctx.stopping()) return;
  ctx.store->mark_point_end(spec, {{"notes", notes}});
}

json analyze_needle(const StoredPoint& point) {
  json result = {{"invalid_reasons", json::array()}, {"notes", json::array()}};
  const std::vector<RequestRecord> records = records_with_role(point, "needle");
  check_records(records, false, result);
  json rows = json::array();
  int64_t num_pass = 0;
  for (const RequestRecord& r : records) {
    const bool pass = r.ok && r.text.find(r.expected_text) != std::string::npos;
    num_pass += pass ? 1 : 0;
    rows.push_back({{"context_tokens", r.context_tokens},
                    {"prompt_tokens", r.prompt_tokens},
                    {"depth", r.depth},
                    {"pass", pass},
                    {"ttft_ms", r.ok ? json(ttft_ms(r)) : json()},
                    {"answer", utf8_prefix(r.text, 80)}});
  }
  result["needle"] = rows;
  result["needle_pass"] = num_pass;
  result["needle_total"] = static_cast<int64_t>(records.size());
  result["metrics"] = to_json(load_metrics(records));
  return result;
}

}  // namespace llmesh::bench
