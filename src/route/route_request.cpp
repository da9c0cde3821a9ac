#include "route/route_request.h"

#include "api/json_fields.h"
#include "route/prefix_history.h"

namespace llmesh::route {

RouteRequest read_route_request(const httplib::Request& req, const RouteRequestOptions& options) {
  RouteRequest r;
  r.path = req.path;
  r.has_prompt = api::prompt_api_for_path(r.path, &r.api);
  // A body nested deeper than any real request is not parsed here (its copies and its
  // destruction would recurse off the stack): it goes on as sent, and the upstream refuses it.
  if (!req.body.empty() && !api::json_nesting_exceeds(req.body, api::kMaxJsonBodyDepth)) {
    r.body = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (r.body.is_discarded() || !r.body.is_object()) r.body = nullptr;
  }
  if (r.body.is_object()) {
    if (auto m = r.body.find("model"); m != r.body.end() && m->is_string()) r.model = m->get<std::string>();
    if (auto s = r.body.find("stream"); s != r.body.end() && s->is_boolean()) r.stream = s->get<bool>();
  }
  if (r.has_prompt) {
    r.session = api::session_key(r.body, r.api, req.get_header_value("x-session-id"), options.session_prefix_bytes);
    if (options.want_prefix_blocks)
      r.prefix_blocks = prefix_block_hashes(api::prompt_prefix_text(r.body, r.api), options.cache_block_bytes);
  }
  return r;
}

}  // namespace llmesh::route
