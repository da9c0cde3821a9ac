// What the router knows about one upstream server before it has talked to it:
// where it is, what protocols it speaks, how much of the traffic it should
// take. Parsed from `--upstream URL,key=value,...` or a [[upstream]] table of
// route.toml; every problem is an llmesh::Error naming the value and the key.
//
//   --upstream http://10.0.0.2:8080,name=box2,weight=2,max_concurrent=8,kind=openai,api_key=KEY,models=a|b
//
// kinds: llmesh (all four APIs, /v1/messages/count_tokens), openai (OpenAI
// chat/completions only, e.g. vLLM, SGLang, llama-server: Anthropic Messages
// are bridged onto chat completions by the router).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace llmesh::route {

enum class UpstreamKind { llmesh, openai };

struct UpstreamSpec {
  std::string name;  // label in metrics, logs and the ring; default "host:port"
  std::string url;   // "http://host:port" (a trailing "/" or "/v1" is dropped)
  std::string host;
  int port = 80;
  UpstreamKind kind = UpstreamKind::llmesh;
  double weight = 1.0;              // share of sessions (> 0)
  int64_t max_concurrent = 0;       // in-flight requests at most; 0: no limit
  std::string api_key;              // sent as Bearer and x-api-key; "": the client's headers pass through
  std::vector<std::string> models;  // model ids it serves; empty: any
};

// "URL[,key=value]..." with keys name, weight, max_concurrent, kind, api_key, models ('|'-separated).
UpstreamSpec parse_upstream_flag(const std::string& text);

// A [[upstream]] table as JSON: {url, name, weight, max_concurrent, kind, api_key, models: [..]}.
// `where` prefixes error messages ("route.toml: upstream 2").
UpstreamSpec upstream_from_json(const nlohmann::json& table, const std::string& where);

// Error unless there is at least one upstream and their names are unique.
void check_upstream_specs(const std::vector<UpstreamSpec>& upstreams);

std::string_view upstream_kind_name(UpstreamKind kind);

// Whether the upstream serves `model` (any model when its list is empty).
bool serves_model(const UpstreamSpec& spec, const std::string& model);

}  // namespace llmesh::route
