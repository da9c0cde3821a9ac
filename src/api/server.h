// The HTTP server: routes, authentication, error mapping and the admin
// endpoints. It listens before the model is loaded (so /health can say 503
// while loading) and serves the model endpoints once set_ready() is called.
//
//   ApiServer server(options);
//   int port = server.bind();                  // Error when the address is taken
//   std::thread http([&] { server.listen(); });
//   ... load model, start engine ...
//   server.set_ready(model, engine);
#pragma once

#include <memory>
#include <string>

#include "api/server_options.h"
#include "engine/engine.h"
#include "runtime/loaded_model.h"

namespace llmesh::api {

class ApiServer {
 public:
  explicit ApiServer(ServerOptions options);
  ~ApiServer();

  // Binds the listening socket; returns the port (the chosen one when options.port is 0).
  int bind();
  // Serves requests until stop(). Precondition: bind() succeeded.
  void listen();
  void stop();
  // Graceful shutdown: new requests get 503 (in the path's protocol shape) and
  // /health says "draining"; running generations may finish for up to
  // `timeout_s` seconds, then are cancelled; then stop(). listen() returns
  // once the last response is written. Blocks until then (call it from
  // another thread than listen()'s).
  void drain(double timeout_s);
  // The engine cannot run any more (a rank of the job is gone): /health and new
  // requests get 503 with `reason`, until the process ends. The first call wins.
  void set_failed(const std::string& reason);
  // The model endpoints go live. Both must outlive the server.
  void set_ready(runtime::LoadedModel* model, engine::Engine* engine, int num_compute_threads = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmesh::api
