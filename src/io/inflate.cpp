// Raw DEFLATE decoding (RFC 1951): stored, fixed-Huffman and dynamic-Huffman blocks,
// decoded with canonical Huffman tables one bit at a time (the approach of zlib's
// reference decoder puff.c). Speed is secondary to being small and strictly checked:
// every read is bounds-checked, distances never reach before the output, and the
// output never grows past the size the archive declares. Nothing is reserved from that
// size: the output grows with what the data really produces.
#include "io/inflate.h"

#include <array>

#include "wick/error.h"

namespace wick::io {

namespace {

constexpr int kMaxBits = 15;

struct Huffman {
  std::array<short, kMaxBits + 1> count{};
  std::array<short, 288> symbol{};
};

class Inflater {
 public:
  Inflater(const uint8_t* in, size_t size, size_t expected, const std::string& what)
      : in_(in), size_(size), expected_(expected), what_(what) {}

  std::vector<uint8_t> run() {
    int last;
    do {
      last = bits(1);
      const int type = bits(2);
      if (type == 0) {
        stored();
      } else if (type == 1) {
        fixed();
      } else if (type == 2) {
        dynamic();
      } else {
        fail("invalid block type 3");
      }
    } while (!last);
    if (out_.size() != expected_) {
      fail("inflated to " + std::to_string(out_.size()) + " bytes, the archive says " +
           std::to_string(expected_));
    }
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw_error(ErrorKind::Format, "npz", what_ + ": deflate data: " + msg);
  }

  int bits(int need) {
    uint32_t val = bitbuf_;
    while (bitcnt_ < need) {
      if (pos_ >= size_) fail("truncated");
      val |= uint32_t(in_[pos_++]) << bitcnt_;
      bitcnt_ += 8;
    }
    bitbuf_ = val >> need;
    bitcnt_ -= need;
    return int(val & ((1u << need) - 1));
  }

  void emit(uint8_t b) {
    if (out_.size() >= expected_) fail("output exceeds the declared size " + std::to_string(expected_));
    out_.push_back(b);
  }

  void stored() {
    bitbuf_ = 0;
    bitcnt_ = 0;
    if (size_ - pos_ < 4) fail("truncated stored block header");
    const unsigned len = in_[pos_] | (unsigned(in_[pos_ + 1]) << 8);
    const unsigned nlen = in_[pos_ + 2] | (unsigned(in_[pos_ + 3]) << 8);
    pos_ += 4;
    if (len != (~nlen & 0xFFFFu)) fail("stored block length check failed");
    if (size_ - pos_ < len) fail("truncated stored block");
    for (unsigned i = 0; i < len; ++i) emit(in_[pos_ + i]);
    pos_ += len;
  }

  int decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= kMaxBits; ++len) {
      code |= bits(1);
      const int count = h.count[len];
      if (code - count < first) return h.symbol[size_t(index + (code - first))];
      index += count;
      first += count;
      first <<= 1;
      code <<= 1;
    }
    fail("invalid Huffman code");
  }

  // Builds canonical tables; returns 0 complete, > 0 incomplete, < 0 over-subscribed.
  static int construct(Huffman& h, const short* length, int n) {
    h.count.fill(0);
    for (int s = 0; s < n; ++s) h.count[size_t(length[s])]++;
    if (h.count[0] == n) return 0;
    int left = 1;
    for (int len = 1; len <= kMaxBits; ++len) {
      left <<= 1;
      left -= h.count[len];
      if (left < 0) return left;
    }
    std::array<short, kMaxBits + 1> offs{};
    for (int len = 1; len < kMaxBits; ++len) offs[len + 1] = short(offs[len] + h.count[len]);
    for (int s = 0; s < n; ++s) {
      if (length[s] != 0) h.symbol[size_t(offs[size_t(length[s])]++)] = short(s);
    }
    return left;
  }

  void codes(const Huffman& lencode, const Huffman& distcode) {
    static constexpr short kLBase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                         31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr short kLExt[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                        2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr short kDBase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                         33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                         1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static constexpr short kDExt[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                        6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    int symbol;
    do {
      symbol = decode(lencode);
      if (symbol < 256) {
        emit(uint8_t(symbol));
      } else if (symbol > 256) {
        symbol -= 257;
        if (symbol >= 29) fail("invalid length code");
        const int len = kLBase[symbol] + bits(kLExt[symbol]);
        const int dsym = decode(distcode);
        if (dsym >= 30) fail("invalid distance code");
        const size_t dist = size_t(kDBase[dsym] + bits(kDExt[dsym]));
        if (dist > out_.size()) fail("distance reaches before the start of the output");
        for (int i = 0; i < len; ++i) emit(out_[out_.size() - dist]);
      }
    } while (symbol != 256);
  }

  void fixed() {
    short lengths[288 + 30];
    int s = 0;
    for (; s < 144; ++s) lengths[s] = 8;
    for (; s < 256; ++s) lengths[s] = 9;
    for (; s < 280; ++s) lengths[s] = 7;
    for (; s < 288; ++s) lengths[s] = 8;
    Huffman lencode, distcode;
    construct(lencode, lengths, 288);
    for (s = 0; s < 30; ++s) lengths[s] = 5;
    construct(distcode, lengths, 30);
    codes(lencode, distcode);
  }

  void dynamic() {
    static constexpr short kOrder[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
    short lengths[320] = {};
    const int nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
    if (nlen > 286 || ndist > 30) fail("bad code counts");
    int index = 0;
    for (; index < ncode; ++index) lengths[kOrder[index]] = short(bits(3));
    for (; index < 19; ++index) lengths[kOrder[index]] = 0;
    Huffman lencode, distcode;
    if (construct(lencode, lengths, 19) != 0) fail("incomplete code-length code");
    index = 0;
    while (index < nlen + ndist) {
      int symbol = decode(lencode);
      if (symbol < 16) {
        lengths[index++] = short(symbol);
        continue;
      }
      short len = 0;
      if (symbol == 16) {
        if (index == 0) fail("repeat with no previous length");
        len = lengths[index - 1];
        symbol = 3 + bits(2);
      } else if (symbol == 17) {
        symbol = 3 + bits(3);
      } else {
        symbol = 11 + bits(7);
      }
      if (index + symbol > nlen + ndist) fail("too many code lengths");
      while (symbol--) lengths[index++] = len;
    }
    if (lengths[256] == 0) fail("no end-of-block code");
    int err = construct(lencode, lengths, nlen);
    if (err < 0 || (err > 0 && nlen - lencode.count[0] != 1)) fail("bad literal/length code");
    err = construct(distcode, lengths + nlen, ndist);
    if (err < 0 || (err > 0 && ndist - distcode.count[0] != 1)) fail("bad distance code");
    codes(lencode, distcode);
  }

  const uint8_t* in_;
  size_t size_, pos_ = 0;
  size_t expected_;
  const std::string& what_;
  uint32_t bitbuf_ = 0;
  int bitcnt_ = 0;
  std::vector<uint8_t> out_;
};

}  // namespace

std::vector<uint8_t> inflate_raw(const uint8_t* data, size_t size, size_t expected, const std::string& what) {
  // DEFLATE cannot expand beyond ~1032:1; a larger claim is a forged size (a zip bomb).
  if (expected / 1032 > size + 1) {
    throw_error(ErrorKind::Format, "npz",
                what + ": declares " + std::to_string(expected) + " bytes from " + std::to_string(size) +
                    " compressed, beyond what deflate can produce");
  }
  return Inflater(data, size, expected, what).run();
}

}  // namespace wick::io
