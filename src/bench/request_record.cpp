#include "bench/request_record.h"

#include "core/error.h"

namespace llmesh::bench {

using nlohmann::json;

json to_json(const RequestRecord& r) {
  json j = {{"type", "request"},
            {"point", r.point_key},
            {"role", r.role},
            {"index", r.index},
            {"send_s", r.send_s},
            {"first_token_s", r.first_token_s},
            {"end_s", r.end_s},
            {"chunk_s", r.chunk_s},
            {"expected_prompt_tokens", r.expected_prompt_tokens},
            {"expected_output_tokens", r.expected_output_tokens},
            {"prompt_tokens", r.prompt_tokens},
            {"completion_tokens", r.completion_tokens},
            {"cached_tokens", r.cached_tokens},
            {"ok", r.ok},
            {"http_status", r.http_status}};
  if (!r.session_id.empty()) j["session_id"] = r.session_id;
  if (r.turn >= 0) j["turn"] = r.turn;
  if (r.depth >= 0) j["depth"] = r.depth;
  if (r.context_tokens >= 0) j["context_tokens"] = r.context_tokens;
  if (!r.expected_text.empty()) j["expected_text"] = r.expected_text;
  if (r.previous_prompt_tokens >= 0) j["previous_prompt_tokens"] = r.previous_prompt_tokens;
  if (r.cancelled) j["cancelled"] = true;
  if (!r.error.empty()) j["error"] = r.error;
  if (!r.finish_reason.empty()) j["finish_reason"] = r.finish_reason;
  if (!r.text.empty()) j["text"] = r.text;
  return j;
}

std::string json_line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

RequestRecord record_from_json(const json& j) {
  try {
    RequestRecord r;
    r.point_key = j.at("point").get<std::string>();
    r.role = j.at("role").get<std::string>();
    r.index = j.value("index", int64_t{0});
    r.session_id = j.value("session_id", std::string());
    r.turn = j.value("turn", int64_t{-1});
    r.depth = j.value("depth", -1.0);
    r.context_tokens = j.value("context_tokens", int64_t{-1});
    r.expected_text = j.value("expected_text", std::string());
    r.send_s = j.at("send_s").get<double>();
    r.first_token_s = j.value("first_token_s", -1.0);
    r.end_s = j.at("end_s").get<double>();
    r.chunk_s = j.value("chunk_s", std::vector<double>{});
    r.expected_prompt_tokens = j.value("expected_prompt_tokens", int64_t{-1});
    r.expected_output_tokens = j.value("expected_output_tokens", int64_t{-1});
    r.prompt_tokens = j.value("prompt_tokens", int64_t{-1});
    r.completion_tokens = j.value("completion_tokens", int64_t{-1});
    r.cached_tokens = j.value("cached_tokens", int64_t{-1});
    r.previous_prompt_tokens = j.value("previous_prompt_tokens", int64_t{-1});
    r.ok = j.at("ok").get<bool>();
    r.cancelled = j.value("cancelled", false);
    r.http_status = j.value("http_status", 0);
    r.error = j.value("error", std::string());
    r.finish_reason = j.value("finish_reason", std::string());
    r.text = j.value("text", std::string());
    return r;
  } catch (const json::exception& e) {
    fail("malformed request record: {}", e.what());
  }
}

}  // namespace llmesh::bench
