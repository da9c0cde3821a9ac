#include "kv/block_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/error.h"

namespace llmesh::kv {

namespace {

constexpr char kMagic[8] = {'L', 'L', 'M', 'E', 'S', 'H', 'K', 'V'};

// The header's fields at their byte offsets (the format is little-endian, as is every host we build for).
struct Header {
  char magic[8];
  uint32_t version;
  uint32_t num_tokens;
  uint64_t cache_namespace;
  uint64_t hash;
  uint64_t parent;
  uint64_t payload_bytes;
  uint64_t checksum;         // tokens + payload
  uint64_t header_checksum;  // the 56 bytes before
};
static_assert(sizeof(Header) == kBlockFileHeaderBytes);

uint64_t content_checksum(std::span<const int32_t> tokens, std::span<const std::byte> payload) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_64bits_reset(state);
  XXH3_64bits_update(state, tokens.data(), tokens.size_bytes());
  XXH3_64bits_update(state, payload.data(), payload.size());
  const uint64_t h = XXH3_64bits_digest(state);
  XXH3_freeState(state);
  return h;
}

uint64_t header_checksum(const Header& h) { return XXH3_64bits(&h, offsetof(Header, header_checksum)); }

// Closes the descriptor on every path.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

bool read_exact(int fd, void* out, size_t n) {
  auto* p = static_cast<char*>(out);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got, n -= size_t(got);
  }
  return true;
}

void write_exact(int fd, const void* in, size_t n, const std::string& path) {
  const auto* p = static_cast<const char*>(in);
  while (n > 0) {
    const ssize_t put = ::write(fd, p, n);
    if (put < 0 && errno == EINTR) continue;
    check(put > 0, "cannot write {}: {}", path, std::strerror(errno));
    p += put, n -= size_t(put);
  }
}

BlockFileStatus check_header(const Header& h, int64_t file_bytes, const BlockFileLayout& layout) {
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kBlockFileVersion ||
      h.header_checksum != header_checksum(h))
    return BlockFileStatus::Corrupt;
  if (h.cache_namespace != layout.cache_namespace || h.num_tokens != layout.block_size ||
      h.payload_bytes != layout.payload_bytes)
    return BlockFileStatus::Foreign;
  const int64_t expected = int64_t(kBlockFileHeaderBytes + uint64_t(h.num_tokens) * 4 + h.payload_bytes);
  if (file_bytes != expected) return BlockFileStatus::Truncated;
  return BlockFileStatus::Ok;
}

BlockFileStatus open_and_check(const std::string& path, const BlockFileLayout& layout, Fd& fd, Header& h) {
  fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (fd.fd < 0 || ::fstat(fd.fd, &st) != 0) return BlockFileStatus::Truncated;
  if (!read_exact(fd.fd, &h, sizeof h)) return BlockFileStatus::Truncated;
  return check_header(h, int64_t(st.st_size), layout);
}

}  // namespace

std::string block_file_name(BlockHash hash) { return fmt::format("{:016x}.kvb", hash); }

const char* block_file_status_name(BlockFileStatus status) {
  switch (status) {
    case BlockFileStatus::Ok: return "ok";
    case BlockFileStatus::Truncated: return "truncated";
    case BlockFileStatus::Corrupt: return "corrupt";
    case BlockFileStatus::Foreign: return "foreign";
  }
  return "?";
}

void write_block_file(const std::string& dir, const BlockRecord& record, const BlockFileLayout& layout) {
  check(record.tokens.size() == layout.block_size && record.payload.size() == layout.payload_bytes,
        "KV block file: {} tokens and {} bytes, the layout says {} and {}", record.tokens.size(),
        record.payload.size(), layout.block_size, layout.payload_bytes);
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kBlockFileVersion;
  h.num_tokens = uint32_t(record.tokens.size());
  h.cache_namespace = layout.cache_namespace;
  h.hash = record.hash;
  h.parent = record.parent;
  h.payload_bytes = record.payload.size();
  h.checksum = content_checksum(record.tokens, record.payload);
  h.header_checksum = header_checksum(h);

  const std::string name = block_file_name(record.hash);
  const std::string tmp = dir + "/." + name + ".tmp", path = dir + "/" + name;
  try {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    check(fd.fd >= 0, "cannot create {}: {}", tmp, std::strerror(errno));
    write_exact(fd.fd, &h, sizeof h, tmp);
    write_exact(fd.fd, record.tokens.data(), record.tokens.size() * sizeof(int32_t), tmp);
    write_exact(fd.fd, record.payload.data(), record.payload.size(), tmp);
    // No fsync: a crash of the process leaves the page cache intact, and after a power
    // loss a short or zeroed file fails its size or checksum check and is skipped.
    check(::rename(tmp.c_str(), path.c_str()) == 0, "cannot rename {} to {}: {}", tmp, path, std::strerror(errno));
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

BlockFileStatus read_block_file_header(const std::string& path, const BlockFileLayout& layout, BlockFileInfo& info,
                                       std::vector<int32_t>* tokens) {
  Fd fd(-1);
  Header h{};
  const BlockFileStatus status = open_and_check(path, layout, fd, h);
  if (status != BlockFileStatus::Ok) return status;
  info = {h.hash, h.parent, h.num_tokens, h.payload_bytes, h.checksum};
  if (tokens) {
    tokens->resize(h.num_tokens);
    if (!read_exact(fd.fd, tokens->data(), tokens->size() * 4)) return BlockFileStatus::Truncated;
  }
  return BlockFileStatus::Ok;
}

BlockFileStatus read_block_file(const std::string& path, const BlockFileLayout& layout, BlockHash hash,
                                std::span<const int32_t> tokens, std::span<std::byte> payload) {
  Fd fd(-1);
  Header h{};
  BlockFileStatus status = open_and_check(path, layout, fd, h);
  if (status != BlockFileStatus::Ok) return status;
  if (h.hash != hash || h.num_tokens != tokens.size() || payload.size() != h.payload_bytes)
    return BlockFileStatus::Foreign;
  std::vector<int32_t> file_tokens(h.num_tokens);
  if (!read_exact(fd.fd, file_tokens.data(), file_tokens.size() * 4) || !read_exact(fd.fd, payload.data(), payload.size()))
    return BlockFileStatus::Truncated;
  if (content_checksum(file_tokens, payload) != h.checksum) return BlockFileStatus::Corrupt;
  // A different prefix under the same key (a 64-bit collision) is not this block.
  if (!std::equal(file_tokens.begin(), file_tokens.end(), tokens.begin(), tokens.end())) return BlockFileStatus::Foreign;
  return BlockFileStatus::Ok;
}

}  // namespace llmesh::kv
