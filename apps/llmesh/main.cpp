// llmesh: one binary, one subcommand per job. Wiring only; the work lives in src/.
#include <cstdio>
#include <exception>

#include "apps/llmesh/commands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{
      "llmesh — serve large language models to coding agents on the hardware you own.\n"
      "Run `llmesh <command> --help` for a command's options."};
  app.set_version_flag("--version", "llmesh 0.1.0");
  app.require_subcommand(1);
  llmesh::app::add_run_command(app);
  llmesh::app::add_inspect_command(app);
  llmesh::app::add_tokenize_command(app);
  llmesh::app::add_serve_command(app);
  llmesh::app::add_sim_command(app);
  llmesh::app::add_bench_command(app);
  llmesh::app::add_route_command(app);
  llmesh::app::add_supervise_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const llmesh::Error& e) {
    std::fprintf(stderr, "llmesh: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llmesh: internal error: %s\n", e.what());
    return 2;
  }
  return 0;
}
