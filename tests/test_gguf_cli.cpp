// End-to-end checks of `wick inspect`, `wick quantize` and `wick export` through the
// built binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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
