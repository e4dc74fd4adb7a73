// Memory mapping and atomic output files for the readers and writers in src/io.
#include "io/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>

namespace wick::io {

namespace {

// The files this process has mapped for reading, by (st_dev, st_ino), with a count of
// live mappings each: OutputFile refuses to replace one of them.
std::mutex g_inputs_mu;
std::map<std::pair<dev_t, ino_t>, int>& inputs() {
  static auto* m =
      new std::map<std::pair<dev_t, ino_t>, int>;  // never destroyed: mappings may outlive statics
  return *m;
}
bool is_input(dev_t dev, ino_t ino) {
  std::lock_guard<std::mutex> lock(g_inputs_mu);
  return inputs().count({dev, ino}) != 0;
}

std::string errno_text(int err) { return std::strerror(err); }

}  // namespace

void format_error(const char* op, const std::string& file, const std::string& message) {
  throw_error(ErrorKind::Format, op, file + ": " + message);
}

Mapping map_file(const std::string& path, const char* op) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer before the
  // regular-file check below could refuse it. It has no effect on a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw_error(ErrorKind::Io, op, path + ": cannot open: " + errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw_error(ErrorKind::Io, op, path + ": cannot stat: " + errno_text(err));
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
  if (p == MAP_FAILED) throw_error(ErrorKind::Io, op, path + ": mmap failed: " + errno_text(err));
  const size_t size = m.size;
  const std::pair<dev_t, ino_t> id{st.st_dev, st.st_ino};
  {
    std::lock_guard<std::mutex> lock(g_inputs_mu);
    ++inputs()[id];
  }
  m.data = static_cast<const uint8_t*>(p);
  m.holder = std::shared_ptr<const void>(p, [size, id](const void* q) {
    ::munmap(const_cast<void*>(q), size);
    std::lock_guard<std::mutex> lock(g_inputs_mu);
    if (--inputs()[id] == 0) inputs().erase(id);
  });
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

// ---- OutputFile ---------------------------------------------------------------------

namespace {

// Where an output at `path` is written (a symlink is followed, keeping the link), after
// the checks every writer makes; `st` is the existing file's stat (st_mode 0 when none).
std::string output_target(const std::string& path, const std::string& op, struct stat& st) {
  std::string target = path;
  if (::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    if (char* real = ::realpath(path.c_str(), nullptr)) {
      target = real;
      std::free(real);
    }
  }
  if (::stat(target.c_str(), &st) != 0) {
    st = {};
    return target;
  }
  if (!S_ISREG(st.st_mode)) {
    throw_error(ErrorKind::InvalidArgument, op, path + ": not a regular file; outputs replace a file");
  }
  if (is_input(st.st_dev, st.st_ino)) {
    throw_error(ErrorKind::InvalidArgument, op,
                path + ": is a file this process is reading (the input); write the output to another path");
  }
  return target;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const char* op) : path_(path), op_(op) {
  struct stat st {};
  target_ = output_target(path, op, st);
  const bool keep_mode = st.st_mode != 0;
  const size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; fd_ < 0; ++attempt) {
    tmp_ = (slash == std::string::npos ? std::string() : dir) + "." + base + ".tmp" +
           std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
      const int err = errno;
      tmp_.clear();
      throw_error(ErrorKind::Io, op_, path_ + ": cannot create a file in " + dir + ": " + errno_text(err));
    }
  }
  if (keep_mode && ::fchmod(fd_, st.st_mode & 07777) != 0) fail("cannot set permissions", errno);
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void OutputFile::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  throw_error(ErrorKind::Io, op_, path_ + ": " + what + ": " + errno_text(err));
}

void OutputFile::write(const void* data, size_t n) {
  if (fd_ < 0) throw_error(ErrorKind::InvalidArgument, op_, path_ + ": written after commit");
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd_, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail("write failed", w < 0 ? errno : EIO);
    p += w;
    n -= size_t(w);
  }
}

void OutputFile::commit() {
  if (fd_ < 0) throw_error(ErrorKind::InvalidArgument, op_, path_ + ": committed twice");
  if (::fsync(fd_) != 0) fail("fsync failed", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("close failed", errno);
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail("cannot replace the file", errno);
  tmp_.clear();
  // The rename is durable once the directory is.
  const size_t slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : target_.substr(0, slash + 1);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes, const char* op) {
  OutputFile f(path, op);
  f.write(bytes.data(), bytes.size());
  f.commit();
}

}  // namespace wick::io

namespace wick {

void check_output_path(const std::string& path, const std::string& op) {
  struct stat st {};
  (void)io::output_target(path, op, st);
}

}  // namespace wick
