// `wick generate MODEL -p PROMPT`: text generation with llama.cpp's sampling flags,
// streamed to stdout as it is produced; the figures of the run go to stderr.
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "cmd_model.h"
#include "commands.h"
#include "progress.h"
#include "wick/io.h"
#include "wick/tokenizer.h"

namespace wick::cli {

namespace {

double mib(size_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

// The prompt's tokens: through the file's chat template with --chat when wick knows
// the template, else the raw prompt.
std::vector<int32_t> prompt_tokens(const Model& m, const GenerateCliOptions& o) {
  if (o.chat) {
    const ChatTemplate t = detect_chat_template(m.tokenizer().chat_template());
    if (t != ChatTemplate::Unknown) {
      const std::string text = apply_chat_template(t, {{"user", o.prompt}}, true);
      return m.tokenize(text, true, true);
    }
    fmt::print(stderr, "wick: the model's chat template is not supported; using the raw prompt\n");
  }
  return m.tokenize(o.prompt);
}

}  // namespace

Device model_device(const std::string& name) {
  if (!name.empty()) return parse_device(name);
  for (const Device& d : available_devices())
    if (d.is_gpu()) return d;
  return Device::cpu();
}

std::shared_ptr<Communicator> model_communicator(Device device, size_t tp) {
  if (tp == 0) return nullptr;
  if (device.is_cpu()) return Communicator::host(std::vector<Device>(tp, device));
  if (tp == 1) return Communicator::host({device});
  size_t gpus = 0;
  for (const Device& d : available_devices()) gpus += d.is_gpu();
  if (gpus < tp) {
    throw_error(ErrorKind::InvalidArgument, "tp",
                fmt::format("--tp {} on GPUs needs {} GPUs, {} present", tp, tp, gpus));
  }
  throw_error(ErrorKind::InvalidArgument, "tp",
              fmt::format("--tp {} across GPUs needs NCCL, which this build of wick does not have; --tp "
                          "runs on the CPU (-d cpu) or as one rank on a GPU (--tp 1)",
                          tp));
}

Model load_model(const std::string& path, Device device, size_t ctx, std::shared_ptr<Communicator> comm,
                 bool graph) {
  ModelOptions mo;
  mo.device = device;
  mo.ctx = ctx;
  mo.graph = graph;
  const std::string where = comm ? fmt::format("{} (tp {})", device.str(), comm->size()) : device.str();
  mo.communicator = std::move(comm);
  Progress bar(100);
  int shown = -1;
  mo.progress = [&](size_t done, size_t total) {
    const int pct = total ? int(done * 100 / total) : 100;
    if (pct == shown) return;
    shown = pct;
    bar.step(size_t(std::min(pct, 99)),
             fmt::format("loading {} to {} ({:.0f} / {:.0f} MiB)", path, where, mib(done), mib(total)));
  };
  Model m = Model::load(path, mo);
  bar.done();
  return m;
}

int cmd_generate(const GenerateCliOptions& o) {
  using clock = std::chrono::steady_clock;
  const Device dev = model_device(o.device);
  auto comm = model_communicator(dev, o.tp);
  const size_t base = memory_stats(dev).in_use;
  const auto t0 = clock::now();
  Model m = load_model(o.model, dev, o.ctx, std::move(comm), o.graph);
  const double load_s = std::chrono::duration<double>(clock::now() - t0).count();
  const std::vector<int32_t> ids = prompt_tokens(m, o);

  GenerateOptions g;
  g.n_predict = o.n_predict;
  g.sampler = o.sampler;
  if (!o.dump_logits.empty()) {
    g.on_prompt_logits = [&](const Tensor& logits) { write_npy(o.dump_logits, logits.flatten_all()); };
  }
  const GenerateStats st = m.generate(ids, g, [](int32_t, std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::fputc('\n', stdout);
  std::fflush(stdout);

  const ModelInfo& i = m.info();
  const MemoryStats mem = memory_stats(dev);
  const size_t model_bytes = i.weight_bytes + i.kv_cache_bytes;
  fmt::print(stderr, "load: {:.2f} s ({} {}, {:.1f} MiB of weights on {}{})\n", load_s, i.arch, i.name,
             mib(i.weight_bytes), dev.str(), i.tp > 1 ? fmt::format(", tp {}", i.tp) : "");
  fmt::print(stderr, "prompt: {} tokens in {:.3f} s, {:.1f} tok/s\n", st.prompt_tokens, st.prompt_seconds,
             st.prompt_seconds > 0 ? double(st.prompt_tokens) / st.prompt_seconds : 0.0);
  fmt::print(stderr, "generated: {} tokens, {} decode steps in {:.3f} s, {:.1f} tok/s{}\n",
             st.generated_tokens, st.decode_steps, st.decode_seconds,
             st.decode_seconds > 0 ? double(st.decode_steps) / st.decode_seconds : 0.0,
             st.stopped_at_eog ? " (end of generation)" : "");
  if (o.sampler.temp > 0) fmt::print(stderr, "sampling: seed {}\n", st.seed);
  fmt::print(
      stderr,
      "memory on {}: {:.1f} MiB in use, {:.1f} MiB at the peak; weights + KV cache ({} tokens) {:.1f} MiB, "
      "+10% {:.1f} MiB\n",
      dev.str(), mib(mem.in_use - base), mib(mem.peak - base), i.n_ctx, mib(model_bytes),
      mib(model_bytes + model_bytes / 10));
  return 0;
}

}  // namespace wick::cli
