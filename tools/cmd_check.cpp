// `wick check`: every parity case on every device present (or the ones asked for):
// the CPU against the float64 references, each GPU against the CPU. Prints a table
// of family x device with the largest errors; exits 1 when any case fails.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "progress.h"
#include "wick/check.h"

namespace wick::cli {

Device parse_device(const std::string& name) {
  Device d;
  try {
    d = Device::parse(name);
  } catch (const Error& e) {
    throw UsageError(fmt::format("--device {}: not a device name (cpu, gpu, gpu:N)", name));
  }
  std::string why;
  if (!d.is_cpu() && !check::device_present(d, &why)) throw UsageError(why);
  return d;
}

using check::CaseResult;
using check::OpCase;

std::vector<size_t> select_cases(const std::vector<std::string>& families) {
  const auto& cases = check::all_cases();
  std::vector<std::string> known = check::families();
  for (const auto& f : families) {
    if (std::find(known.begin(), known.end(), f) == known.end()) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw UsageError(fmt::format("unknown family '{}' (known: {})", f, list));
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < cases.size(); ++i)
    if (families.empty() || std::find(families.begin(), families.end(), cases[i].family) != families.end())
      out.push_back(i);
  return out;
}

namespace {

struct Row {
  std::string device, family;
  size_t cases = 0, passed = 0, failed = 0, skipped = 0;
  double max_abs_err = 0, max_nmse = 0;
  nlohmann::json failures = nlohmann::json::array();
};

// The devices to check: the named ones (each must be present) or all present.
std::vector<Device> check_devices(const std::vector<std::string>& names) {
  if (names.empty()) return available_devices();
  std::vector<Device> out;
  for (const auto& n : names) out.push_back(parse_device(n));
  return out;
}

// A case that must fail: returns 1 where 2 is expected (for tests of the exit status).
OpCase injected_failure() {
  OpCase c;
  c.family = "injected";
  c.name = "injected failure (--inject-failure)";
  c.vs_reference = c.vs_cpu = check::Tolerance::exact_match();
  c.run = [](Device d, uint64_t) {
    return std::vector<Tensor>{Tensor::full(Scalar(1.0), Shape{1}, DType::F32, d)};
  };
  c.reference = [](uint64_t) { return std::vector<std::vector<double>>{{2.0}}; };
  return c;
}

std::string err_str(double e) { return e == 0 ? "0" : fmt::format("{:.3g}", e); }

}  // namespace

int cmd_check(const CheckOptions& o) {
  std::vector<size_t> ids = select_cases(o.families);
  std::vector<const OpCase*> cases;
  for (size_t i : ids) cases.push_back(&check::all_cases()[i]);
  OpCase injected = injected_failure();
  if (o.inject_failure) cases.push_back(&injected);
  if (cases.empty()) throw_error(ErrorKind::InvalidArgument, "cli", "no cases are registered");

  if (o.list) {
    for (const OpCase* c : cases)
      fmt::print("{:<10} {:<11} {}\n", c->family, check::layout_kind_name(c->layout), c->name);
    return 0;
  }

  std::vector<Device> devices = check_devices(o.devices);
  std::vector<Row> rows;
  Progress progress(cases.size() * devices.size());
  size_t step = 0;
  for (const Device& dev : devices) {
    for (const OpCase* c : cases) {
      progress.step(step++, fmt::format("{} {}: {}", dev.str(), c->family, c->name));
      auto row = std::find_if(rows.begin(), rows.end(),
                              [&](const Row& r) { return r.device == dev.str() && r.family == c->family; });
      if (row == rows.end()) {
        rows.push_back(Row{dev.str(), c->family});
        row = rows.end() - 1;
      }
      CaseResult r = check::run_case(*c, dev, o.seed);
      ++row->cases;
      if (r.skipped) {
        ++row->skipped;
      } else if (r.pass) {
        ++row->passed;
      } else {
        ++row->failed;
        row->failures.push_back({{"case", c->name}, {"detail", r.detail}});
      }
      row->max_abs_err = std::max(row->max_abs_err, r.max_abs_err);
      row->max_nmse = std::max(row->max_nmse, r.nmse);
      if (o.verbose && !o.json) {
        progress.done();
        fmt::print("{:<4} {:<6} {:<10} {}{}\n",
                   r.skipped ? "SKIP"
                   : r.pass  ? "ok"
                             : "FAIL",
                   dev.str(), c->family, c->name, r.pass ? "" : ": " + r.detail);
      }
    }
  }
  progress.done();

  size_t total = 0, failed = 0, skipped = 0;
  for (const Row& r : rows) {
    total += r.cases;
    failed += r.failed;
    skipped += r.skipped;
  }
  if (o.json) {
    nlohmann::json j;
    j["devices"] = nlohmann::json::array();
    for (const Device& d : devices) j["devices"].push_back(d.str());
    j["seed"] = o.seed;
    j["results"] = nlohmann::json::array();
    for (const Row& r : rows)
      j["results"].push_back({{"device", r.device},
                              {"family", r.family},
                              {"cases", r.cases},
                              {"passed", r.passed},
                              {"failed", r.failed},
                              {"skipped", r.skipped},
                              {"max_abs_err", r.max_abs_err},
                              {"max_nmse", r.max_nmse},
                              {"failures", r.failures}});
    j["total"] = {{"cases", total}, {"failed", failed}, {"skipped", skipped}};
    j["pass"] = failed == 0;
    fmt::print("{}\n", j.dump(2));
    return failed == 0 ? 0 : 1;
  }

  fmt::print("{:<7} {:<12} {:>6} {:>7} {:>7} {:>8} {:>12} {:>10}\n", "device", "family", "cases", "passed",
             "failed", "skipped", "max abs err", "max NMSE");
  for (const Row& r : rows)
    fmt::print("{:<7} {:<12} {:>6} {:>7} {:>7} {:>8} {:>12} {:>10}\n", r.device, r.family, r.cases, r.passed,
               r.failed, r.skipped, err_str(r.max_abs_err), err_str(r.max_nmse));
  for (const Row& r : rows)
    for (const auto& f : r.failures)
      fmt::print("FAIL {} {}: {}: {}\n", r.device, r.family, f["case"].get<std::string>(),
                 f["detail"].get<std::string>());
  fmt::print("{}: {} cases on {} device(s), {} failed, {} skipped\n", failed == 0 ? "PASS" : "FAIL", total,
             devices.size(), failed, skipped);
  return failed == 0 ? 0 : 1;
}

}  // namespace wick::cli
