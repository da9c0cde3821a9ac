#include "route/upstream_spec.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/error.h"

namespace llmesh::route {

using nlohmann::json;

namespace {

// "http://host:port[/][/v1]" -> spec.url/host/port.
void set_url(UpstreamSpec& spec, std::string url, const std::string& where) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (url.ends_with("/v1")) url.resize(url.size() - 3);
  check(!url.starts_with("https://"),
        "{}: upstream URL '{}' uses https, which the router does not speak; put the upstream on a private "
        "network and use http://",
        where, url);
  check(url.starts_with("http://"), "{}: upstream URL '{}' must look like http://host:port", where, url);
  const std::string rest = url.substr(7);
  check(rest.find('/') == std::string::npos, "{}: upstream URL '{}' has a path; only http://host:port[/v1] is supported",
        where, url);
  const size_t colon = rest.rfind(':');
  spec.host = colon == std::string::npos ? rest : rest.substr(0, colon);
  check(!spec.host.empty(), "{}: upstream URL '{}' has no host", where, url);
  if (colon != std::string::npos) {
    const std::string port = rest.substr(colon + 1);
    int value = 0;
    auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
    check(ec == std::errc() && end == port.data() + port.size() && value > 0 && value < 65536,
          "{}: upstream URL '{}' has port '{}'; expected 1..65535", where, url, port);
    spec.port = value;
  }
  spec.url = url;
}

UpstreamKind parse_kind(const std::string& value, const std::string& where) {
  if (value == "llmesh") return UpstreamKind::llmesh;
  if (value == "openai" || value == "vllm" || value == "sglang" || value == "llama-server") return UpstreamKind::openai;
  fail("{}: kind={} is not known; use llmesh (all APIs) or openai (chat completions only: vLLM, SGLang, "
       "llama-server)",
       where, value);
}

double parse_weight(double value, const std::string& where) {
  check(value > 0 && value <= 1000, "{}: weight={} must be in (0, 1000]", where, value);
  return value;
}

int64_t parse_max_concurrent(int64_t value, const std::string& where) {
  check(value >= 0, "{}: max_concurrent={} must be >= 0 (0: no limit)", where, value);
  return value;
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + 1)
    parts.push_back(text.substr(start, at - start));
  parts.push_back(text.substr(start));
  return parts;
}

void set_default_name(UpstreamSpec& spec) {
  if (spec.name.empty()) spec.name = spec.host + ":" + std::to_string(spec.port);
}

}  // namespace

UpstreamSpec parse_upstream_flag(const std::string& text) {
  const std::vector<std::string> parts = split(text, ',');
  UpstreamSpec spec;
  const std::string where = "--upstream " + text;
  set_url(spec, parts[0], where);
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    check(eq != std::string::npos && eq > 0, "{}: '{}' is not key=value", where, parts[i]);
    const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
    try {
      if (key == "name") {
        spec.name = value;
      } else if (key == "weight") {
        size_t used = 0;
        spec.weight = parse_weight(std::stod(value, &used), where);
        check(used == value.size(), "{}: weight={} is not a number", where, value);
      } else if (key == "max_concurrent") {
        size_t used = 0;
        spec.max_concurrent = parse_max_concurrent(std::stoll(value, &used), where);
        check(used == value.size(), "{}: max_concurrent={} is not an integer", where, value);
      } else if (key == "kind") {
        spec.kind = parse_kind(value, where);
      } else if (key == "api_key") {
        spec.api_key = value;
      } else if (key == "models") {
        for (std::string& m : split(value, '|'))
          if (!m.empty()) spec.models.push_back(std::move(m));
      } else {
        fail("{}: unknown key '{}' (known: name, weight, max_concurrent, kind, api_key, models)", where, key);
      }
    } catch (const std::invalid_argument&) {
      fail("{}: {}={} is not a number", where, key, value);
    } catch (const std::out_of_range&) {
      fail("{}: {}={} is out of range", where, key, value);
    }
  }
  set_default_name(spec);
  return spec;
}

UpstreamSpec upstream_from_json(const json& table, const std::string& where) {
  check(table.is_object(), "{}: expected a table", where);
  UpstreamSpec spec;
  auto string_of = [&](const char* key) {
    const json& v = table.at(key);
    check(v.is_string(), "{}: {} must be a string", where, key);
    return v.get<std::string>();
  };
  check(table.contains("url"), "{}: url is required (url = \"http://host:port\")", where);
  for (const auto& [key, value] : table.items()) {
    if (key == "url") {
      set_url(spec, string_of("url"), where);
    } else if (key == "name") {
      spec.name = string_of("name");
    } else if (key == "weight") {
      check(value.is_number(), "{}: weight must be a number", where);
      spec.weight = parse_weight(value.get<double>(), where);
    } else if (key == "max_concurrent") {
      check(value.is_number_integer(), "{}: max_concurrent must be an integer", where);
      spec.max_concurrent = parse_max_concurrent(value.get<int64_t>(), where);
    } else if (key == "kind") {
      spec.kind = parse_kind(string_of("kind"), where);
    } else if (key == "api_key") {
      spec.api_key = string_of("api_key");
    } else if (key == "models") {
      check(value.is_array(), "{}: models must be an array of model ids", where);
      for (const json& m : value) {
        check(m.is_string(), "{}: models must be an array of strings", where);
        spec.models.push_back(m.get<std::string>());
      }
    } else {
      fail("{}: unknown key '{}' (known: url, name, weight, max_concurrent, kind, api_key, models)", where, key);
    }
  }
  set_default_name(spec);
  return spec;
}

void check_upstream_specs(const std::vector<UpstreamSpec>& upstreams) {
  check(!upstreams.empty(), "no upstreams: pass --upstream http://host:port (repeatable) or [[upstream]] tables in "
                            "--config route.toml");
  std::set<std::string> names;
  for (const UpstreamSpec& u : upstreams)
    check(names.insert(u.name).second, "two upstreams are named '{}'; give one a name=... of its own", u.name);
}

std::string_view upstream_kind_name(UpstreamKind kind) { return kind == UpstreamKind::llmesh ? "llmesh" : "openai"; }

bool serves_model(const UpstreamSpec& spec, const std::string& model) {
  return spec.models.empty() || std::find(spec.models.begin(), spec.models.end(), model) != spec.models.end();
}

}  // namespace llmesh::route
