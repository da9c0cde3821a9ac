// `llmesh route`: one endpoint in front of several servers. Reads route.toml
// and/or --upstream flags, checks every upstream once, then listens and keeps
// checking them in the background.
#include <csignal>
#include <cstdio>
#include <thread>

#include "api/anthropic_messages.h"
#include "api/server_context.h"
#include "apps/llmesh/commands.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "route/health_checker.h"
#include "route/request_log.h"
#include "route/route_config.h"
#include "route/route_server.h"
#include "route/router.h"
#include "runtime/loaded_model.h"

namespace llmesh::app {

namespace {

struct RouteFlags {
  std::string config_path;
  std::vector<std::string> upstreams;
  std::string policy, host, api_key, log_requests, model_path;
  int port = -1;
  int http_threads = 0;
  double load_factor = 0;
  int64_t health_interval_ms = 0;
  bool log_prompts = false;
};

route::RouteServer* g_route_server = nullptr;
void on_signal(int) {
  if (g_route_server) g_route_server->stop();
}

void run_route(const RouteFlags& f) {
  std::signal(SIGPIPE, SIG_IGN);  // a client or upstream that hangs up must not kill the router
  route::RouteConfig config;
  if (!f.config_path.empty()) route::load_route_config(f.config_path, config);
  for (const std::string& u : f.upstreams) config.upstreams.push_back(route::parse_upstream_flag(u));
  if (!f.policy.empty()) config.policy = f.policy;
  if (!f.host.empty()) config.host = f.host;
  if (f.port >= 0) config.port = f.port;
  if (!f.api_key.empty()) config.api_key = f.api_key;
  if (!f.log_requests.empty()) config.log_requests_path = f.log_requests;
  if (f.log_prompts) config.log_prompts = true;
  if (f.http_threads > 0) config.num_http_threads = f.http_threads;
  if (f.load_factor > 0) config.policy_options.load_factor = f.load_factor;
  if (f.health_interval_ms > 0) config.health.interval_ms = f.health_interval_ms;
  check(!config.log_prompts || !config.log_requests_path.empty(), "--log-prompts needs --log-requests FILE");

  route::Router router(config);
  std::unique_ptr<route::RequestLog> log;
  if (!config.log_requests_path.empty())
    log = std::make_unique<route::RequestLog>(config.log_requests_path, config.log_prompts);

  route::HealthChecker health(router);
  health.check_all_now();
  std::printf("llmesh route: policy %s (load factor %.2f), %d upstreams\n", config.policy.c_str(),
              config.policy_options.load_factor, router.num_upstreams());
  for (int i = 0; i < router.num_upstreams(); ++i) {
    const route::UpstreamSpec& u = router.upstream(i);
    std::printf("  %-16s %-28s %-6s weight %g%s%s\n", u.name.c_str(), u.url.c_str(),
                std::string(route::upstream_kind_name(u.kind)).c_str(), u.weight,
                u.max_concurrent > 0 ? (", max_concurrent " + std::to_string(u.max_concurrent)).c_str() : "",
                router.healthy(i) ? "" : "  DOWN (rechecked with backoff)");
  }
  health.start();

  // --model: count_tokens rendered here with the model's chat template and tokenizer
  // (the same handler as `llmesh serve`; the weights are mapped, never read).
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<runtime::LoadedModel> model;
  auto counting = std::make_shared<api::ServerContext>();
  route::RouteServer::Handler count_tokens;
  if (!f.model_path.empty()) {
    pool = std::make_unique<ThreadPool>(1);
    model = runtime::LoadedModel::load(f.model_path, *pool, WeightResidency::Mmap);
    counting->model = model.get();
    count_tokens = [counting](const httplib::Request& req, httplib::Response& res) {
      api::handle_count_tokens(*counting, req, res);
    };
    std::printf("  count_tokens: rendered here with %s's chat template and tokenizer\n", f.model_path.c_str());
  }
  route::RouteServer server(router, log.get(), count_tokens);
  const int port = server.bind();
  g_route_server = &server;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::printf("llmesh route: ready at http://%s:%d (state: /v1/route, metrics: /metrics)\n", config.host.c_str(),
              port);
  std::fflush(stdout);
  server.listen();
  g_route_server = nullptr;
  health.stop();
  std::printf("llmesh route: stopped\n");
}

}  // namespace

void add_route_command(CLI::App& app) {
  auto f = std::make_shared<RouteFlags>();
  CLI::App* cmd = app.add_subcommand(
      "route",
      "One endpoint in front of several servers: keeps each session on the server that holds its cache");
  cmd->footer(R"(
How it routes (--policy):
  session       (default) consistent hashing on the session key with bounded load: a
                conversation and its sub-agents stay on one upstream, so its prefix cache
                keeps hitting; a new upstream takes only its share. The key is the
                x-session-id header, else Claude Code's metadata.user_id session, else
                Responses prompt_cache_key (Codex), else a hash of system + first user turn.
                A session moves only when its upstream is down or holds more than
                load_factor x the average in-flight requests.
  cache_aware   the upstream that saw the longest prefix of this prompt (the router's own
                history, in 256-byte blocks); least loaded when the match is short.
                For many sessions sharing long prompts (one agent fleet, one system prompt).
  least_loaded  fewest in-flight requests per unit of weight; no affinity.
  round_robin, random   for comparison (`llmesh bench` through the router shows the
                cache hit rate each one gets).

Upstreams: --upstream URL[,name=N][,weight=W][,max_concurrent=C][,kind=llmesh|openai][,api_key=K][,models=a|b]
  kind=llmesh (default) speaks all four APIs; kind=openai (vLLM, SGLang, llama-server)
  gets OpenAI chat/completions, and Anthropic /v1/messages is bridged onto its chat
  endpoint (thinking first, tools both ways, Anthropic's event order); give --model FILE
  so count_tokens is exact without an llmesh upstream. models=a|b: the ids it serves
  (a bridged claude-* name becomes the first). A failing upstream is marked down at once and rechecked
  with GET /health after 1 s, 2 s, 4 s ... (at most 30 s); a request that failed before
  its first byte reached the client is retried once on another upstream.

Examples:
  llmesh route --upstream http://127.0.0.1:8081 --upstream http://127.0.0.1:8082 --port 8080
  llmesh route --config route.toml --log-requests route.jsonl
  ANTHROPIC_BASE_URL=http://127.0.0.1:8080 claude        # Claude Code through the router
  curl -s localhost:8080/v1/route | jq                   # upstreams, health, in-flight, sessions
See docs/route.md for route.toml and when to use each policy.)");
  cmd->add_option("--upstream,-u", f->upstreams, "An upstream server (repeatable): URL[,key=value...]; see below");
  cmd->add_option("--config,-c", f->config_path, "route.toml with [server], [policy], [health], [log], [[upstream]]");
  cmd->add_option("--policy", f->policy, "session (default), cache_aware, least_loaded, round_robin, random")
      ->check(CLI::IsMember(route::routing_policy_names()));
  cmd->add_option("--load-factor", f->load_factor,
                  "Bounded load: an upstream takes at most this times the average in-flight requests (default 1.25)")
      ->check(CLI::Range(1.0, 100.0));
  cmd->add_option("--host", f->host, "Address to listen on (default 127.0.0.1)");
  cmd->add_option("--port", f->port, "Port to listen on (default 8090; 0: any free port)")->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", f->api_key,
                  "Require 'Authorization: Bearer KEY' or 'x-api-key: KEY' (all endpoints but /health)");
  cmd->add_option("--log-requests", f->log_requests,
                  "Append one JSON line per request: time, session hash, upstream, reason, tokens, TTFT, status");
  cmd->add_flag("--log-prompts", f->log_prompts, "Also log each request's prompt (system, messages, tools)");
  cmd->add_option("--model,-m", f->model_path,
                  "A model file (.gguf or HF dir) whose chat template and tokenizer answer "
                  "/v1/messages/count_tokens here, exactly (for kind=openai upstreams; weights are not loaded)");
  cmd->add_option("--health-interval-ms", f->health_interval_ms, "Between health checks of an upstream (default 1000)")
      ->check(CLI::Range(int64_t(10), int64_t(3600000)));
  cmd->add_option("--http-threads", f->http_threads, "HTTP worker threads (each open stream holds one; default 256)")
      ->check(CLI::Range(4, 100000));
  cmd->callback([f] { run_route(*f); });
}

}  // namespace llmesh::app
