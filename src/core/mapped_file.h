// A read-only memory-mapped file. Model weights are used in place from the
// mapping; the OS pages them in on first touch and can drop them under pressure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace llmesh {

class MappedFile {
 public:
  // Throws Error naming the path when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Reads the whole mapping once (with a progress bar on a terminal) so the
  // first forward pass does not stall on page faults.
  void prefault(const std::string& label) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace llmesh
