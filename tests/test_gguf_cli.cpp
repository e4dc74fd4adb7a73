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
#include <nlohmann/json.hpp>
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
  std::vector<char*> argv = {const_cast<char*>(cli.c_str())};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // The environment, with AddressSanitizer's quarantine off: freed blocks would stay in it
  // and count in the peak (without the sanitizer, nothing reads the setting). Built before
  // fork: the child only calls what is safe after a fork.
  std::string asan = "ASAN_OPTIONS=quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
  std::vector<std::string> env_store;
  for (char** e = environ; *e; ++e) {
    if (std::strncmp(*e, "ASAN_OPTIONS=", 13) == 0) {
      asan = std::string(*e) + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0";
    } else {
      env_store.emplace_back(*e);
    }
  }
  env_store.push_back(asan);
  std::vector<char*> envp;
  for (std::string& e : env_store) envp.push_back(e.data());
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::execve(argv[0], argv.data(), envp.data());
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
  EXPECT_EQ(WEXITSTATUS(st), 3) << out;  // a file error; 124 when it hung until the timeout
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
  EXPECT_EQ(q.status, 3);  // an input GGUF cannot hold
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

// ---- the conventions of the CLI: exit codes, labels, quantize as llama-quantize --------------

TEST_F(GgufCli, InspectSaysWhichOrderItsDimsAreIn) {
  CliRun g = run("inspect '" + p("in.gguf") + "'");
  ASSERT_EQ(g.status, 0) << g.out;
  EXPECT_NE(g.out.find("dims in ggml order (ne[0], the row length, first)"), std::string::npos) << g.out;
  EXPECT_NE(g.out.find("[256, 4]"), std::string::npos) << g.out;
  CliRun s = run("inspect '" + p("in.safetensors") + "'");
  ASSERT_EQ(s.status, 0) << s.out;
  EXPECT_NE(s.out.find("shapes row-major (the outermost dim first)"), std::string::npos) << s.out;
  EXPECT_NE(s.out.find("[4, 256]"), std::string::npos) << s.out;
  CliRun j = test::run_cli("inspect --json '" + p("in.gguf") + "'");
  ASSERT_EQ(j.status, 0) << j.out;
  const auto doc = nlohmann::json::parse(j.out);
  for (const auto& t : doc["tensors"]) {
    if (t["name"] != "blk.0.w") continue;
    EXPECT_EQ(t["ne"], nlohmann::json::parse("[256, 4]"));
    EXPECT_EQ(t["shape"], nlohmann::json::parse("[4, 256]"));
  }
}

TEST_F(GgufCli, AFileOfAnotherKindIsNamedAsSuch) {
  std::ofstream(p("notes.txt")) << "these are notes, not a model; long enough to have a header length";
  CliRun i = run("inspect '" + p("notes.txt") + "'");
  EXPECT_EQ(i.status, 3) << i.out;
  EXPECT_NE(i.out.find("not a GGUF, safetensors or npy file (it starts with bytes 7468657365206172)"),
            std::string::npos)
      << i.out;
  CliRun q = run("quantize '" + p("notes.txt") + "' '" + p("q.gguf") + "' --type q8_0");
  EXPECT_EQ(q.status, 3) << q.out;
  EXPECT_NE(q.out.find("not a GGUF or safetensors file"), std::string::npos) << q.out;
  std::ofstream(p("empty.bin")).flush();
  CliRun e = run("export '" + p("empty.bin") + "' w -o '" + p("w.npy") + "'");
  EXPECT_EQ(e.status, 3) << e.out;
  EXPECT_NE(e.out.find("it starts with bytes none: it is empty"), std::string::npos) << e.out;
  // A .npy file is inspected: one tensor, row-major.
  write_npy(p("x.npy"), Tensor::from_vector(ramp(6), Shape{2, 3}));
  CliRun n = run("inspect '" + p("x.npy") + "'");
  EXPECT_EQ(n.status, 0) << n.out;
  EXPECT_NE(n.out.find("File is npy"), std::string::npos) << n.out;
  EXPECT_NE(n.out.find("[2, 3]"), std::string::npos) << n.out;
}

TEST_F(GgufCli, FileErrorsExit3AndUsageErrorsExit2) {
  EXPECT_EQ(run("inspect '" + p("absent.gguf") + "'").status, 3);
  std::ofstream(p("junk.gguf")) << "GGUFjunk";
  EXPECT_EQ(run("inspect '" + p("junk.gguf") + "'").status, 3);
  // The type is checked before the input is opened.
  CliRun t = run("quantize '" + p("absent.gguf") + "' '" + p("o.gguf") + "' --type q9_9");
  EXPECT_EQ(t.status, 2) << t.out;
  EXPECT_NE(t.out.find("--type q9_9"), std::string::npos) << t.out;
  CliRun a = run("quantize '" + p("in.gguf") + "' '" + p("o.gguf") + "' --type q8_k");
  EXPECT_EQ(a.status, 2) << a.out;
  EXPECT_NE(a.out.find("an activation format"), std::string::npos) << a.out;
  EXPECT_EQ(run("quantize '" + p("in.gguf") + "' --type q8_0").status, 2);  // OUT missing
}

TEST_F(GgufCli, QuantizePrintsEachTensorAndTheTotalSizes) {
  CliRun q = test::run_cli("quantize '" + p("in.gguf") + "' '" + p("q.gguf") + "' --type q4_k");
  ASSERT_EQ(q.status, 0) << q.out;
  // blk.0.w: 4 rows of 256 f32 (4096 B) -> 4 q4_K blocks of 144 B (ggml's block_q4_K);
  // blk.0.norm: 1-D, kept as 1024 B of f32.
  EXPECT_NE(q.out.find("dims in ggml order"), std::string::npos) << q.out;
  const auto line_of = [&](const std::string& name) {
    const size_t at = q.out.find(name);
    return at == std::string::npos ? std::string() : q.out.substr(at, q.out.find('\n', at) - at);
  };
  const std::string w = line_of("blk.0.w "), norm = line_of("blk.0.norm");
  EXPECT_NE(w.find("[256, 4]"), std::string::npos) << w;
  EXPECT_NE(w.find("f32 -> q4_K"), std::string::npos) << w;
  EXPECT_NE(w.find("4.00 KiB ->        576 B"), std::string::npos) << w;
  EXPECT_NE(norm.find("f32 -> f32"), std::string::npos) << norm;
  EXPECT_NE(norm.find("(1-D: kept)"), std::string::npos) << norm;
  EXPECT_NE(q.out.find("model size 5.00 KiB -> 1.56 KiB; 1 tensor(s) q4_K, 1 kept or given another type, 0 "
                       "skipped"),
            std::string::npos)
      << q.out;
}

TEST_F(GgufCli, QuantizeFallsBackForRowsThatAreNotWholeBlocks) {
  // Rows of 96 hold 32-element blocks but not 256-element ones: q4_K falls back to q5_0 as in
  // llama.cpp; rows of 40 hold neither: f16. Nothing aborts.
  write_gguf(p("odd.gguf"), {{"general.architecture", "llama"}},
             {GgufTensorData::from_tensor("r96", Tensor::from_vector(ramp(2 * 96), Shape{2, 96})),
              GgufTensorData::from_tensor("r40", Tensor::from_vector(ramp(2 * 40), Shape{2, 40})),
              GgufTensorData::from_tensor("r256", Tensor::from_vector(ramp(2 * 256), Shape{2, 256}))});
  CliRun q = run("quantize '" + p("odd.gguf") + "' '" + p("q.gguf") + "' --type q4_k");
  ASSERT_EQ(q.status, 0) << q.out;
  GgufFile g = GgufFile::open(p("q.gguf"));
  EXPECT_EQ(g.find_tensor("r96")->type, uint32_t(GgmlType::Q5_0));
  EXPECT_EQ(g.find_tensor("r40")->type, uint32_t(GgmlType::F16));
  EXPECT_EQ(g.find_tensor("r256")->type, uint32_t(GgmlType::Q4_K));
  EXPECT_NE(q.out.find("rows of 96 are not whole 256-element blocks of q4_K: q5_0 instead"),
            std::string::npos)
      << q.out;
  EXPECT_NE(q.out.find("rows of 40 are not whole 256-element blocks of q4_K: f16 instead"), std::string::npos)
      << q.out;
  // The fallback's values: q5_0 of the ramp (|x| <= 1.5) within one step, 1.5 / 16 (ggml's
  // q5_0 scales by the signed extreme and clamps the opposite end to level 31).
  const auto got = g.qtensor("r96").dequantize(DType::F32).to_vector<float>();
  const auto want = ramp(2 * 96);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1.5 / 16 + 1e-6) << i;
}

TEST_F(GgufCli, RequantizingNeedsItsFlag) {
  ASSERT_EQ(run("quantize '" + p("in.gguf") + "' '" + p("q4.gguf") + "' --type q4_k").status, 0);
  CliRun r = run("quantize '" + p("q4.gguf") + "' '" + p("q8.gguf") + "' --type q8_0");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("tensor 'blk.0.w' is q4_K already"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--allow-requantize"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(p("q8.gguf")));
  // The same type again is a copy, no re-quantization: no flag needed, the bytes unchanged.
  ASSERT_EQ(run("quantize '" + p("q4.gguf") + "' '" + p("q4b.gguf") + "' --type q4_k").status, 0);
  {
    GgufFile a = GgufFile::open(p("q4.gguf")), b = GgufFile::open(p("q4b.gguf"));
    const GgufTensorInfo &ta = *a.find_tensor("blk.0.w"), &tb = *b.find_tensor("blk.0.w");
    ASSERT_EQ(ta.nbytes, tb.nbytes);
    EXPECT_EQ(std::memcmp(a.tensor_data(ta), b.tensor_data(tb), ta.nbytes), 0);
  }
  CliRun ok = run("quantize '" + p("q4.gguf") + "' '" + p("q8.gguf") + "' --type q8_0 --allow-requantize");
  ASSERT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("re-quantized"), std::string::npos) << ok.out;
  EXPECT_EQ(GgufFile::open(p("q8.gguf")).find_tensor("blk.0.w")->type, uint32_t(GgmlType::Q8_0));
}

TEST_F(GgufCli, TheOutputTensorTakesItsOwnType) {
  Tensor w = Tensor::from_vector(ramp(4 * 256), Shape{4, 256});
  write_gguf(p("lm.gguf"), {{"general.architecture", "llama"}},
             {GgufTensorData::from_tensor("blk.0.w", w), GgufTensorData::from_tensor("output.weight", w)});
  CliRun q =
      run("quantize '" + p("lm.gguf") + "' '" + p("q.gguf") + "' --type q4_k --output-tensor-type q8_0");
  ASSERT_EQ(q.status, 0) << q.out;
  GgufFile g = GgufFile::open(p("q.gguf"));
  EXPECT_EQ(g.find_tensor("blk.0.w")->type, uint32_t(GgmlType::Q4_K));
  EXPECT_EQ(g.find_tensor("output.weight")->type, uint32_t(GgmlType::Q8_0));
  EXPECT_EQ(g.find("general.file_type")->as_uint(), 14u);  // llama.cpp's Q4_K_S
  EXPECT_EQ(
      run("quantize '" + p("lm.gguf") + "' '" + p("x.gguf") + "' --type q4_k --output-tensor-type q7").status,
      2);
}

TEST_F(GgufCli, QuantizeHoldsOneTensorAtATime) {
  // 32 tensors of 256 x 2048 f32 (64 MiB) to q8_0 (17 MiB): the whole output held in memory,
  // then serialized into one more image, peaked at the input plus twice the output.
  std::vector<GgufTensorData> ts;
  const Tensor w = Tensor::from_vector(ramp(256 * 2048), Shape{256, 2048});
  for (int i = 0; i < 32; ++i) ts.push_back(GgufTensorData::from_tensor("w" + std::to_string(i), w));
  write_gguf(p("big.gguf"), {{"general.architecture", "llama"}}, ts);
  ts.clear();
  const long base = peak_rss_kib({"inspect", p("in.gguf")});
  const long q = peak_rss_kib({"quantize", p("big.gguf"), p("q.gguf"), "--type", "q8_0"});
  ASSERT_GT(base, 0);
  ASSERT_GT(q, 0);
  // The mapped input (64 MiB) and a tensor or two (2 MiB each) above a small run.
  EXPECT_LT(q - base, 80 * 1024) << "KiB";
  EXPECT_EQ(GgufFile::open(p("q.gguf")).tensors().size(), 32u);
}

namespace {

// A row-major [rows, cols] f32 matrix with distinct values.
Tensor distinct(size_t rows, size_t cols, float base) {
  std::vector<float> v(rows * cols);
  for (size_t i = 0; i < v.size(); ++i) v[i] = base + float(i);
  return Tensor::from_vector(v, Shape{rows, cols});
}

}  // namespace

TEST_F(GgufCli, AHuggingFaceLlamaGetsLlamaCppsNamesAndLayout) {
  // A one-layer llama: hidden 32, 4 heads of 8, 2 KV heads, FFN 64, vocab 16.
  fs::create_directories(dir_ / "hf");
  const std::string st = (dir_ / "hf" / "model.safetensors").string();
  const Tensor q = distinct(32, 32, 0), k = distinct(16, 32, 5000), v = distinct(16, 32, 9000);
  write_safetensors(
      st, {{"model.embed_tokens.weight", distinct(16, 32, 0)},
           {"model.layers.0.input_layernorm.weight", distinct(1, 32, 0).reshape(Shape{32})},
           {"model.layers.0.self_attn.q_proj.weight", q},
           {"model.layers.0.self_attn.k_proj.weight", k},
           {"model.layers.0.self_attn.v_proj.weight", v},
           {"model.layers.0.self_attn.o_proj.weight", distinct(32, 32, 0)},
           {"model.layers.0.self_attn.rotary_emb.inv_freq", distinct(1, 4, 0).reshape(Shape{4})},
           {"model.layers.0.post_attention_layernorm.weight", distinct(1, 32, 0).reshape(Shape{32})},
           {"model.layers.0.mlp.gate_proj.weight", distinct(64, 32, 0)},
           {"model.layers.0.mlp.up_proj.weight", distinct(64, 32, 0)},
           {"model.layers.0.mlp.down_proj.weight", distinct(32, 64, 0)},
           {"model.norm.weight", distinct(1, 32, 0).reshape(Shape{32})},
           {"lm_head.weight", distinct(16, 32, 0)}});
  // Without config.json the head counts are unknown: the names stay, and it says why.
  CliRun plain = run("quantize '" + st + "' '" + p("plain.gguf") + "' --type f32");
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_NE(plain.out.find("config.json not found"), std::string::npos) << plain.out;
  EXPECT_TRUE(GgufFile::open(p("plain.gguf")).find_tensor("model.layers.0.self_attn.q_proj.weight"));

  std::ofstream(dir_ / "hf" / "config.json")
      << R"({"model_type": "llama", "hidden_size": 32, "num_attention_heads": 4, "num_key_value_heads": 2,
             "num_hidden_layers": 1, "intermediate_size": 64, "max_position_embeddings": 128,
             "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "vocab_size": 16})";
  CliRun r = run("quantize '" + st + "' '" + p("llama.gguf") + "' --type f32");
  ASSERT_EQ(r.status, 0) << r.out;
  GgufFile g = GgufFile::open(p("llama.gguf"));
  EXPECT_EQ(g.find("general.architecture")->get<std::string>(), "llama");
  EXPECT_EQ(g.find("llama.block_count")->as_uint(), 1u);
  EXPECT_EQ(g.find("llama.embedding_length")->as_uint(), 32u);
  EXPECT_EQ(g.find("llama.feed_forward_length")->as_uint(), 64u);
  EXPECT_EQ(g.find("llama.attention.head_count")->as_uint(), 4u);
  EXPECT_EQ(g.find("llama.attention.head_count_kv")->as_uint(), 2u);
  EXPECT_EQ(g.find("llama.rope.dimension_count")->as_uint(), 8u);
  EXPECT_EQ(g.find("llama.context_length")->as_uint(), 128u);
  EXPECT_FLOAT_EQ(float(g.find("llama.attention.layer_norm_rms_epsilon")->as_float()), 1e-6f);
  EXPECT_FLOAT_EQ(float(g.find("llama.rope.freq_base")->as_float()), 10000.0f);
  for (const char* name :
       {"token_embd.weight", "blk.0.attn_norm.weight", "blk.0.attn_q.weight", "blk.0.attn_k.weight",
        "blk.0.attn_v.weight", "blk.0.attn_output.weight", "blk.0.ffn_norm.weight", "blk.0.ffn_gate.weight",
        "blk.0.ffn_up.weight", "blk.0.ffn_down.weight", "output_norm.weight", "output.weight"})
    EXPECT_TRUE(g.find_tensor(name)) << name;
  EXPECT_EQ(g.tensors().size(), 12u);  // rotary_emb.inv_freq is not written
  EXPECT_NE(r.out.find("llama.cpp does not load it: skipped"), std::string::npos) << r.out;
  // convert_hf_to_gguf.py's permute: per head of d rows, row h*d + 2j + c of the GGUF tensor is
  // row h*d + c*d/2 + j of the Hugging Face one (c in {0, 1}, j < d/2); Q has 4 heads, K 2.
  const auto check_permuted = [&](const char* name, const Tensor& hf, size_t heads) {
    const auto got = g.tensor(name).to_vector<float>();
    const auto src = hf.to_vector<float>();
    const size_t rows = hf.dim(0), cols = hf.dim(1), d = rows / heads;
    for (size_t h = 0; h < heads; ++h)
      for (size_t j = 0; j < d / 2; ++j)
        for (size_t c = 0; c < 2; ++c)
          for (size_t col = 0; col < cols; ++col)
            ASSERT_EQ(got[(h * d + 2 * j + c) * cols + col], src[(h * d + c * d / 2 + j) * cols + col])
                << name << " head " << h << " j " << j << " c " << c;
  };
  check_permuted("blk.0.attn_q.weight", q, 4);
  check_permuted("blk.0.attn_k.weight", k, 2);
  EXPECT_EQ(g.tensor("blk.0.attn_v.weight").to_vector<float>(), v.to_vector<float>());
}

TEST_F(GgufCli, UnsignedSafetensorsAreWidenedNotSkipped) {
  // GGUF has no u8 or u32 type: they become i32 / i64 with the same values (the largest
  // included), and the line says so.
  write_safetensors(p("u.safetensors"), {{"u8", Tensor::from_vector<uint8_t>({0, 1, 200, 255}, Shape{4})},
                                         {"u32", Tensor::from_vector<uint32_t>({7, 4294967295u}, Shape{2})}});
  CliRun q = run("quantize '" + p("u.safetensors") + "' '" + p("u.gguf") + "' --type q8_0");
  ASSERT_EQ(q.status, 0) << q.out;
  EXPECT_NE(q.out.find("GGUF has no u8 type: widened to i32"), std::string::npos) << q.out;
  EXPECT_NE(q.out.find("GGUF has no u32 type: widened to i64"), std::string::npos) << q.out;
  GgufFile g = GgufFile::open(p("u.gguf"));
  EXPECT_EQ(g.tensor("u8").to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 200, 255}));
  EXPECT_EQ(g.tensor("u32").to_vector<int64_t>(), (std::vector<int64_t>{7, 4294967295ll}));
}
