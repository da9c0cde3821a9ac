// What this machine has left: RAM (for sizing weights residency and the KV
// host tier) and disk (for the KV disk tier's default budget); and what this
// process holds (its RSS, for /metrics); the machine's name (the console's node view).
#pragma once

#include <cstddef>
#include <string>

namespace llmesh {

// MemAvailable from /proc/meminfo in bytes (0 when unknown).
size_t available_memory_bytes();
// Bytes an unprivileged user can still write on the filesystem holding `path`
// (its nearest existing ancestor); 0 when unknown.
size_t free_disk_bytes(const std::string& path);
// This machine's name (gethostname; "localhost" when unknown).
std::string host_name();
// This process's resident set size in bytes, from /proc/self/statm (0 when unknown).
size_t resident_memory_bytes();

}  // namespace llmesh
