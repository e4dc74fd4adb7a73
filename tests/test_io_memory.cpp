// Memory of the file readers against the size of the file: the heap a reader takes is
// measured by replacing the global operator new in this test program (every container
// of the library allocates through it) and tracking the peak of live bytes. A reader
// reserves nothing from a count the file declares, keeps arrays packed, and refuses an
// archive whose entries share bytes, so what it allocates is bounded by what it read.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>

#include "test_gguf_util.h"
#include "wick/io.h"

namespace {

std::atomic<size_t> g_live{0}, g_peak{0};

void* counted(void* p) {
  if (!p) throw std::bad_alloc();
  const size_t now = g_live += malloc_usable_size(p);
  size_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
  return p;
}
void uncounted(void* p) {
  if (p) g_live -= malloc_usable_size(p);
  std::free(p);
}

// Peak live heap bytes above what was live when the scope began.
class HeapPeak {
 public:
  HeapPeak() : base_(g_live.load()) { g_peak = base_; }
  size_t bytes() const { return g_peak.load() - base_; }

 private:
  size_t base_;
};

}  // namespace

void* operator new(size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new[](size_t n) { return counted(std::malloc(n ? n : 1)); }
void* operator new(size_t n, std::align_val_t a) {
  return counted(std::aligned_alloc(size_t(a), (n + size_t(a) - 1) / size_t(a) * size_t(a)));
}
void* operator new[](size_t n, std::align_val_t a) { return operator new(n, a); }
void operator delete(void* p) noexcept { uncounted(p); }
void operator delete[](void* p) noexcept { uncounted(p); }
void operator delete(void* p, size_t) noexcept { uncounted(p); }
void operator delete[](void* p, size_t) noexcept { uncounted(p); }
void operator delete(void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, std::align_val_t) noexcept { uncounted(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { uncounted(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { uncounted(p); }

using namespace wick;
namespace fs = std::filesystem;

namespace {

constexpr size_t kMiB = size_t(1) << 20;

using test::Bytes;

void write_bytes(const fs::path& p, const std::vector<uint8_t>& b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

class ReaderMemory : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("reader_memory"); }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ReaderMemory, ANumberArrayTakesItsOwnSize) {
  // One u8 array of 16M items: 16 MB of file. Kept as one value per item, it took 40
  // bytes an item (685 MB for `wick inspect`).
  const size_t n = 16 * kMiB;
  Bytes x;
  x.put<uint32_t>(0x46554747).put<uint32_t>(3).put<int64_t>(0).put<int64_t>(1);
  x.str("big").put<int32_t>(9).put<int32_t>(0).put<uint64_t>(n);
  x.b.resize(x.b.size() + n, 3);
  const fs::path file = dir_ / "big.gguf";
  write_bytes(file, x.b);
  x.b = {};
  HeapPeak heap;
  GgufFile g = GgufFile::open(file.string());
  EXPECT_EQ(g.find("big")->as_array().size(), n);
  EXPECT_LT(heap.bytes(), n + kMiB) << "peak heap while reading a " << n << "-byte array";
}

TEST_F(ReaderMemory, NothingIsReservedFromADeclaredCount) {
  // A sparse 6 GiB file declaring as many key/value pairs as could fit: the reader once
  // reserved them all before reading one (std::bad_alloc). The second pair repeats the
  // first's empty key, which is where reading stops.
  const uint64_t size = uint64_t(6) << 30;
  Bytes x;
  x.put<uint32_t>(0x46554747).put<uint32_t>(3).put<int64_t>(0).put<int64_t>(int64_t((size - 24) / 13));
  const fs::path file = dir_ / "sparse.gguf";
  write_bytes(file, x.b);
  ASSERT_EQ(::truncate(file.c_str(), off_t(size)), 0);
  HeapPeak heap;
  try {
    GgufFile::open(file.string());
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find("duplicate key ''"), std::string::npos) << e.what();
  }
  EXPECT_LT(heap.bytes(), kMiB);
}

// A zip: entries given as (name, local header offset), one stored body at offset 0.
std::vector<uint8_t> zip_with(const std::vector<uint8_t>& body, uint16_t method, uint32_t usize, uint32_t crc,
                              size_t n_entries) {
  Bytes z;
  const std::string first = "a.npy";
  z.put<uint32_t>(0x04034b50u).put<uint16_t>(20).put<uint16_t>(0).put<uint16_t>(method).put<uint32_t>(0);
  z.put<uint32_t>(crc).put<uint32_t>(uint32_t(body.size())).put<uint32_t>(usize);
  z.put<uint16_t>(uint16_t(first.size())).put<uint16_t>(0);
  z.b.insert(z.b.end(), first.begin(), first.end());
  z.b.insert(z.b.end(), body.begin(), body.end());
  const uint32_t cd_off = uint32_t(z.b.size());
  for (size_t e = 0; e < n_entries; ++e) {
    const std::string name = "e" + std::to_string(e) + ".npy";
    z.put<uint32_t>(0x02014b50u).put<uint16_t>(20).put<uint16_t>(20).put<uint16_t>(0).put<uint16_t>(method);
    z.put<uint32_t>(0).put<uint32_t>(crc).put<uint32_t>(uint32_t(body.size())).put<uint32_t>(usize);
    z.put<uint16_t>(uint16_t(name.size()))
        .put<uint16_t>(0)
        .put<uint16_t>(0)
        .put<uint16_t>(0)
        .put<uint16_t>(0);
    z.put<uint32_t>(0).put<uint32_t>(0);  // every entry's local header at offset 0
    z.b.insert(z.b.end(), name.begin(), name.end());
  }
  const uint32_t cd_size = uint32_t(z.b.size()) - cd_off;
  z.put<uint32_t>(0x06054b50u).put<uint16_t>(0).put<uint16_t>(0);
  z.put<uint16_t>(uint16_t(n_entries)).put<uint16_t>(uint16_t(n_entries));
  z.put<uint32_t>(cd_size).put<uint32_t>(cd_off).put<uint16_t>(0);
  return z.b;
}

TEST_F(ReaderMemory, AnArchiveWhoseEntriesShareBytesIsRefused) {
  // 2000 directory entries naming one 1 MiB array: 1 MB of archive that read as 2 GB of
  // tensors (48 s).
  const Tensor t = Tensor::zeros(Shape{kMiB / 4}, DType::F32);
  const auto body = npy_serialize(t);
  uint32_t crc = 0xFFFFFFFFu;  // CRC-32 of body, computed here (reflected 0xEDB88320)
  for (uint8_t byte : body) {
    crc ^= byte;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1)));
  }
  crc ^= 0xFFFFFFFFu;
  const auto once = zip_with(body, 0, uint32_t(body.size()), crc, 1);
  ASSERT_EQ(parse_npz(once.data(), once.size()).size(), 1u);  // the archive itself is valid
  const auto zip = zip_with(body, 0, uint32_t(body.size()), crc, 2000);
  const size_t before = memory_stats(Device::cpu()).in_use;
  try {
    parse_npz(zip.data(), zip.size(), "shared.npz");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find("shares bytes with another entry"), std::string::npos) << e.what();
  }
  EXPECT_EQ(memory_stats(Device::cpu()).in_use, before);
}

TEST_F(ReaderMemory, TheInflaterReservesNothingFromTheDeclaredSize) {
  // 1 MiB of deflate data declaring 1000x its size (deflate's ratio allows 1032x): the
  // first block is invalid. The output was reserved in full first (1 GB; bad_alloc
  // where memory is short); now it starts at a few times the compressed size.
  std::vector<uint8_t> body(kMiB, 0);
  body[0] = 0x07;  // final block of type 3, which does not exist
  const auto zip = zip_with(body, 8, uint32_t(1000 * kMiB), 0, 1);
  HeapPeak heap;
  try {
    parse_npz(zip.data(), zip.size(), "bomb.npz");
    FAIL() << "parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Format) << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid block type"), std::string::npos) << e.what();
  }
  EXPECT_LT(heap.bytes(), 8 * kMiB);  // the declared size is 1000 MiB
}

}  // namespace
