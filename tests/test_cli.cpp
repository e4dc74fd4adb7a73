// Runs the built `wick` binary and checks its exit status and output: devices,
// check (table, JSON, failures, bad usage).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <regex>
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
  EXPECT_EQ(r.status, 3) << r.out;  // a file error
  EXPECT_TRUE(contains(r.out, "[inspect] /nonexistent/model.gguf: cannot open")) << r.out;
  CliRun h = run_cli("--help");
  for (const char* sub : {"devices", "check", "bench", "inspect", "quantize", "export"})
    EXPECT_TRUE(contains(h.out, sub)) << sub << "\n" << h.out;
}

TEST(Cli, NoSubcommandIsAUsageError) {
  CliRun r = run_cli("", true);
  EXPECT_EQ(r.status, 2) << r.out;
}

TEST(Cli, UsageErrorsExit2WithTheirReason) {
  CliRun sub = run_cli("frobnicate", true);
  EXPECT_EQ(sub.status, 2) << sub.out;
  EXPECT_TRUE(contains(sub.out, "unknown subcommand 'frobnicate' (known: devices, check, bench")) << sub.out;
  CliRun opt = run_cli("check --no-such-option", true);
  EXPECT_EQ(opt.status, 2) << opt.out;
  EXPECT_TRUE(contains(opt.out, "--no-such-option")) << opt.out;
  EXPECT_EQ(run_cli("bench --min-time nan", true).status, 2);
  EXPECT_EQ(run_cli("bench --min-repeats 0", true).status, 2);
  CliRun dev = run_cli("check --device tpu", true);
  EXPECT_EQ(dev.status, 2) << dev.out;
  EXPECT_TRUE(contains(dev.out, "--device tpu: not a device name (cpu, gpu, gpu:N)")) << dev.out;
  EXPECT_EQ(run_cli("inspect", true).status, 2);  // FILE missing
}

TEST(Cli, VersionNamesTheReleaseAndTheCommit) {
  CliRun r = run_cli("--version");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(^wick \d+\.\d+\.\d+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)\n$)")))
      << r.out;
}

TEST(Cli, HelpShowsDefaultsValidValuesAndExitCodes) {
  CliRun top = run_cli("--help");
  EXPECT_EQ(top.status, 0) << top.out;
  EXPECT_TRUE(contains(top.out, "2 bad usage; 3 a file that cannot be read or written")) << top.out;
  CliRun b = run_cli("bench --help");
  EXPECT_EQ(b.status, 0) << b.out;
  EXPECT_TRUE(contains(b.out, "cpu, gpu (the first GPU), gpu:N")) << b.out;
  EXPECT_TRUE(contains(b.out, "known: ")) << b.out;
  EXPECT_TRUE(contains(b.out, "copy")) << b.out;
  EXPECT_TRUE(contains(b.out, "0.25")) << b.out;  // --min-time's default
  EXPECT_TRUE(contains(b.out, "1234")) << b.out;  // --seed's default
  CliRun q = run_cli("quantize --help");
  EXPECT_EQ(q.status, 0) << q.out;
  for (const char* s : {"q4_0", "q8_0", "q4_K", "q6_K", "bf16", "--allow-requantize", "--output-tensor-type"})
    EXPECT_TRUE(contains(q.out, s)) << s << "\n" << q.out;
  EXPECT_FALSE(contains(q.out, "q8_K")) << q.out;  // an activation format
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
    // The spread: min <= median <= max, a standard deviation no larger than the range.
    EXPECT_LE(row["min_us"].get<double>(), row["median_us"].get<double>()) << row.dump();
    EXPECT_LE(row["median_us"].get<double>(), row["max_us"].get<double>()) << row.dump();
    EXPECT_GE(row["stddev_us"].get<double>(), 0.0) << row.dump();
    EXPECT_LE(row["stddev_us"].get<double>(), row["max_us"].get<double>() - row["min_us"].get<double>())
        << row.dump();
    EXPECT_TRUE(row.contains("vs_copy")) << row.dump();  // a copy is memory-bound
  }
  // Where it ran.
  EXPECT_TRUE(std::regex_match(j["commit"].get<std::string>(), std::regex("[0-9a-f]{12}(-dirty)?|unknown")))
      << j.dump();
  EXPECT_FALSE(j["wick_version"].get<std::string>().empty());
  EXPECT_FALSE(j["host"]["name"].get<std::string>().empty());
  EXPECT_FALSE(j["host"]["cpu"].get<std::string>().empty());
  EXPECT_GE(j["host"]["threads"].get<int>(), 1);
  EXPECT_GE(j["host"]["cores"].get<int>(), 1);
  EXPECT_EQ(j["min_repeats"].get<int>(), 2);
}

TEST(Cli, BenchGivesNoCopyRatioForComputeBoundCases) {
  CliRun r = run_cli("bench --family matmul --device cpu --min-time 0.001 --repetitions 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  size_t compute = 0;
  for (const auto& row : j["results"]) {
    if (!row.contains("gflops")) continue;
    ++compute;
    EXPECT_FALSE(row.contains("vs_copy")) << row.dump();
  }
  EXPECT_GT(compute, 0u) << r.out;
}

}  // namespace
