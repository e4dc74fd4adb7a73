// `wick bench-model MODEL`: llama-bench's two figures. pp: the tokens per second of
// one prefill of n_prompt tokens; tg: of n_gen decode steps of one token each, the
// logits read back after each (as generation does). Every repetition starts from an
// empty cache, or with `depth` random tokens of context prefilled first (not timed);
// random token ids (a fixed seed); one warm-up run of each first.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "cmd_model.h"
#include "commands.h"

namespace wick::cli {

namespace {

using clock = std::chrono::steady_clock;

struct Result {
  std::string test;
  size_t n_prompt = 0, n_gen = 0;
  std::vector<double> samples;  // tokens per second
  double mean() const {
    double s = 0;
    for (double x : samples) s += x;
    return s / double(samples.size());
  }
  double stddev() const {
    if (samples.size() < 2) return 0.0;
    const double m = mean();
    double s = 0;
    for (double x : samples) s += (x - m) * (x - m);
    return std::sqrt(s / double(samples.size() - 1));
  }
};

double seconds_since(clock::time_point t0) {
  return std::chrono::duration<double>(clock::now() - t0).count();
}

}  // namespace

int cmd_bench_model(const BenchModelOptions& o) {
  if (o.reps < 1) throw UsageError("bench-model: -r must be at least 1");
  const Device dev = model_device(o.device);
  Model m = load_model(o.model, dev, o.depth + std::max<size_t>({o.n_prompt, o.n_gen, 1}),
                       model_communicator(dev, o.tp), o.graph);
  const ModelInfo& i = m.info();
  std::mt19937 rng(1234);
  auto random_tokens = [&](size_t n) {
    std::vector<int32_t> ids(n);
    for (int32_t& id : ids) id = int32_t(rng() % i.n_vocab);
    return ids;
  };
  // An empty cache, then `depth` tokens of context in prefills of at most 512.
  auto start = [&] {
    m.reset();
    for (size_t done = 0; done < o.depth;) {
      const size_t n = std::min<size_t>(512, o.depth - done);
      (void)m.forward(random_tokens(n)).to_vector<float>();
      done += n;
    }
  };
  auto prefill = [&] {
    start();
    const auto ids = random_tokens(o.n_prompt);
    const auto t0 = clock::now();
    (void)m.forward(ids).to_vector<float>();
    return double(o.n_prompt) / seconds_since(t0);
  };
  auto decode = [&] {
    start();
    int32_t id = random_tokens(1)[0];
    const auto t0 = clock::now();
    for (size_t k = 0; k < o.n_gen; ++k) {
      (void)m.forward({id}).to_vector<float>();
      id = int32_t(rng() % i.n_vocab);
    }
    return double(o.n_gen) / seconds_since(t0);
  };

  std::vector<Result> results;
  const std::string at = o.depth > 0 ? fmt::format(" @ d{}", o.depth) : std::string();
  if (o.n_prompt > 0) {
    Result r{fmt::format("pp{}{}", o.n_prompt, at), o.n_prompt, 0, {}};
    (void)prefill();
    for (int k = 0; k < o.reps; ++k) r.samples.push_back(prefill());
    results.push_back(std::move(r));
  }
  if (o.n_gen > 0) {
    Result r{fmt::format("tg{}{}", o.n_gen, at), 0, o.n_gen, {}};
    (void)decode();
    for (int k = 0; k < o.reps; ++k) r.samples.push_back(decode());
    results.push_back(std::move(r));
  }

  const std::string label = fmt::format("{} {}", i.arch, i.name);
  const double size_mib = double(i.weight_bytes) / (1024.0 * 1024.0);
  const double params_m = double(i.n_params) / 1e6;
  if (o.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const Result& r : results) {
      out.push_back({{"model", o.model},
                     {"arch", i.arch},
                     {"name", i.name},
                     {"device", dev.str()},
                     {"device_name", device_info(dev).name},
                     {"tp", i.tp},
                     {"model_size", i.weight_bytes},
                     {"model_n_params", i.n_params},
                     {"test", r.test},
                     {"n_prompt", r.n_prompt},
                     {"n_gen", r.n_gen},
                     {"n_depth", o.depth},
                     {"repetitions", r.samples.size()},
                     {"avg_ts", r.mean()},
                     {"stddev_ts", r.stddev()},
                     {"samples_ts", r.samples}});
    }
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("| model | size | params | device | test | t/s |\n");
  fmt::print("| --- | ---: | ---: | --- | ---: | ---: |\n");
  for (const Result& r : results) {
    fmt::print("| {} | {:.2f} MiB | {:.2f} M | {} | {} | {:.2f} ± {:.2f} |\n", label, size_mib, params_m,
               dev.str(), r.test, r.mean(), r.stddev());
  }
  return 0;
}

}  // namespace wick::cli
