// A change of protocol between what the upstream answers and what the client
// asked for (the Anthropic bridge). The proxy feeds it the upstream's bytes as
// they arrive and sends on what it returns; without a translator bytes pass
// through unchanged.
//
// Contract: begin() once with the upstream's status and content type, then
// translate() for each piece of the body (pieces split anywhere), then
// finish() once: upstream_ok false when the upstream broke off mid-body.
#pragma once

#include <string>
#include <string_view>

namespace llmesh::route {

class ResponseTranslator {
 public:
  virtual ~ResponseTranslator() = default;
  virtual void begin(int upstream_status, const std::string& upstream_content_type) = 0;
  // The client's Content-Type (valid after begin).
  virtual std::string content_type() const = 0;
  // Client bytes for these upstream bytes ("" while a unit is incomplete).
  virtual std::string translate(std::string_view upstream_bytes) = 0;
  // The client's last bytes.
  virtual std::string finish(bool upstream_ok) = 0;
};

}  // namespace llmesh::route
