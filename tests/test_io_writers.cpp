// The file writers against their readers: outputs are replaced atomically (a failed
// write leaves the old file and no temporary behind), an output that is the input of
// the write is refused however its path is spelled, every writer refuses what its
// reader refuses (one limit on both sides), and errors from third-party code come out
// as wick::Error. Expected bytes come from the files written before the failed write.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>

#include "test_gguf_util.h"
#include "wick/io.h"

using namespace wick;
namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one mentioning " << needle;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Runs `f` in a child process whose file-size limit is `limit` bytes (SIGXFSZ ignored,
// so a write past it fails with EFBIG); returns "" when f threw an Io error, else what
// happened instead.
std::string in_child_with_file_limit(rlim_t limit, const std::function<void()>& f) {
  int pipefd[2];
  if (::pipe(pipefd) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipefd[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    std::string out;
    try {
      f();
      out = "no error";
    } catch (const Error& e) {
      out = e.kind() == ErrorKind::Io ? "" : std::string("wrong kind: ") + e.what();
    } catch (const std::exception& e) {
      out = std::string("not a wick::Error: ") + e.what();
    }
    (void)!::write(pipefd[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(pipefd[1]);
  std::string got;
  char buf[512];
  ssize_t n;
  while ((n = ::read(pipefd[0], buf, sizeof buf)) > 0) got.append(buf, size_t(n));
  ::close(pipefd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status)) return "child died";
  return got;
}

class Writers : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("writers"); }
  void TearDown() override { fs::remove_all(dir_); }
  std::string p(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

Tensor big() { return Tensor::arange(0, 1 << 16, 1, DType::F32).reshape(Shape{256, 256}); }

// ---- atomic replacement ---------------------------------------------------------------

TEST_F(Writers, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  // Each writer replaces a small good file with a 256 KiB one under a 64 KiB file-size
  // limit: the write fails (EFBIG), the old bytes stay, nothing else is left in the dir.
  const Tensor small = Tensor::from_vector<float>({1, 2, 3}, Shape{3});
  const std::vector<std::pair<std::string, std::function<void(const std::string&, const Tensor&)>>> writers =
      {
          {"a.gguf", [](const std::string& f,
                        const Tensor& t) { write_gguf(f, {}, {GgufTensorData::from_tensor("t", t)}); }},
          {"a.safetensors",
           [](const std::string& f, const Tensor& t) {
             write_safetensors(f, {{"t", t}});
           }},
          {"a.npy", [](const std::string& f, const Tensor& t) { write_npy(f, t); }},
          {"a.npz",
           [](const std::string& f, const Tensor& t) {
             write_npz(f, {{"t", t}});
           }},
      };
  const Tensor b = big();  // made here: the child only writes (no parallel ops after fork())
  for (const auto& [name, write] : writers) {
    SCOPED_TRACE(name);
    write(p(name), small);
    const auto before = slurp(p(name));
    ASSERT_FALSE(before.empty());
    EXPECT_EQ(in_child_with_file_limit(1 << 16, [&, &write = write, &name = name] { write(p(name), b); }),
              "");
    EXPECT_EQ(slurp(p(name)), before);
  }
  EXPECT_EQ(listing(dir_), (std::vector<std::string>{"a.gguf", "a.npy", "a.npz", "a.safetensors"}));
  // Without the limit the same writes replace the files.
  write_npy(p("a.npy"), big());
  EXPECT_EQ(read_npy(p("a.npy")).shape(), (Shape{256, 256}));
  EXPECT_EQ(listing(dir_), (std::vector<std::string>{"a.gguf", "a.npy", "a.npz", "a.safetensors"}));
}

TEST_F(Writers, ReplacingKeepsPermissionsAndFollowsSymlinks) {
  write_npy(p("x.npy"), big());
  fs::permissions(p("x.npy"), fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("x.npy", p("link.npy"));
  write_npy(p("link.npy"), Tensor::from_vector<int32_t>({5}, Shape{1}));
  EXPECT_TRUE(fs::is_symlink(p("link.npy")));
  EXPECT_EQ(read_npy(p("x.npy")).to_vector<int32_t>(), (std::vector<int32_t>{5}));
  EXPECT_EQ(fs::status(p("x.npy")).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(Writers, AnOutputThatIsNotARegularFileIsRefused) {
  fs::create_directory(p("d"));
  expect_error([&] { write_npy(p("d"), big()); }, ErrorKind::InvalidArgument, "not a regular file");
  expect_error([&] { write_npy("/dev/null", big()); }, ErrorKind::InvalidArgument, "not a regular file");
  expect_error([&] { write_npy(p("missing/x.npy"), big()); }, ErrorKind::Io, "missing/x.npy");
}

TEST_F(Writers, WritingOverAFileBeingReadIsRefused) {
  write_gguf(p("in.gguf"), {{"general.architecture", "llama"}}, {GgufTensorData::from_tensor("w", big())});
  write_safetensors(p("in.safetensors"), {{"w", big()}});
  fs::create_hard_link(p("in.gguf"), p("hard.gguf"));
  fs::create_symlink("in.gguf", p("soft.gguf"));
  const auto gguf_bytes = slurp(p("in.gguf"));
  {
    GgufFile g = GgufFile::open(p("in.gguf"));
    const std::string dotted = (dir_ / "." / "in.gguf").string();
    for (const std::string& out : {p("in.gguf"), dotted, p("hard.gguf"), p("soft.gguf")}) {
      SCOPED_TRACE(out);
      expect_error([&] { write_gguf(out, {}, {}); }, ErrorKind::InvalidArgument,
                   "is a file this process is reading");
      expect_error([&] { write_npy(out, g.tensor("w")); }, ErrorKind::InvalidArgument, "the input");
      expect_error([&] { check_output_path(out, "tool"); }, ErrorKind::InvalidArgument, "[tool]");
    }
    SafetensorsFile s = SafetensorsFile::open(p("in.safetensors"));
    expect_error([&] { write_safetensors(p("in.safetensors"), {}); }, ErrorKind::InvalidArgument,
                 "the input");
    expect_error([&] { write_npz(p("in.safetensors"), {}); }, ErrorKind::InvalidArgument, "the input");
    EXPECT_EQ(slurp(p("in.gguf")), gguf_bytes);
  }
  // Once nothing maps it, it is an ordinary output.
  write_gguf(p("in.gguf"), {}, {});
  EXPECT_EQ(GgufFile::open(p("in.gguf")).tensors().size(), 0u);
}

// ---- the same limits on both sides ---------------------------------------------------------

TEST_F(Writers, NpyWriterRefusesWhatReadersRefuse) {
  // 65 dims: NumPy and wick read at most 64. 22000 dims once overflowed the 16-bit
  // header length and wrote a file nothing could read.
  for (size_t rank : {size_t(65), size_t(22000)}) {
    const Tensor t = Tensor::zeros(Shape(std::vector<size_t>(rank, 1)));
    expect_error([&] { npy_serialize(t); }, ErrorKind::InvalidArgument, "at most 64 dims");
  }
  const Tensor t64 = Tensor::from_vector<float>({2.5f}, Shape(std::vector<size_t>(64, 1)));
  const auto bytes = npy_serialize(t64);
  EXPECT_EQ(parse_npy(bytes.data(), bytes.size()).to_vector<float>(), (std::vector<float>{2.5f}));
  // A 65-dim header is refused by the reader with the same limit.
  std::string shape = "(";
  for (int i = 0; i < 65; ++i) shape += "1,";
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "), }";
  h.resize((h.size() + 11 + 63) / 64 * 64 - 11, ' ');
  h += '\n';
  const std::string b = std::string("\x93NUMPY\x01\x00", 8) + char(h.size() & 0xff) + char(h.size() >> 8) +
                        h + std::string(4, '\0');
  expect_error([&] { parse_npy(b.data(), b.size()); }, ErrorKind::Format, "more than 64 dims");
}

TEST_F(Writers, ShapesEveryReaderRefusesCannotBeWritten) {
  // An empty tensor whose other dims times the element size exceed 2^63-1: NumPy
  // refuses such a header, GGUF once received negative dims. No tensor has it now,
  // and a file that declares it is refused by every reader.
  EXPECT_THROW(Tensor::zeros(Shape{0, size_t(1) << 62, 2}, DType::U8), Error);
  const std::string huge = "[0, 9223372036854775809]";
  std::string json = R"({"t":{"dtype":"U8","shape":)" + huge + R"(,"data_offsets":[0,0]}})";
  std::vector<uint8_t> st(8 + json.size());
  const uint64_t n = json.size();
  std::memcpy(st.data(), &n, 8);
  std::memcpy(st.data() + 8, json.data(), json.size());
  expect_error([&] { SafetensorsFile::parse(st.data(), st.size()); }, ErrorKind::Format,
               "element count overflows");
  // What fits is written and read back by each format.
  const Tensor e = Tensor::zeros(Shape{0, size_t(1) << 61}, DType::U8);
  const auto npy = npy_serialize(e);
  EXPECT_EQ(parse_npy(npy.data(), npy.size()).shape(), e.shape());
  const auto sf = safetensors_serialize({{"e", e}});
  EXPECT_EQ(SafetensorsFile::parse(sf.data(), sf.size()).find_tensor("e")->shape, e.shape());
  const Tensor ef = Tensor::zeros(Shape{0, size_t(1) << 60}, DType::F32);
  const auto gg = gguf_serialize({}, {GgufTensorData::from_tensor("e", ef)});
  EXPECT_EQ(GgufFile::parse(gg.data(), gg.size()).find_tensor("e")->shape(), ef.shape());
}

TEST_F(Writers, SafetensorsWriterRefusesAHeaderTheReaderRefuses) {
  // The reader's 100 MB header limit, reached here by one metadata value.
  expect_error(
      [] {
        safetensors_serialize({}, {{"k", std::string(100'000'000, 'a')}});
      },
      ErrorKind::InvalidArgument, "exceeds the readers' limit of 100000000");
}

// ---- third-party exceptions come out as wick::Error -------------------------------------------

TEST_F(Writers, NamesThatAreNotUtf8AreAnErrorNotAJsonException) {
  // GGUF names are raw bytes; safetensors headers are JSON (nlohmann threw type_error.316).
  const std::string raw = "w\xff\xfe";
  const Tensor t = Tensor::from_vector<float>({1}, Shape{1});
  expect_error([&] { safetensors_serialize({{raw, t}}); }, ErrorKind::InvalidArgument, "not valid UTF-8");
  expect_error(
      [&] {
        safetensors_serialize({{"ok", t}}, {{raw, "v"}});
      },
      ErrorKind::InvalidArgument, "not valid UTF-8");
  expect_error(
      [&] {
        safetensors_serialize({{"ok", t}}, {{"k", raw}});
      },
      ErrorKind::InvalidArgument, "not valid UTF-8");
  // Through a GGUF that holds such a name.
  const auto gg = gguf_serialize({}, {GgufTensorData::from_tensor(raw, t)});
  GgufFile g = GgufFile::parse(gg.data(), gg.size());
  expect_error(
      [&] {
        write_safetensors(p("o.safetensors"), {{raw, g.tensor(raw)}});
      },
      ErrorKind::InvalidArgument, "not valid UTF-8");
  EXPECT_FALSE(fs::exists(p("o.safetensors")));
}

}  // namespace
