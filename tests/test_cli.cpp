// Runs the built `wick` binary and checks its exit status and output: devices,
// check (table, JSON, failures, bad usage).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace {

using wick::test::cli_path;
using wick::test::CliRun;
using wick::test::run_cli;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Cli, TheBinaryExists) { EXPECT_EQ(::access(cli_path().c_str(), X_OK), 0) << cli_path(); }

TEST(Cli, DevicesListsCpuSimdBlasAndGpuBackends) {
  CliRun r = run_cli("devices");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "CPU")) << r.out;
  EXPECT_TRUE(contains(r.out, "SIMD")) << r.out;
  EXPECT_TRUE(contains(r.out, "BLAS    OpenBLAS")) << r.out;
  EXPECT_TRUE(contains(r.out, "cuda")) << r.out;
  EXPECT_TRUE(contains(r.out, "rocm")) << r.out;
}

TEST(Cli, DevicesJsonHasTheCpuAndBothBackends) {
  CliRun r = run_cli("devices --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["cpu"]["cores"].get<int>(), 1);
  EXPECT_FALSE(j["cpu"]["simd"].get<std::string>().empty());
  ASSERT_EQ(j["gpu_backends"].size(), 2u);
  EXPECT_EQ(j["gpu_backends"][0]["name"], "cuda");
  EXPECT_EQ(j["gpu_backends"][1]["name"], "rocm");
  for (const auto& b : j["gpu_backends"]) EXPECT_FALSE(b["detail"].get<std::string>().empty());
  EXPECT_TRUE(j["gpus"].is_array());
}

TEST(Cli, CheckCopyOnTheCpuPassesWithJson) {
  CliRun r = run_cli("check --family copy --device cpu --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["devices"], nlohmann::json::array({"cpu"}));
  ASSERT_EQ(j["results"].size(), 1u);
  const auto& row = j["results"][0];
  EXPECT_EQ(row["family"], "copy");
  EXPECT_EQ(row["device"], "cpu");
  EXPECT_GT(row["cases"].get<int>(), 20);
  EXPECT_EQ(row["passed"], row["cases"]);
  EXPECT_EQ(row["failed"], 0);
  EXPECT_TRUE(row["failures"].empty());
  EXPECT_EQ(j["total"]["failed"], 0);
}

TEST(Cli, CheckPrintsATable) {
  CliRun r = run_cli("check -f copy -d cpu");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "family")) << r.out;
  EXPECT_TRUE(contains(r.out, "max abs err")) << r.out;
  EXPECT_TRUE(contains(r.out, "PASS:")) << r.out;
}

TEST(Cli, CheckExitsNonZeroOnAFailureAndNamesIt) {
  CliRun r = run_cli("check -f copy -d cpu --inject-failure --json");
  EXPECT_EQ(r.status, 1) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["pass"], false);
  EXPECT_EQ(j["total"]["failed"], 1);
  bool found = false;
  for (const auto& row : j["results"])
    if (row["family"] == "injected") {
      found = true;
      ASSERT_EQ(row["failures"].size(), 1u);
      EXPECT_TRUE(contains(row["failures"][0]["detail"].get<std::string>(), "got 1 expected 2"));
    }
  EXPECT_TRUE(found) << r.out;
}

TEST(Cli, UnknownFamilyIsAUsageError) {
  CliRun r = run_cli("check --family no_such_family", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "unknown family 'no_such_family'")) << r.out;
}

TEST(Cli, AnAbsentDeviceIsAUsageError) {
  CliRun r = run_cli("check --family copy --device gpu:63", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "gpu:63 is not present")) << r.out;
}

TEST(Cli, FileCommandsAreWiredAndReportAMissingFile) {
  CliRun r = run_cli("inspect /nonexistent/model.gguf", true);
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "[inspect] /nonexistent/model.gguf: cannot open")) << r.out;
  CliRun h = run_cli("--help");
  for (const char* sub : {"devices", "check", "bench", "inspect", "quantize", "export"})
    EXPECT_TRUE(contains(h.out, sub)) << sub << "\n" << h.out;
}

TEST(Cli, NoSubcommandIsAUsageError) {
  CliRun r = run_cli("", true);
  EXPECT_NE(r.status, 0) << r.out;
}

TEST(Cli, BenchOfTheCopyFamilyReportsThroughput) {
  CliRun r = run_cli("bench --family copy --device cpu --min-time 0.01 --min-repeats 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["device"], "cpu");
  EXPECT_GT(j["copy_bandwidth_gbs"].get<double>(), 0.0);
  ASSERT_FALSE(j["results"].empty());
  for (const auto& row : j["results"]) {
    EXPECT_FALSE(row.contains("error")) << row.dump();
    EXPECT_GT(row["median_us"].get<double>(), 0.0) << row.dump();
    EXPECT_GT(row["gbs"].get<double>(), 0.0) << row.dump();
    EXPECT_GE(row["repeats"].get<int>(), 2) << row.dump();
  }
}

}  // namespace
