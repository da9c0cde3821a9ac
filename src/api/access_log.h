// The access log (`--access-log FILE`): one JSON object per line for every
// response, written when its last byte is sent:
//   {"time":"2026-12-02T13:31:51.123Z","remote":"127.0.0.1","method":"POST",
//    "path":"/v1/messages","status":200,"bytes":5123,"duration_ms":812.4,
//    "request_id":"msg_…","key_id":"alice"}
// No prompt, no output, no query string, no key: only the key's id
// (api_keys.h). Appends, one write per line, so several writers and `tail -f`
// see whole lines.
#pragma once

#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>

namespace llmesh::api {

struct AccessRecord {
  std::string remote, method, path, request_id, key_id;
  int status = 0;
  int64_t bytes = 0;
  double duration_ms = 0;
};

class AccessLog {
 public:
  // Throws Error when `path` cannot be opened for appending.
  explicit AccessLog(const std::string& path);
  ~AccessLog();
  AccessLog(const AccessLog&) = delete;
  AccessLog& operator=(const AccessLog&) = delete;

  void write(const AccessRecord& record);

 private:
  std::mutex mu_;
  std::FILE* file_ = nullptr;
};

}  // namespace llmesh::api
