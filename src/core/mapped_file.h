// A read-only file mapped into memory. Model weights are used in place at the
// mapping's address; load() decides what backs that address:
//   * Ram:  the bytes are copied into anonymous memory backed by 2 MiB
//           transparent huge pages, moved over the file mapping (same address,
//           so views into it stay valid). Decode streams every weight once per
//           token; through 4 KiB page-cache pages the TLB misses cost a large
//           share of the memory bandwidth (see docs/engine.md).
//   * Mmap: the file's page-cache pages stay mapped; the OS may drop them under
//           memory pressure (models larger than RAM).
//   * Auto: Ram when the file fits in available memory with headroom, else Mmap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace llmesh {

enum class WeightResidency { Auto, Ram, Mmap };

// "auto" | "ram" | "mmap" (Error otherwise).
WeightResidency parse_weight_residency(const std::string& text);

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

  // Reads the whole file once (with a progress bar on a terminal) so the first
  // forward pass does not stall on page faults; `mode` picks the backing (above).
  // Logically const: the bytes and their address do not change.
  void load(const std::string& label, WeightResidency mode) const;
  bool in_ram() const { return in_ram_; }

 private:
  void touch_pages(const std::string& label) const;
  bool copy_to_huge_pages(const std::string& label) const;

  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t reserved_ = 0;  // bytes of address space at data_ (size_ rounded up to 2 MiB)
  mutable bool in_ram_ = false;
};

}  // namespace llmesh
