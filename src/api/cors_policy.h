// Cross-origin access for browser clients, off unless origins are given
// (`--cors-origin`, repeatable; "*" allows any origin). A preflight from an
// allowed origin gets 204 with the methods and the headers it asked for; an
// actual request from one gets Access-Control-Allow-Origin and the llmesh
// response headers exposed. Other origins get no CORS headers: the browser
// refuses them, and non-browser clients are unaffected either way.
#pragma once

#include <httplib.h>

#include <string>
#include <vector>

namespace llmesh::api {

class CorsPolicy {
 public:
  CorsPolicy() = default;
  explicit CorsPolicy(std::vector<std::string> origins) : origins_(std::move(origins)) {}

  bool enabled() const { return !origins_.empty(); }
  bool allows(const std::string& origin) const;
  // A CORS preflight (OPTIONS with Access-Control-Request-Method).
  static bool is_preflight(const httplib::Request& req);
  // Adds the CORS headers `req` earns (none when its origin is not allowed);
  // a preflight's answer is complete after this (204).
  void apply(const httplib::Request& req, httplib::Response& res) const;

 private:
  std::vector<std::string> origins_;
};

}  // namespace llmesh::api
