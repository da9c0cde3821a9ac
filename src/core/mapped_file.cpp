#include "core/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/progress.h"

namespace llmesh {

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
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail("{}: cannot map {} bytes: {}", path, size_, std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void MappedFile::prefault(const std::string& label) const {
  if (!data_) return;
  ::madvise(const_cast<uint8_t*>(data_), size_, MADV_WILLNEED);
  ProgressBar bar(label, size_, "B");
  constexpr size_t kPage = 4096, kChunk = 64u << 20;
  volatile uint8_t sink = 0;
  for (size_t off = 0; off < size_; off += kChunk) {
    size_t end = std::min(size_, off + kChunk);
    for (size_t p = off; p < end; p += kPage) sink = sink + data_[p];
    bar.update(end);
  }
  bar.finish();
}

}  // namespace llmesh
