// `wick bench`: times the parity cases that declare bytes or flops on one device
// (one warm-up run, then repeats until a minimum time and count, with the device
// synchronized around each run) and reports the median with the spread (min, max,
// standard deviation), GB/s or GFLOP/s from the median, and for memory-bound cases (bytes
// and no flops) the ratio to the device-to-device copy bandwidth measured in the same
// run. The JSON says where it ran: wick's version and commit, the host, its CPU and the
// threads wick uses.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.h"
#include "progress.h"
#include "wick/check.h"
#include "wick/device.h"
#include "wick_cli_version.h"

namespace wick::cli {

namespace {

using clock = std::chrono::steady_clock;

struct Timing {
  double median_s = 0, min_s = 0, max_s = 0, stddev_s = 0;  // stddev: of the samples (n - 1)
  int repeats = 0;
};

// Seconds of `fn` over at least `min_repeats` runs and `min_time_s` seconds.
template <class F>
Timing time_median(Device dev, F&& fn, double min_time_s, int min_repeats) {
  fn();  // warm-up: first-use costs (module loads, allocator growth, page faults)
  synchronize(dev);
  std::vector<double> samples;
  double total = 0;
  while ((total < min_time_s || int(samples.size()) < min_repeats) && samples.size() < 10000) {
    synchronize(dev);
    auto t0 = clock::now();
    fn();
    synchronize(dev);
    double s = std::chrono::duration<double>(clock::now() - t0).count();
    samples.push_back(s);
    total += s;
  }
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  Timing t;
  t.median_s = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
  t.min_s = samples.front();
  t.max_s = samples.back();
  const double mean = total / double(n);
  double ss = 0;
  for (double s : samples) ss += (s - mean) * (s - mean);
  t.stddev_s = n > 1 ? std::sqrt(ss / double(n - 1)) : 0.0;
  t.repeats = int(n);
  return t;
}

// The CPU's model name (/proc/cpuinfo), "unknown" where there is none.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown";
}

std::string host_name() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 ? std::string(buf) : std::string("unknown");
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Device-to-device copy bandwidth (read + write bytes per second) of a large
// contiguous f32 copy: 1 GiB on a GPU, 256 MiB on the CPU (beyond any cache).
double copy_bandwidth(Device dev, double min_time_s) {
  size_t bytes = dev.is_gpu() ? (size_t(1) << 30) : (size_t(1) << 28);
  Tensor src = Tensor::zeros(Shape{bytes / 4}, DType::F32, dev);
  Timing t = time_median(
      dev, [&] { (void)src.copy(); }, min_time_s, 5);
  return 2.0 * double(bytes) / t.median_s;
}

Device default_device() {
  auto devs = available_devices();
  for (const Device& d : devs)
    if (d.is_gpu()) return d;
  return Device::cpu();
}

}  // namespace

int cmd_bench(const BenchOptions& o) {
  const Device dev = o.device.empty() ? default_device() : parse_device(o.device);

  std::vector<const check::OpCase*> cases;
  for (size_t i : select_cases(o.families)) {
    const auto& c = check::all_cases()[i];
    if (c.bytes > 0 || c.flops > 0) cases.push_back(&c);
  }
  if (cases.empty()) throw UsageError("no selected case declares bytes or flops");

  nlohmann::json j;
  j["device"] = dev.str();
  j["device_name"] = device_info(dev).name;
  j["wick_version"] = WICK_CLI_VERSION;
  j["commit"] = WICK_CLI_COMMIT;
  j["date"] = utc_now();
  j["host"] = {{"name", host_name()},
               {"cpu", cpu_model()},
               {"cores", std::thread::hardware_concurrency()},
               {"threads", device_info(Device::cpu()).multiprocessors}};  // wick's CPU threads
  j["min_time_s"] = o.min_time_s;
  j["min_repeats"] = o.min_repeats;
  j["seed"] = o.seed;
  double copy_bw = 0;
  try {
    copy_bw = copy_bandwidth(dev, o.min_time_s);
  } catch (const Error& e) {
    fmt::print(stderr, "copy bandwidth not measured: {}\n", e.what());
  }
  j["copy_bandwidth_gbs"] = copy_bw / 1e9;
  j["results"] = nlohmann::json::array();

  size_t errors = 0;
  Progress progress(cases.size());
  for (size_t k = 0; k < cases.size(); ++k) {
    const check::OpCase& c = *cases[k];
    progress.step(k, fmt::format("{} {}: {}", dev.str(), c.family, c.name));
    nlohmann::json r = {{"family", c.family}, {"case", c.name}};
    try {
      Timing t;
      if (c.prepare) {
        auto fn = c.prepare(dev, o.seed);
        t = time_median(dev, fn, o.min_time_s, o.min_repeats);
        r["timed"] = "op";
      } else {
        t = time_median(
            dev, [&] { return c.run(dev, o.seed); }, o.min_time_s, o.min_repeats);
        r["timed"] = "run (includes input setup)";
      }
      r["median_us"] = t.median_s * 1e6;
      r["min_us"] = t.min_s * 1e6;
      r["max_us"] = t.max_s * 1e6;
      r["stddev_us"] = t.stddev_s * 1e6;
      r["repeats"] = t.repeats;
      if (c.bytes > 0) {
        r["gbs"] = c.bytes / t.median_s / 1e9;
        // The copy ratio says how close a memory-bound op comes to the memory's speed; a
        // case that declares flops is bounded by them instead.
        if (copy_bw > 0 && c.flops == 0) r["vs_copy"] = c.bytes / t.median_s / copy_bw;
      }
      if (c.flops > 0) r["gflops"] = c.flops / t.median_s / 1e9;
    } catch (const std::exception& e) {
      ++errors;
      r["error"] = e.what();
    }
    j["results"].push_back(r);
  }
  progress.done();
  j["errors"] = errors;

  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return errors == 0 ? 0 : 1;
  }
  fmt::print("device {} ({}), copy bandwidth {:.1f} GB/s (read + write)\n", dev.str(),
             j["device_name"].get<std::string>(), copy_bw / 1e9);
  fmt::print("wick {} (commit {}), host {} ({}, {} threads), {}\n", WICK_CLI_VERSION, WICK_CLI_COMMIT,
             j["host"]["name"].get<std::string>(), j["host"]["cpu"].get<std::string>(),
             j["host"]["threads"].get<int>(), j["date"].get<std::string>());
  fmt::print("{:<10} {:<52} {:>11} {:>11} {:>11} {:>5} {:>9} {:>10} {:>8}\n", "family", "case", "median us",
             "min us", "max us", "runs", "GB/s", "GFLOP/s", "vs copy");
  for (const auto& r : j["results"]) {
    std::string name = r["case"].get<std::string>();
    if (r.contains("timed") && r["timed"] != "op") name += " *";
    if (name.size() > 52) name = name.substr(0, 49) + "...";
    if (r.contains("error")) {
      fmt::print("{:<10} {:<52} error: {}\n", r["family"].get<std::string>(), name,
                 r["error"].get<std::string>());
      continue;
    }
    auto num = [&](const char* key, const char* f) {
      return r.contains(key) ? fmt::format(fmt::runtime(f), r[key].get<double>()) : std::string("-");
    };
    fmt::print("{:<10} {:<52} {:>11} {:>11} {:>11} {:>5} {:>9} {:>10} {:>8}\n",
               r["family"].get<std::string>(), name, num("median_us", "{:.1f}"), num("min_us", "{:.1f}"),
               num("max_us", "{:.1f}"), r["repeats"].get<int>(), num("gbs", "{:.2f}"),
               num("gflops", "{:.2f}"), num("vs_copy", "{:.2f}"));
  }
  bool any_run = false;
  for (const auto& r : j["results"]) any_run = any_run || (r.contains("timed") && r["timed"] != "op");
  if (any_run) fmt::print("* timed with input setup (the case has no prepare step)\n");
  fmt::print("GB/s and GFLOP/s from the median; vs copy: memory-bound cases only (no flops)\n");
  if (errors) fmt::print("FAIL: {} case(s) could not run\n", errors);
  return errors == 0 ? 0 : 1;
}

}  // namespace wick::cli
