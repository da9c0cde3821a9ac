// The console's HTTP surface, shared by `serve` and `route`:
//   GET /console, /console/ and /console/<file>   the page (no key needed: it carries no data)
//   GET /  from a browser (Accept: text/html)      302 to /console
//   GET /console/api/{nodes,models,requests,requests/<id>,history}   JSON (docs/console.md), behind the API key
// The owner supplies each view (ConsoleViews) and its error handling (`wrap`,
// its guarded(): exceptions become errors in its protocol's shape).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

namespace llmesh::console {

struct ConsoleViews {
  std::function<nlohmann::json()> nodes;
  std::function<nlohmann::json()> models;
  std::function<nlohmann::json(size_t limit)> requests;
  std::function<std::optional<nlohmann::json>(const std::string& id)> request;
  std::function<nlohmann::json(int64_t since_ms)> history;
};

using HandlerWrap = std::function<httplib::Server::Handler(httplib::Server::Handler)>;

void add_console_routes(httplib::Server& http, ConsoleViews views, const HandlerWrap& wrap);

// Paths served without the API key: the page and its files (not /console/api/), and "/".
bool is_public_console_path(const std::string& path);

}  // namespace llmesh::console
