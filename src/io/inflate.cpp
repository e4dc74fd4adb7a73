// Raw DEFLATE decoding (RFC 1951) with zlib's inflate. The output never grows past
// the size the archive declares, and only as far as the data really produces: it
// starts at a few times the compressed size and doubles, so a forged size does not
// make it allocate more than about twice what the data yields. A stream that ends
// short of the declared size, needs more room, or is malformed is a Format error.
// zlib's counters of available bytes are 32-bit (uInt): input and output are handed
// over in pieces of at most 4 GiB - 1.
#include "io/inflate.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

#include "wick/error.h"

namespace wick::io {

namespace {

constexpr size_t kMaxPiece = std::numeric_limits<uInt>::max();
constexpr size_t kFirstOutput = size_t(1) << 20;  // the least first allocation (1 MiB)

class Stream {
 public:
  explicit Stream(const std::string& what) : what_(what) {
    const int rc = inflateInit2(&s_, -MAX_WBITS);  // raw deflate: no zlib header or trailer
    if (rc == Z_MEM_ERROR)
      throw_error(ErrorKind::OutOfMemory, "npz", what_ + ": zlib has no memory for a stream");
    if (rc != Z_OK)
      throw_error(ErrorKind::Format, "npz", what_ + ": zlib inflateInit2 failed: " + zError(rc));
  }
  ~Stream() { inflateEnd(&s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  [[noreturn]] void fail(const std::string& msg) const {
    throw_error(ErrorKind::Format, "npz", what_ + ": deflate data: " + msg);
  }

  // Inflates in[0, in_size) into `out`, at most `limit` bytes; returns at the end of
  // the stream with `out` holding what it produced. Once `limit` bytes are out, zlib
  // gets one spare byte of room: a stream that writes it is longer than declared.
  void run(const uint8_t* in, size_t in_size, size_t limit, std::vector<uint8_t>& out) {
    uint8_t spare;
    s_.next_in = const_cast<Bytef*>(in);
    size_t in_left = in_size;
    while (true) {
      if (s_.avail_in == 0 && in_left > 0) {
        s_.avail_in = uInt(std::min(in_left, kMaxPiece));
        in_left -= s_.avail_in;
      }
      if (s_.avail_out == 0) {
        const size_t produced = s_.total_out;
        if (produced > limit) fail("output exceeds the declared size " + std::to_string(limit));
        if (produced == out.size() && out.size() < limit)
          out.resize(std::min(limit, std::max({out.size() * 2, in_size * 4, kFirstOutput})));
        if (produced < out.size()) {
          s_.next_out = out.data() + produced;
          s_.avail_out = uInt(std::min(out.size() - produced, kMaxPiece));
        } else {
          s_.next_out = &spare;
          s_.avail_out = 1;
        }
      }
      const int rc = inflate(&s_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        if (s_.total_out > limit) fail("output exceeds the declared size " + std::to_string(limit));
        out.resize(s_.total_out);
        return;
      }
      if (rc == Z_OK) continue;
      // Z_BUF_ERROR (no progress) with room to write means the input ran out.
      if (rc == Z_BUF_ERROR && s_.avail_in == 0 && in_left == 0) fail("truncated");
      if (rc == Z_MEM_ERROR) throw_error(ErrorKind::OutOfMemory, "npz", what_ + ": zlib ran out of memory");
      fail(s_.msg ? s_.msg : zError(rc));
    }
  }

 private:
  z_stream s_{};
  const std::string& what_;
};

}  // namespace

std::vector<uint8_t> inflate_raw(const uint8_t* data, size_t size, size_t expected, const std::string& what) {
  // DEFLATE cannot expand beyond ~1032:1; a larger claim is a forged size (a zip bomb).
  if (expected / 1032 > size + 1) {
    throw_error(ErrorKind::Format, "npz",
                what + ": declares " + std::to_string(expected) + " bytes from " + std::to_string(size) +
                    " compressed, beyond what deflate can produce");
  }
  std::vector<uint8_t> out;
  Stream stream(what);
  stream.run(data, size, expected, out);
  if (out.size() != expected) {
    stream.fail("inflated to " + std::to_string(out.size()) + " bytes, the archive says " +
                std::to_string(expected));
  }
  return out;
}

uint32_t crc32(const uint8_t* p, size_t n) { return uint32_t(crc32_z(0, p, n)); }

}  // namespace wick::io
