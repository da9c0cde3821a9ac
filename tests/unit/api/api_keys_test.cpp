#include "api/api_keys.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "api/cors_policy.h"
#include "core/error.h"

namespace llmesh::api {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path) << text;
  return path;
}

TEST(ApiKeys, FlagsAndFileKeysWithTheirIds) {
  const std::string file = write_file("llmesh_keys_test.txt", "# team\nalice sk-a\n\n  sk-b  \n");
  const ApiKeys keys = ApiKeys::load({"sk-flag1", "sk-flag2"}, file);
  EXPECT_TRUE(keys.enabled());
  EXPECT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys.match("Bearer sk-flag2", ""), "key-2");
  EXPECT_EQ(keys.match("", "sk-a"), "alice");
  EXPECT_EQ(keys.match("Bearer sk-b", ""), "file-4");  // line 4, surrounding blanks trimmed
  EXPECT_EQ(keys.match("Bearer sk-a", "wrong"), "alice");  // either header may carry it
  EXPECT_EQ(keys.match("sk-a", ""), std::nullopt);        // Authorization needs "Bearer "
  EXPECT_EQ(keys.match("Bearer sk-", ""), std::nullopt);  // a prefix is not the key
  EXPECT_EQ(keys.match("Bearer sk-aa", ""), std::nullopt);
  EXPECT_EQ(keys.match("", ""), std::nullopt);
  std::filesystem::remove(file);
}

TEST(ApiKeys, NoKeysMeansNoAuthentication) {
  const ApiKeys keys = ApiKeys::load({}, "");
  EXPECT_FALSE(keys.enabled());
  EXPECT_EQ(keys.match("Bearer x", "y"), std::nullopt);
}

TEST(ApiKeys, BadFilesAreClearErrors) {
  EXPECT_THROW(ApiKeys::load({}, "/nonexistent/keys.txt"), Error);
  const std::string three = write_file("llmesh_keys_three.txt", "a b c\n");
  try {
    ApiKeys::load({}, three);
    ADD_FAILURE() << "three fields accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("line 1"), std::string::npos) << e.what();
  }
  const std::string empty = write_file("llmesh_keys_empty.txt", "# nothing\n\n");
  EXPECT_THROW(ApiKeys::load({}, empty), Error);
  EXPECT_THROW(ApiKeys::load({""}, ""), Error);
  std::filesystem::remove(three);
  std::filesystem::remove(empty);
}

TEST(CorsPolicy, OnlyListedOriginsGetHeaders) {
  const CorsPolicy cors({"http://app.local"});
  httplib::Request req;
  req.method = "OPTIONS";
  req.headers.emplace("Origin", "http://app.local");
  req.headers.emplace("Access-Control-Request-Method", "POST");
  req.headers.emplace("Access-Control-Request-Headers", "x-api-key");
  httplib::Response res;
  cors.apply(req, res);
  EXPECT_EQ(res.status, 204);
  EXPECT_EQ(res.get_header_value("Access-Control-Allow-Origin"), "http://app.local");
  EXPECT_EQ(res.get_header_value("Access-Control-Allow-Headers"), "x-api-key");

  httplib::Request other;
  other.method = "POST";
  other.headers.emplace("Origin", "http://evil.example");
  httplib::Response other_res;
  cors.apply(other, other_res);
  EXPECT_FALSE(other_res.has_header("Access-Control-Allow-Origin"));
  EXPECT_TRUE(CorsPolicy({"*"}).allows("http://anything"));
  EXPECT_FALSE(CorsPolicy().enabled());
  EXPECT_FALSE(CorsPolicy().allows("http://app.local"));
}

}  // namespace
}  // namespace llmesh::api
