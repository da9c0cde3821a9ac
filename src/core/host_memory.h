// What this machine has left: RAM (for sizing weights residency and the KV
// host tier) and disk (for the KV disk tier's default budget); and what this
// process holds (its RSS, for /metrics).
#pragma once

#include <cstddef>
#include <string>

namespace llmesh {

// MemAvailable from /proc/meminfo in bytes (0 when unknown).
size_t available_memory_bytes();
// Bytes an unprivileged user can still write on the filesystem holding `path`
// (its nearest existing ancestor); 0 when unknown.
size_t free_disk_bytes(const std::string& path);
// This process's resident set size in bytes, from /proc/self/statm (0 when unknown).
size_t resident_memory_bytes();

}  // namespace llmesh
