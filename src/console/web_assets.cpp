#include "console/web_assets.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace llmesh::console {

namespace {

bool safe_name(std::string_view name) {
  return !name.empty() && name.front() != '.' && name.find('/') == std::string_view::npos &&
         name.find('\\') == std::string_view::npos;
}

}  // namespace

std::optional<LoadedAsset> load_web_asset(std::string_view name) {
  if (!safe_name(name)) return std::nullopt;
  const WebAsset* embedded = nullptr;
  for (const WebAsset& a : embedded_web_assets())
    if (a.name == name) embedded = &a;
  if (const char* dir = std::getenv("LLMESH_CONSOLE_DIR"); dir && *dir) {
    std::ifstream in(std::string(dir) + "/" + std::string(name), std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream body;
    body << in.rdbuf();
    std::string type = embedded ? std::string(embedded->content_type) : "application/octet-stream";
    if (!embedded && name.ends_with(".js")) type = "text/javascript; charset=utf-8";
    if (!embedded && name.ends_with(".css")) type = "text/css; charset=utf-8";
    if (!embedded && name.ends_with(".html")) type = "text/html; charset=utf-8";
    return LoadedAsset{type, body.str()};
  }
  if (!embedded) return std::nullopt;
  return LoadedAsset{std::string(embedded->content_type), std::string(embedded->body)};
}

}  // namespace llmesh::console
