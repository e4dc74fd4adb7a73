// Memory mapping and file writing for the readers and writers in src/io.
#include "io/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace wick::io {

void format_error(const char* op, const std::string& file, const std::string& message) {
  throw_error(ErrorKind::Format, op, file + ": " + message);
}

Mapping map_file(const std::string& path, const char* op) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_error(ErrorKind::Io, op, path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw_error(ErrorKind::Io, op, path + ": cannot stat: " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_error(ErrorKind::Io, op, path + ": not a regular file");
  }
  Mapping m;
  m.size = size_t(st.st_size);
  if (m.size == 0) {
    ::close(fd);
    return m;
  }
  void* p = ::mmap(nullptr, m.size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw_error(ErrorKind::Io, op, path + ": mmap failed: " + std::strerror(err));
  const size_t size = m.size;
  m.data = static_cast<const uint8_t*>(p);
  m.holder = std::shared_ptr<const void>(p, [size](const void* q) { ::munmap(const_cast<void*>(q), size); });
  return m;
}

Mapping copy_buffer(const void* data, size_t size) {
  auto buf = std::make_shared<std::vector<uint8_t>>(static_cast<const uint8_t*>(data),
                                                    static_cast<const uint8_t*>(data) + size);
  Mapping m;
  m.data = buf->data();
  m.size = size;
  m.holder = buf;
  return m;
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes, const char* op) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw_error(ErrorKind::Io, op, path + ": cannot create: " + std::strerror(errno));
  const size_t n = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  const bool ok = n == bytes.size() && std::fflush(f) == 0;
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    throw_error(ErrorKind::Io, op, path + ": write failed: " + std::strerror(err));
  }
}

}  // namespace wick::io
