#include "route/upstream_fetch.h"

#include <thread>

namespace llmesh::route {

using nlohmann::json;

std::vector<json> fetch_from_upstreams(Router& router, const std::string& path, const std::function<bool(int)>& wanted,
                                       const httplib::Request* client) {
  const int n = router.num_upstreams();
  std::vector<json> answers(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) {
    if (!router.healthy(i) || (wanted && !wanted(i))) continue;
    threads.emplace_back([&, i] {
      const UpstreamSpec& spec = router.upstream(i);
      httplib::Client http(spec.host, spec.port);
      http.set_connection_timeout(2, 0);
      http.set_read_timeout(5, 0);
      httplib::Headers headers;
      if (!spec.api_key.empty()) {
        headers.emplace("Authorization", "Bearer " + spec.api_key);
      } else if (client) {
        for (const char* h : {"Authorization", "x-api-key"})
          if (client->has_header(h)) headers.emplace(h, client->get_header_value(h));
      }
      httplib::Result res = http.Get(path, headers);
      if (res && res->status == 200) answers[size_t(i)] = json::parse(res->body, nullptr, false);
      if (answers[size_t(i)].is_discarded()) answers[size_t(i)] = nullptr;
    });
  }
  for (std::thread& t : threads) t.join();
  return answers;
}

}  // namespace llmesh::route
