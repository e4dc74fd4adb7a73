// Shared plumbing of the file readers and writers: a read-only memory mapping, a
// bounds-checked little-endian cursor whose every failure is Error(Format) naming the
// file and the field, and atomic output files.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "wick/error.h"

namespace wick::io {

// The mapped bytes of a file (nullptr/0 for an empty file). Throws Io naming the path,
// without blocking, when it is not a regular file (a FIFO, a device, a directory). While
// a mapping lives, its file is an input: OutputFile refuses to replace it.
struct Mapping {
  const uint8_t* data = nullptr;
  size_t size = 0;
  std::shared_ptr<const void> holder;  // unmaps when the last owner goes
};
Mapping map_file(const std::string& path, const char* op);
// A private copy of an in-memory image with the same ownership shape.
Mapping copy_buffer(const void* data, size_t size);

// An output file written atomically: the bytes go to a new temporary file in the
// target's directory, which commit() flushes, fsyncs and renames over the target (then
// fsyncs the directory). Until then the target is untouched, and a failure (a full disk,
// a file-size limit) or an OutputFile destroyed without commit() removes the temporary
// file, so a reader never sees a truncated output. The target's permissions are kept
// when it exists; a symlink is followed. Refused (InvalidArgument) when the target is
// not a regular file or is a file this process has mapped for reading (the input of
// the write: the same st_dev and st_ino, however the path is spelled). Io names the
// path and errno's text on failure.
class OutputFile {
 public:
  OutputFile(const std::string& path, const char* op);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void write(const void* data, size_t n);
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::string path_, target_, tmp_;
  const char* op_;
  int fd_ = -1;
};

// An OutputFile holding `bytes`.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes, const char* op);

// [op] file: message   as a Format error.
[[noreturn]] void format_error(const char* op, const std::string& file, const std::string& message);

class Cursor {
 public:
  Cursor(const uint8_t* data, size_t size, const char* op, const std::string& file)
      : p_(data), size_(size), op_(op), file_(file) {}
  size_t pos() const { return pos_; }
  size_t remaining() const { return size_ - pos_; }
  const uint8_t* here() const { return p_ + pos_; }
  void need(uint64_t n, const std::string& field) const {
    if (n > remaining()) {
      format_error(op_, file_,
                   field + ": needs " + std::to_string(n) + " bytes at offset " + std::to_string(pos_) +
                       ", " + std::to_string(remaining()) + " left (truncated file)");
    }
  }
  template <class T>
  T read(const std::string& field) {
    need(sizeof(T), field);
    T v;
    std::memcpy(&v, p_ + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  void skip(uint64_t n, const std::string& field) {
    need(n, field);
    pos_ += size_t(n);
  }
  void seek(size_t pos) { pos_ = pos; }
  [[noreturn]] void fail(const std::string& field, const std::string& message) const {
    format_error(op_, file_, field + ": " + message);
  }

 private:
  const uint8_t* p_;
  size_t size_, pos_ = 0;
  const char* op_;
  const std::string& file_;
};

// Little-endian appends.
template <class T>
void put(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}
inline void put_bytes(std::vector<uint8_t>& out, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  out.insert(out.end(), b, b + n);
}

}  // namespace wick::io
