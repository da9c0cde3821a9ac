#include "console/console_routes.h"

#include <fmt/format.h>

#include "console/web_assets.h"

namespace llmesh::console {

using nlohmann::json;

namespace {

void send_json(httplib::Response& res, const json& body) {
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
  res.set_header("Cache-Control", "no-store");
}

void send_not_found(httplib::Response& res, const std::string& message) {
  res.status = 404;
  send_json(res, {{"error", {{"message", message}, {"type", "not_found_error"}, {"param", nullptr}, {"code", nullptr}}}});
}

void serve_asset(const std::string& name, httplib::Response& res) {
  const std::optional<LoadedAsset> asset = load_web_asset(name);
  if (!asset) {
    send_not_found(res, fmt::format("No console file '{}'", name));
    return;
  }
  res.set_content(asset->body, asset->content_type);
  // The page and its modules change with the binary: revalidate rather than cache stale code.
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Content-Type-Options", "nosniff");
  if (name.ends_with(".html")) {
    // Only our own files run: no inline scripts, nothing from elsewhere.
    res.set_header("Content-Security-Policy",
                   "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'");
  }
}

// A number query parameter, or `fallback` when absent or not a number.
int64_t int_param(const httplib::Request& req, const char* name, int64_t fallback) {
  const std::string v = req.get_param_value(name);
  if (v.empty()) return fallback;
  try {
    size_t used = 0;
    const long long n = std::stoll(v, &used);
    return used == v.size() ? int64_t(n) : fallback;
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace

bool is_public_console_path(const std::string& path) {
  if (path == "/" || path == "/console" || path == "/console/") return true;
  return path.starts_with("/console/") && !path.starts_with("/console/api/");
}

void add_console_routes(httplib::Server& http, ConsoleViews views, const HandlerWrap& wrap) {
  http.Get("/", [](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("Accept").find("text/html") != std::string::npos) {
      res.set_redirect("/console");
      return;
    }
    send_not_found(res, "No route for GET / (the console is at /console)");
  });
  auto index = [](const httplib::Request&, httplib::Response& res) { serve_asset("index.html", res); };
  http.Get("/console", index);
  http.Get("/console/", index);

  http.Get("/console/api/nodes", wrap([views](const httplib::Request&, httplib::Response& res) {
    send_json(res, views.nodes());
  }));
  http.Get("/console/api/models", wrap([views](const httplib::Request&, httplib::Response& res) {
    send_json(res, views.models());
  }));
  http.Get("/console/api/requests", wrap([views](const httplib::Request& req, httplib::Response& res) {
    send_json(res, views.requests(size_t(std::clamp<int64_t>(int_param(req, "limit", 100), 1, 100000))));
  }));
  http.Get(R"(/console/api/requests/([^/]+))", wrap([views](const httplib::Request& req, httplib::Response& res) {
    const std::string id = req.matches[1];
    if (std::optional<json> record = views.request(id)) {
      send_json(res, *record);
      return;
    }
    send_not_found(res, fmt::format("No request '{}' in the console's ring (it keeps the last ones only)", id));
  }));
  http.Get("/console/api/history", wrap([views](const httplib::Request& req, httplib::Response& res) {
    send_json(res, views.history(int_param(req, "since", 0)));
  }));
  http.Get(R"(/console/api/(.*))", [](const httplib::Request& req, httplib::Response& res) {
    send_not_found(res, fmt::format("No console endpoint '{}'", req.path));
  });
  http.Get(R"(/console/([^/]+))", [](const httplib::Request& req, httplib::Response& res) {
    serve_asset(req.matches[1], res);
  });
}

}  // namespace llmesh::console
