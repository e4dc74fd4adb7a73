// End-to-end checks of `wick inspect`, `wick quantize` and `wick export` through the
// built binary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "cli_run.h"
#include "wick/io.h"

using namespace wick;
using wick::test::CliRun;
namespace fs = std::filesystem;

namespace {

CliRun run(const std::string& args) { return test::run_cli(args, true); }

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i % 97) / 32.0f - 1.5f;
  return v;
}

}  // namespace

class GgufCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("wick_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    Tensor w = Tensor::from_vector(ramp(4 * 256), Shape{4, 256});
    Tensor norm = Tensor::from_vector(ramp(256), Shape{256});
    write_gguf(p("in.gguf"), {{"general.architecture", "llama"}, {"llama.block_count", uint32_t(1)}},
               {GgufTensorData::from_tensor("blk.0.w", w), GgufTensorData::from_tensor("blk.0.norm", norm)});
    write_safetensors(p("in.safetensors"), {{"w", w}, {"norm", norm}}, {{"format", "pt"}});
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string p(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(GgufCli, InspectListsMetadataAndTensors) {
  CliRun r = run("inspect '" + p("in.gguf") + "'");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("llama.block_count = 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[256, 4]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("blk.0.norm"), std::string::npos) << r.out;
  CliRun j = run("inspect --json '" + p("in.safetensors") + "'");
  EXPECT_EQ(j.status, 0) << j.out;
  EXPECT_NE(j.out.find("\"format\": \"safetensors\""), std::string::npos) << j.out;
}

TEST_F(GgufCli, QuantizeThenExport) {
  for (const char* src : {"in.gguf", "in.safetensors"}) {
    CliRun q = run("quantize '" + p(src) + "' '" + p("out.gguf") + "' --type q4_k");
    ASSERT_EQ(q.status, 0) << q.out;
    GgufFile g = GgufFile::open(p("out.gguf"));
    const std::string wname = std::string(src) == "in.gguf" ? "blk.0.w" : "w";
    const std::string nname = std::string(src) == "in.gguf" ? "blk.0.norm" : "norm";
    EXPECT_EQ(g.find_tensor(wname)->type, uint32_t(GgmlType::Q4_K));
    EXPECT_EQ(g.find_tensor(nname)->type, uint32_t(GgmlType::F32));  // 1-D stays
    EXPECT_EQ(g.find("general.quantization_version")->as_uint(), 2u);
    CliRun e = run("export '" + p("out.gguf") + "' " + wname + " -o '" + p("w.npy") + "'");
    ASSERT_EQ(e.status, 0) << e.out;
    Tensor back = read_npy(p("w.npy"));
    EXPECT_EQ(back.shape(), (Shape{4, 256}));
    const auto got = back.to_vector<float>();
    const auto want = ramp(4 * 256);
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
    EXPECT_LT(worst, 0.1) << src;  // 4-bit steps of a [-1.5, 1.5] range
  }
}

TEST_F(GgufCli, BadInputsFail) {
  EXPECT_NE(run("quantize '" + p("in.gguf") + "' '" + p("o.gguf") + "' --type q9_9").status, 0);
  CliRun missing = run("export '" + p("in.gguf") + "' nope -o '" + p("x.npy") + "'");
  EXPECT_NE(missing.status, 0);
  EXPECT_NE(missing.out.find("no tensor named 'nope'"), std::string::npos) << missing.out;
  std::ofstream(p("junk.gguf")) << "GGUFjunk";
  CliRun junk = run("inspect '" + p("junk.gguf") + "'");
  EXPECT_NE(junk.status, 0);
  EXPECT_NE(junk.out.find("junk.gguf"), std::string::npos) << junk.out;
}

// ---- outputs, inputs and what is printed -------------------------------------------------

namespace {

std::vector<uint8_t> slurp(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

// Peak resident memory (KiB) of `wick <args>` (run through fork/exec; wait4's rusage).
long peak_rss_kib(const std::vector<std::string>& args) {
  const std::string cli = test::cli_path();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    std::vector<char*> argv = {const_cast<char*>(cli.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? ru.ru_maxrss : -1;
}

}  // namespace

TEST_F(GgufCli, WritingOverTheInputIsRefused) {
  const auto gguf = slurp(p("in.gguf"));
  const auto st = slurp(p("in.safetensors"));
  fs::create_hard_link(p("in.gguf"), p("link.gguf"));
  for (const std::string& out : {p("in.gguf"), p("link.gguf"), (dir_ / "." / "in.gguf").string()}) {
    CliRun q = run("quantize '" + p("in.gguf") + "' '" + out + "' --type q8_0");
    EXPECT_NE(q.status, 0) << q.out;
    EXPECT_NE(q.out.find("is a file this process is reading"), std::string::npos) << q.out;
    CliRun e = run("export '" + p("in.gguf") + "' blk.0.w -o '" + out + "'");
    EXPECT_NE(e.status, 0) << e.out;
    EXPECT_NE(e.out.find("the input"), std::string::npos) << e.out;
  }
  CliRun s = run("export '" + p("in.safetensors") + "' w -o '" + p("in.safetensors") + "'");
  EXPECT_NE(s.status, 0) << s.out;
  EXPECT_EQ(slurp(p("in.gguf")), gguf);
  EXPECT_EQ(slurp(p("in.safetensors")), st);
}

TEST_F(GgufCli, AFailedWriteLeavesTheOldOutput) {
  // A file-size limit of 2 KiB (SIGXFSZ ignored: the write fails with EFBIG) under an
  // output of about 3.3 KiB: the old output stays whole, no temporary is left.
  write_gguf(p("old.gguf"), {{"general.architecture", "old"}}, {});
  const auto old = slurp(p("old.gguf"));
  const std::string cmd = "trap '' XFSZ; ulimit -f 2; exec '" + test::cli_path() + "' quantize '" +
                          p("in.gguf") + "' '" + p("old.gguf") + "' --type f16 2>&1";
  const int rc = std::system(("bash -c \"" + cmd + "\" > /dev/null").c_str());
  EXPECT_NE(rc, 0);
  EXPECT_EQ(slurp(p("old.gguf")), old);
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) files += e.path().filename() != "." ? 1 : 0;
  EXPECT_EQ(files, 3u);  // in.gguf, in.safetensors, old.gguf
}

TEST_F(GgufCli, InspectOfAFifoFailsInsteadOfWaiting) {
  ASSERT_EQ(::mkfifo(p("fifo").c_str(), 0600), 0);
  const std::string cmd = "timeout 20 '" + test::cli_path() + "' inspect '" + p("fifo") + "' 2>&1";
  FILE* f = ::popen(cmd.c_str(), "r");
  ASSERT_NE(f, nullptr);
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, n);
  const int st = ::pclose(f);
  EXPECT_EQ(WEXITSTATUS(st), 2) << out;  // 124 when it hung until the timeout
  EXPECT_NE(out.find("not a regular file"), std::string::npos) << out;
}

TEST_F(GgufCli, ControlCharactersInNamesAreEscaped) {
  // ESC [2J clears a terminal; a C1 CSI (U+009B) and a byte that is not UTF-8 too.
  const std::string name = "x\x1b[2J\xc2\x9b\xff";
  const std::string key = "k\x07";
  write_gguf(p("ctl.gguf"), {{key, std::string("v\x1b]0;title\x07")}},
             {GgufTensorData::from_tensor(name, Tensor::zeros(Shape{2}))});
  CliRun r = run("inspect '" + p("ctl.gguf") + "'");
  EXPECT_EQ(r.status, 0) << r.out;
  for (char c : r.out) EXPECT_TRUE(c == '\n' || uint8_t(c) >= 0x20) << "raw control byte " << int(uint8_t(c));
  EXPECT_NE(r.out.find("x\\x1b[2J\\xc2\\x9b\\xff"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("k\\x07 = \"v\\x1b]0;title\\x07\""), std::string::npos) << r.out;
  // Error messages quote names too.
  CliRun e = run("export '" + p("ctl.gguf") + "' 'no\x1b[2J' -o '" + p("o.npy") + "'");
  EXPECT_NE(e.status, 0);
  EXPECT_EQ(e.out.find('\x1b'), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("no\\x1b[2J"), std::string::npos) << e.out;
}

TEST_F(GgufCli, QuantizeNamesGgufsDimLimitForARank5Tensor) {
  write_safetensors(p("r5.safetensors"), {{"t", Tensor::zeros(Shape{1, 1, 2, 2, 32})}});
  CliRun q = run("quantize '" + p("r5.safetensors") + "' '" + p("r5.gguf") + "' --type q8_0");
  EXPECT_NE(q.status, 0);
  EXPECT_NE(q.out.find("rank 5, GGUF holds at most 4 dims"), std::string::npos) << q.out;
  EXPECT_FALSE(fs::exists(p("r5.gguf")));
}

TEST_F(GgufCli, HugeDimsOfAnEmptyTensorAreRefusedNotWrittenNegative) {
  // safetensors dims of 2^63 + 1 in an empty tensor became a negative GGUF dim (exit 0).
  const std::string json = R"({"e":{"dtype":"F32","shape":[0,9223372036854775809],"data_offsets":[0,0]}})";
  std::vector<uint8_t> b(8);
  const uint64_t n = json.size();
  std::memcpy(b.data(), &n, 8);
  b.insert(b.end(), json.begin(), json.end());
  std::ofstream(p("huge.safetensors"), std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), b.size());
  CliRun q = run("quantize '" + p("huge.safetensors") + "' '" + p("huge.gguf") + "' --type q8_0");
  EXPECT_NE(q.status, 0);
  EXPECT_NE(q.out.find("element count overflows"), std::string::npos) << q.out;
  EXPECT_FALSE(fs::exists(p("huge.gguf")));
}

TEST_F(GgufCli, EmptyTensorsQuantizeAndExport) {
  write_gguf(p("empty.gguf"), {{"general.architecture", "llama"}},
             {GgufTensorData::from_tensor("e", Tensor::zeros(Shape{0, 32})),
              GgufTensorData::from_tensor("w", Tensor::from_vector(ramp(64), Shape{2, 32}))});
  CliRun q = run("quantize '" + p("empty.gguf") + "' '" + p("q.gguf") + "' --type q8_0");
  ASSERT_EQ(q.status, 0) << q.out;
  GgufFile g = GgufFile::open(p("q.gguf"));
  EXPECT_EQ(g.find_tensor("e")->type, uint32_t(GgmlType::Q8_0));
  EXPECT_EQ(g.find_tensor("e")->nbytes, 0u);
  for (const std::string& src : {p("empty.gguf"), p("q.gguf")}) {
    CliRun e = run("export '" + src + "' e -o '" + p("e.npy") + "'");
    ASSERT_EQ(e.status, 0) << e.out;
    EXPECT_EQ(read_npy(p("e.npy")).shape(), (Shape{0, 32}));
  }
}

TEST_F(GgufCli, InspectMemoryStaysNearTheFileSize) {
  // One 16M-item u8 array (a 16 MB file): 685 MB to inspect and 1.78 GB with --json
  // when each item was a value of its own and the JSON a document.
  std::vector<uint8_t> x(24);
  const uint32_t head[2] = {0x46554747, 3};
  const int64_t counts[2] = {0, 1};
  std::memcpy(x.data(), head, 8);
  std::memcpy(x.data() + 8, counts, 16);
  auto put = [&](const void* v, size_t n) { x.insert(x.end(), (const uint8_t*)v, (const uint8_t*)v + n); };
  const uint64_t klen = 3, items = uint64_t(16) << 20;
  const int32_t arr = 9, u8 = 0;
  put(&klen, 8), put("big", 3), put(&arr, 4), put(&u8, 4), put(&items, 8);
  x.resize(x.size() + items, 1);
  std::ofstream(p("big.gguf"), std::ios::binary).write(reinterpret_cast<const char*>(x.data()), x.size());
  const long base = peak_rss_kib({"inspect", p("in.gguf")});
  const long text = peak_rss_kib({"inspect", p("big.gguf")});
  const long json = peak_rss_kib({"inspect", "--json", p("big.gguf")});
  ASSERT_GT(base, 0);
  ASSERT_GT(text, 0);
  ASSERT_GT(json, 0);
  // The mapped file and one packed copy: about 32 MB above a small file's run.
  EXPECT_LT(text - base, 96 * 1024) << "KiB";
  EXPECT_LT(json - base, 96 * 1024) << "KiB";
}
