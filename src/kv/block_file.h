// The disk tier's file format: one content-addressed file per KV block,
// named by its chained key (<16 hex digits>.kvb), that can never be served
// as the wrong content:
//
//   header (64 bytes, little-endian)
//     magic "LLMESHKV" | format version u32 | tokens u32 | namespace u64 |
//     key u64 | parent key u64 | payload bytes u64 | XXH3(tokens+payload) u64 |
//     XXH3(the 56 bytes before) u64
//   tokens   int32[tokens]
//   payload  the block's K/V (BlockMemory layout)
//
// The namespace (model identity, architecture, block size, KV dtype) must
// match, the header checksum covers the header, the payload checksum the
// rest; a file is written under a temporary name and renamed into place, so
// a reader sees either nothing or a whole file.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kv/block_record.h"

namespace llmesh::kv {

inline constexpr uint32_t kBlockFileVersion = 1;
inline constexpr size_t kBlockFileHeaderBytes = 64;

std::string block_file_name(BlockHash hash);

// What a header says about its file.
struct BlockFileInfo {
  BlockHash hash = 0, parent = 0;
  uint32_t num_tokens = 0;
  uint64_t payload_bytes = 0;
  uint64_t checksum = 0;
  int64_t file_bytes() const { return int64_t(kBlockFileHeaderBytes + num_tokens * 4 + payload_bytes); }
};

enum class BlockFileStatus {
  Ok,
  Truncated,  // shorter (or longer) than its header says, or no whole header
  Corrupt,    // bad magic, version or checksum
  Foreign,    // another namespace, block size or payload size
};
const char* block_file_status_name(BlockFileStatus status);

// The layout this tier expects (any file that differs is foreign).
struct BlockFileLayout {
  BlockHash cache_namespace = 0;
  uint32_t block_size = 0;
  uint64_t payload_bytes = 0;
};

// Writes `record` atomically: `dir/.name.tmp`, then rename to `dir/name`.
// Throws Error on any I/O failure (the temporary file is removed).
void write_block_file(const std::string& dir, const BlockRecord& record, const BlockFileLayout& layout);

// Reads and checks a file's header (not its payload); `info` (and `tokens`,
// when given: what the file says, checked only by read_block_file) are set when Ok.
BlockFileStatus read_block_file_header(const std::string& path, const BlockFileLayout& layout, BlockFileInfo& info,
                                       std::vector<int32_t>* tokens = nullptr);

// Reads a whole file into `record` and checks everything: header, size,
// checksum, and that its key and tokens are `hash` and `tokens`.
BlockFileStatus read_block_file(const std::string& path, const BlockFileLayout& layout, BlockHash hash,
                                std::span<const int32_t> tokens, std::span<std::byte> payload);

}  // namespace llmesh::kv
