// NumPy .npy (format versions 1-3) and .npz (a zip of .npy files). The reader takes
// either byte order and C or Fortran order; .npz reading handles stored entries
// (np.savez) and deflated ones (np.savez_compressed, via io/inflate.h), zip64
// records included. Writing produces .npy v1 and stored .npz entries. Reader and writer
// share their limits (kMaxDims, the shape rule of base/checked.h), so what wick writes,
// NumPy and wick read back. An archive whose entries share bytes is refused: each entry's
// data is then read once, and the output is bounded by the file (times deflate's ratio).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "base/checked.h"
#include "base/error_boundary.h"
#include "io/file.h"
#include "io/inflate.h"
#include "wick/io.h"

namespace wick {

namespace {

constexpr const char* kNpy = "npy";
constexpr const char* kNpz = "npz";
// The most dims of an array: NumPy's NPY_MAXDIMS (64 since NumPy 2.0).
constexpr size_t kMaxDims = 64;

struct NpyType {
  char kind;  // 'f', 'i', 'u', 'b'
  size_t size;
  DType dtype;
};
constexpr NpyType kNpyTypes[] = {{'f', 2, DType::F16}, {'f', 4, DType::F32}, {'f', 8, DType::F64},
                                 {'i', 4, DType::I32}, {'i', 8, DType::I64}, {'u', 4, DType::U32},
                                 {'u', 1, DType::U8},  {'b', 1, DType::U8}};

// Finds `'key':` in the header dict and returns the position just after the colon.
size_t find_key(const std::string& h, const std::string& key, io::Cursor& c) {
  for (const char q : {'\'', '"'}) {
    const std::string pat = std::string(1, q) + key + std::string(1, q);
    size_t p = h.find(pat);
    if (p == std::string::npos) continue;
    p += pat.size();
    while (p < h.size() && h[p] == ' ') ++p;
    if (p >= h.size() || h[p] != ':') c.fail("header " + key, "missing ':'");
    ++p;
    while (p < h.size() && h[p] == ' ') ++p;
    return p;
  }
  c.fail("header", fmt::format("no '{}' key", key));
}

struct NpyHeader {
  DType dtype = DType::F32;
  size_t elem_size = 4;
  bool swap = false;
  bool fortran = false;
  std::vector<size_t> shape;
};

NpyHeader parse_header(const std::string& h, io::Cursor& c) {
  NpyHeader out;
  size_t p = find_key(h, "descr", c);
  if (p >= h.size() || (h[p] != '\'' && h[p] != '"')) c.fail("header descr", "not a string");
  const size_t e = h.find(h[p], p + 1);
  if (e == std::string::npos) c.fail("header descr", "unterminated string");
  const std::string descr = h.substr(p + 1, e - p - 1);
  if (descr.size() < 3) c.fail("header descr", fmt::format("unsupported dtype '{}'", descr));
  const char order = descr[0];
  const char kind = descr[1];
  size_t size = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (descr[i] < '0' || descr[i] > '9' || size > 1000)
      c.fail("header descr", fmt::format("bad dtype '{}'", descr));
    size = size * 10 + size_t(descr[i] - '0');
  }
  const NpyType* t = nullptr;
  for (const auto& nt : kNpyTypes) {
    if (nt.kind == kind && nt.size == size) t = &nt;
  }
  if (!t || (order != '<' && order != '>' && order != '|' && order != '=')) {
    throw_error(ErrorKind::UnsupportedDType, kNpy, fmt::format("dtype '{}' has no wick equivalent", descr));
  }
  out.dtype = t->dtype;
  out.elem_size = t->size;
  out.swap = order == '>' && size > 1;

  p = find_key(h, "fortran_order", c);
  if (h.compare(p, 4, "True") == 0) {
    out.fortran = true;
  } else if (h.compare(p, 5, "False") != 0) {
    c.fail("header fortran_order", "neither True nor False");
  }

  p = find_key(h, "shape", c);
  if (p >= h.size() || h[p] != '(') c.fail("header shape", "not a tuple");
  ++p;
  while (true) {
    while (p < h.size() && (h[p] == ' ' || h[p] == ',')) ++p;
    if (p >= h.size()) c.fail("header shape", "unterminated tuple");
    if (h[p] == ')') break;
    if (h[p] < '0' || h[p] > '9') c.fail("header shape", "dims must be non-negative integers");
    uint64_t d = 0;
    while (p < h.size() && h[p] >= '0' && h[p] <= '9') {
      if (d > (std::numeric_limits<uint64_t>::max() - 9) / 10) c.fail("header shape", "dim overflows");
      d = d * 10 + uint64_t(h[p] - '0');
      ++p;
    }
    if (p < h.size() && h[p] == 'L') ++p;  // Python 2 longs
    out.shape.push_back(size_t(d));
    if (out.shape.size() > kMaxDims) c.fail("header shape", fmt::format("more than {} dims", kMaxDims));
  }
  uint64_t count = 0;
  if (!shape_fits(out.shape, out.elem_size, count)) c.fail("header shape", "element count overflows");
  return out;
}

void byteswap(uint8_t* p, size_t n, size_t size) {
  for (size_t i = 0; i < n; ++i) std::reverse(p + i * size, p + (i + 1) * size);
}

Tensor parse_npy_impl(const uint8_t* data, size_t size, const std::string& name, Device device) {
  io::Cursor c(data, size, kNpy, name);
  static constexpr uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  c.need(6, "magic");
  if (std::memcmp(c.here(), kMagic, 6) != 0) c.fail("magic", "not \\x93NUMPY");
  c.skip(6, "magic");
  const uint8_t major = c.read<uint8_t>("version");
  c.read<uint8_t>("minor version");
  uint64_t hlen;
  if (major == 1) {
    hlen = c.read<uint16_t>("header length");
  } else if (major == 2 || major == 3) {
    hlen = c.read<uint32_t>("header length");
  } else {
    c.fail("version", fmt::format("unsupported format version {}", major));
  }
  c.need(hlen, "header");
  const std::string h(reinterpret_cast<const char*>(c.here()), size_t(hlen));
  c.skip(hlen, "header");
  const NpyHeader hd = parse_header(h, c);
  size_t count = 1;
  for (size_t d : hd.shape) count *= d;
  if (count > c.remaining() / hd.elem_size) {
    c.fail("data", fmt::format("shape needs {} elements of {} bytes, {} bytes left", count, hd.elem_size,
                               c.remaining()));
  }
  // Big-endian data is swapped in a copy; little-endian data is read in place.
  std::vector<uint8_t> swapped;
  const uint8_t* bytes = c.here();
  if (hd.swap) {
    swapped.assign(bytes, bytes + count * hd.elem_size);
    byteswap(swapped.data(), count, hd.elem_size);
    bytes = swapped.data();
  }
  if (!hd.fortran || hd.shape.size() < 2) {
    return Tensor::from_bytes(bytes, count, Shape(hd.shape), hd.dtype, device);
  }
  // Fortran order: the bytes are the C-order array of the reversed shape, transposed.
  std::vector<size_t> rev(hd.shape.rbegin(), hd.shape.rend());
  std::vector<int64_t> perm;
  for (size_t i = rev.size(); i-- > 0;) perm.push_back(int64_t(i));
  return Tensor::from_bytes(bytes, count, Shape(rev), hd.dtype, device).permute(perm).contiguous();
}

// ---- zip -----------------------------------------------------------------------

using io::crc32;

template <class T>
T load(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

Tensor parse_npy(const void* data, size_t size, const std::string& name, Device device) {
  return guarded(kNpy, ErrorKind::Format,
                 [&] { return parse_npy_impl(static_cast<const uint8_t*>(data), size, name, device); });
}

Tensor read_npy(const std::string& path, Device device) {
  return guarded(kNpy, ErrorKind::Format, [&] {
    io::Mapping m = io::map_file(path, kNpy);
    return parse_npy_impl(m.data, m.size, path, device);
  });
}

namespace {

std::vector<uint8_t> serialize_npy(const Tensor& t) {
  const char* descr = nullptr;
  switch (t.dtype()) {
    case DType::U8:
      descr = "|u1";
      break;
    case DType::U32:
      descr = "<u4";
      break;
    case DType::I32:
      descr = "<i4";
      break;
    case DType::I64:
      descr = "<i8";
      break;
    case DType::F16:
      descr = "<f2";
      break;
    case DType::F32:
      descr = "<f4";
      break;
    case DType::F64:
      descr = "<f8";
      break;
    case DType::BF16:
      throw_error(
          ErrorKind::UnsupportedDType, "npy_write",
          fmt::format("{} bf16: NumPy has no bf16 dtype; convert with to_dtype first", t.shape().str()));
  }
  uint64_t count = 0;
  if (t.rank() > kMaxDims || !shape_fits(t.dims(), dtype_size(t.dtype()), count)) {
    throw_error(ErrorKind::InvalidArgument, "npy_write",
                fmt::format("{} {}: NumPy reads at most {} dims of at most 2^63-1 bytes", t.shape().str(),
                            dtype_name(t.dtype()), kMaxDims));
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.rank(); ++i)
    shape += fmt::format("{}{}", t.dims()[i], t.rank() == 1 ? "," : (i + 1 < t.rank() ? ", " : ""));
  shape += ")";
  std::string h = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  // pad with spaces + '\n' so the data starts at a multiple of 64 (what NumPy writes)
  const size_t total = (10 + h.size() + 1 + 63) / 64 * 64;
  h.resize(total - 10 - 1, ' ');
  h += '\n';
  // At most kMaxDims dims of at most 19 digits: the header always fits v1's 16-bit length.
  static_assert(kMaxDims * 21 + 128 < 0xFFFF);
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
  io::put<uint16_t>(out, uint16_t(h.size()));
  io::put_bytes(out, h.data(), h.size());
  const size_t at = out.size();
  out.resize(at + t.elem_count() * dtype_size(t.dtype()));
  if (t.elem_count()) t.to_bytes(out.data() + at);
  return out;
}

}  // namespace

std::vector<uint8_t> npy_serialize(const Tensor& t) {
  return guarded("npy_write", ErrorKind::InvalidArgument, [&] { return serialize_npy(t); });
}

void write_npy(const std::string& path, const Tensor& t) {
  guarded("npy_write", ErrorKind::InvalidArgument,
          [&] { io::write_file(path, serialize_npy(t), "npy_write"); });
}

namespace {

std::vector<std::pair<std::string, Tensor>> parse_npz_impl(const void* data, size_t size,
                                                           const std::string& name, Device device) {
  const auto* p = static_cast<const uint8_t*>(data);
  io::Cursor c(p, size, kNpz, name);
  if (size < 22) c.fail("end of central directory", "file too small for a zip");
  // The end-of-central-directory record is within the last 22 + 65535 bytes.
  size_t eocd = std::string::npos;
  for (size_t i = size - 22 + 1; i-- > 0 && size - i <= 22 + 65535;) {
    if (load<uint32_t>(p + i) == 0x06054b50u) {
      eocd = i;
      break;
    }
  }
  if (eocd == std::string::npos) c.fail("end of central directory", "signature not found (not a zip file)");
  uint64_t n_entries = load<uint16_t>(p + eocd + 10);
  uint64_t cd_size = load<uint32_t>(p + eocd + 12);
  uint64_t cd_off = load<uint32_t>(p + eocd + 16);
  if ((n_entries == 0xFFFF || cd_off == 0xFFFFFFFFu || cd_size == 0xFFFFFFFFu) && eocd >= 20 &&
      load<uint32_t>(p + eocd - 20) == 0x07064b50u) {
    const uint64_t z = load<uint64_t>(p + eocd - 20 + 8);
    if (z > size - 56 || size < 56 || load<uint32_t>(p + z) != 0x06064b50u) {
      c.fail("zip64 end of central directory", "record missing or out of range");
    }
    n_entries = load<uint64_t>(p + z + 32);
    cd_size = load<uint64_t>(p + z + 40);
    cd_off = load<uint64_t>(p + z + 48);
  }
  if (cd_off > size || cd_size > size - cd_off)
    c.fail("central directory", "extends past the end of the file");
  if (n_entries > cd_size / 46) c.fail("central directory", fmt::format("{} entries cannot fit", n_entries));

  std::vector<std::pair<std::string, Tensor>> out;
  std::map<uint64_t, uint64_t> spans;  // [local header, end of data) of each entry read: none may overlap
  uint64_t at = cd_off;
  for (uint64_t e = 0; e < n_entries; ++e) {
    const std::string where = fmt::format("central directory entry {}", e);
    if (at + 46 > cd_off + cd_size || load<uint32_t>(p + at) != 0x02014b50u) c.fail(where, "bad signature");
    const uint16_t method = load<uint16_t>(p + at + 10);
    const uint32_t crc = load<uint32_t>(p + at + 16);
    uint64_t csize = load<uint32_t>(p + at + 20);
    uint64_t usize = load<uint32_t>(p + at + 24);
    const uint16_t nlen = load<uint16_t>(p + at + 28), xlen = load<uint16_t>(p + at + 30),
                   clen = load<uint16_t>(p + at + 32);
    uint64_t loff = load<uint32_t>(p + at + 42);
    if (at + 46 + uint64_t(nlen) + xlen + clen > cd_off + cd_size)
      c.fail(where, "name or extra field out of range");
    std::string ename(reinterpret_cast<const char*>(p + at + 46), nlen);
    // zip64 extended information: the 0xFFFFFFFF fields, in order usize, csize, offset
    for (uint64_t x = at + 46 + nlen; x + 4 <= at + 46 + nlen + xlen;) {
      const uint16_t id = load<uint16_t>(p + x), len = load<uint16_t>(p + x + 2);
      if (x + 4 + len > at + 46 + nlen + xlen) c.fail(where, "extra field out of range");
      if (id == 0x0001) {
        uint64_t q = x + 4;
        auto take = [&](uint64_t& field) {
          if (field != 0xFFFFFFFFu) return;
          if (q + 8 > x + 4 + len) c.fail(where, "short zip64 extra field");
          field = load<uint64_t>(p + q);
          q += 8;
        };
        take(usize);
        take(csize);
        take(loff);
      }
      x += 4 + len;
    }
    at += 46 + uint64_t(nlen) + xlen + clen;
    if (method != 0 && method != 8) {
      c.fail("entry '" + ename + "'",
             fmt::format("unsupported compression method {} (stored and deflate are read)", method));
    }
    if (method == 0 && csize != usize) c.fail("entry '" + ename + "'", "stored entry with differing sizes");
    if (loff > size || size - loff < 30 || load<uint32_t>(p + loff) != 0x04034b50u) {
      c.fail("entry '" + ename + "' local header", "missing or out of range");
    }
    const uint64_t data_at = loff + 30 + load<uint16_t>(p + loff + 26) + load<uint16_t>(p + loff + 28);
    if (data_at > size || csize > size - data_at)
      c.fail("entry '" + ename + "' data", "runs past the end of the file");
    const uint64_t end = data_at + csize;
    auto next = spans.lower_bound(loff);
    if ((next != spans.end() && next->first < end) ||
        (next != spans.begin() && std::prev(next)->second > loff)) {
      c.fail("entry '" + ename + "'", "shares bytes with another entry (overlapping entries are refused)");
    }
    spans.emplace(loff, end);
    std::vector<uint8_t> inflated;
    const uint8_t* body = p + data_at;
    if (method == 8) {
      inflated = io::inflate_raw(body, size_t(csize), size_t(usize), name + ":" + ename);
      body = inflated.data();
    }
    if (crc32(body, size_t(usize)) != crc) c.fail("entry '" + ename + "' data", "CRC-32 mismatch");
    std::string key = ename;
    if (key.size() > 4 && key.compare(key.size() - 4, 4, ".npy") == 0) key.resize(key.size() - 4);
    out.emplace_back(key, parse_npy_impl(body, size_t(usize), name + ":" + ename, device));
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, Tensor>> parse_npz(const void* data, size_t size, const std::string& name,
                                                      Device device) {
  return guarded(kNpz, ErrorKind::Format, [&] { return parse_npz_impl(data, size, name, device); });
}

std::vector<std::pair<std::string, Tensor>> read_npz(const std::string& path, Device device) {
  return guarded(kNpz, ErrorKind::Format, [&] {
    io::Mapping m = io::map_file(path, kNpz);
    return parse_npz_impl(m.data, m.size, path, device);
  });
}

namespace {

void write_npz_impl(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  std::vector<uint8_t> out, cd;
  for (const auto& [key, t] : tensors) {
    const std::string ename = key + ".npy";
    const std::vector<uint8_t> body = serialize_npy(t);
    if (body.size() >= 0xFFFFFFFFu || out.size() >= 0xFFFFFFFFu || ename.size() > 0xFFFF) {
      throw_error(
          ErrorKind::InvalidArgument, "npz_write",
          fmt::format("entry '{}': {} bytes needs zip64, which the writer does not emit", key, body.size()));
    }
    const uint32_t crc = crc32(body.data(), body.size());
    const uint32_t off = uint32_t(out.size());
    // local file header: version 20, no flags, stored, DOS date 1980-01-01
    io::put<uint32_t>(out, 0x04034b50u);
    io::put<uint16_t>(out, 20);
    io::put<uint16_t>(out, 0);
    io::put<uint16_t>(out, 0);
    io::put<uint16_t>(out, 0);
    io::put<uint16_t>(out, 0x21);
    io::put<uint32_t>(out, crc);
    io::put<uint32_t>(out, uint32_t(body.size()));
    io::put<uint32_t>(out, uint32_t(body.size()));
    io::put<uint16_t>(out, uint16_t(ename.size()));
    io::put<uint16_t>(out, 0);
    io::put_bytes(out, ename.data(), ename.size());
    io::put_bytes(out, body.data(), body.size());
    // central directory entry
    io::put<uint32_t>(cd, 0x02014b50u);
    io::put<uint16_t>(cd, 20);
    io::put<uint16_t>(cd, 20);
    io::put<uint16_t>(cd, 0);
    io::put<uint16_t>(cd, 0);
    io::put<uint16_t>(cd, 0);
    io::put<uint16_t>(cd, 0x21);
    io::put<uint32_t>(cd, crc);
    io::put<uint32_t>(cd, uint32_t(body.size()));
    io::put<uint32_t>(cd, uint32_t(body.size()));
    io::put<uint16_t>(cd, uint16_t(ename.size()));
    io::put<uint16_t>(cd, 0);
    io::put<uint16_t>(cd, 0);
    io::put<uint16_t>(cd, 0);
    io::put<uint16_t>(cd, 0);
    io::put<uint32_t>(cd, 0);
    io::put<uint32_t>(cd, off);
    io::put_bytes(cd, ename.data(), ename.size());
  }
  if (tensors.size() > 0xFFFF)
    throw_error(ErrorKind::InvalidArgument, "npz_write", "more than 65535 entries");
  const uint32_t cd_off = uint32_t(out.size());
  io::put_bytes(out, cd.data(), cd.size());
  io::put<uint32_t>(out, 0x06054b50u);
  io::put<uint16_t>(out, 0);
  io::put<uint16_t>(out, 0);
  io::put<uint16_t>(out, uint16_t(tensors.size()));
  io::put<uint16_t>(out, uint16_t(tensors.size()));
  io::put<uint32_t>(out, uint32_t(cd.size()));
  io::put<uint32_t>(out, cd_off);
  io::put<uint16_t>(out, 0);
  io::write_file(path, out, "npz_write");
}

}  // namespace

void write_npz(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  guarded("npz_write", ErrorKind::InvalidArgument, [&] { write_npz_impl(path, tensors); });
}

}  // namespace wick
