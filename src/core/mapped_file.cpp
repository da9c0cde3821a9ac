#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/host_memory.h"
#include "core/log.h"
#include "core/progress.h"

namespace llmesh {

namespace {

constexpr size_t kHugePage = size_t(2) << 20;
constexpr size_t kChunk = size_t(64) << 20;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

WeightResidency parse_weight_residency(const std::string& text) {
  if (text == "auto") return WeightResidency::Auto;
  if (text == "ram") return WeightResidency::Ram;
  if (text == "mmap") return WeightResidency::Mmap;
  fail("unknown weight residency '{}' (expected auto, ram or mmap)", text);
}

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd >= 0, "{}: cannot open: {}", path, std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path);
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    // Reserve 2 MiB-aligned address space first, so memory moved here later can keep huge pages.
    reserved_ = round_up(size_, kHugePage);
    void* area = ::mmap(nullptr, reserved_ + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (area == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail("{}: cannot reserve {} bytes of address space: {}", path, reserved_, std::strerror(err));
    }
    auto* base = static_cast<uint8_t*>(area);
    auto* aligned = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(base), kHugePage));
    if (aligned > base) ::munmap(base, size_t(aligned - base));
    const size_t tail = size_t(base + reserved_ + kHugePage - (aligned + reserved_));
    if (tail > 0) ::munmap(aligned + reserved_, tail);
    void* p = ::mmap(aligned, size_, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::munmap(aligned, reserved_);
      ::close(fd);
      fail("{}: cannot map {} bytes: {}", path, size_, std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), reserved_);
}

void MappedFile::load(const std::string& label, WeightResidency mode) const {
  if (!data_ || in_ram_) return;
  if (mode == WeightResidency::Auto) {
    // Leave room for the KV cache, activations and everything else on the machine.
    const size_t available = available_memory_bytes();
    mode = available > 0 && size_ + size_ / 4 + (size_t(2) << 30) < available ? WeightResidency::Ram
                                                                              : WeightResidency::Mmap;
  }
  if (mode == WeightResidency::Ram && copy_to_huge_pages(label)) return;
  touch_pages(label);
}

void MappedFile::touch_pages(const std::string& label) const {
  ::madvise(const_cast<uint8_t*>(data_), size_, MADV_WILLNEED);
  ProgressBar bar(label, size_, "B");
  constexpr size_t kPage = 4096;
  volatile uint8_t sink = 0;
  for (size_t off = 0; off < size_; off += kChunk) {
    size_t end = std::min(size_, off + kChunk);
    for (size_t p = off; p < end; p += kPage) sink = sink + data_[p];
    bar.update(end);
  }
  bar.finish();
}

bool MappedFile::copy_to_huge_pages(const std::string& label) const {
  // A 2 MiB-aligned anonymous area, filled from the mapping, then moved over it.
  void* area = ::mmap(nullptr, reserved_ + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (area == MAP_FAILED) {
    log_warn("{}: no memory for a resident copy ({}); using the file mapping", path_, std::strerror(errno));
    return false;
  }
  auto* base = static_cast<uint8_t*>(area);
  auto* copy = reinterpret_cast<uint8_t*>(round_up(reinterpret_cast<uintptr_t>(base), kHugePage));
  if (copy > base) ::munmap(base, size_t(copy - base));
  const size_t tail = size_t(base + reserved_ + kHugePage - (copy + reserved_));
  if (tail > 0) ::munmap(copy + reserved_, tail);
  ::madvise(copy, reserved_, MADV_HUGEPAGE);
  ::madvise(const_cast<uint8_t*>(data_), size_, MADV_SEQUENTIAL);

  ProgressBar bar(label, size_, "B");
  for (size_t off = 0; off < size_; off += kChunk) {
    const size_t n = std::min(kChunk, size_ - off);
    std::memcpy(copy + off, data_ + off, n);
    ::madvise(const_cast<uint8_t*>(data_ + off), n, MADV_DONTNEED);  // drop the private file pages as we go
    bar.update(off + n);
  }
  bar.finish();
  ::mprotect(copy, reserved_, PROT_READ);
  void* moved = ::mremap(copy, reserved_, reserved_, MREMAP_MAYMOVE | MREMAP_FIXED, const_cast<uint8_t*>(data_));
  if (moved == MAP_FAILED) {
    log_warn("{}: cannot move the resident copy over the mapping ({}); using the file mapping", path_,
             std::strerror(errno));
    ::munmap(copy, reserved_);
    touch_pages(label);
    return true;
  }
  in_ram_ = true;
  return true;
}

}  // namespace llmesh
