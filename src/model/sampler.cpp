// The sampler chain (wick/sampler.h), following llama.cpp's samplers
// (src/llama-sampling.cpp): the same steps, order, defaults and edge cases.
#include "wick/sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

#include "wick/error.h"

namespace wick {

namespace {

// Logit descending; ties by lower id, so every step is deterministic.
bool more_likely(const TokenCandidate& a, const TokenCandidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

}  // namespace

void sampling::penalize(std::vector<TokenCandidate>& c, const std::vector<int32_t>& recent, float penalty) {
  if (penalty == 1.0f || recent.empty()) return;
  const std::unordered_set<int32_t> seen(recent.begin(), recent.end());
  for (TokenCandidate& t : c) {
    if (!seen.count(t.id)) continue;
    t.logit = t.logit <= 0.0f ? t.logit * penalty : t.logit / penalty;
  }
}

void sampling::softmax(std::vector<TokenCandidate>& c) {
  if (c.empty()) return;
  std::sort(c.begin(), c.end(), more_likely);
  const float max = c[0].logit;
  double sum = 0.0;
  for (TokenCandidate& t : c) {
    t.p = std::exp(t.logit - max);
    sum += t.p;
  }
  for (TokenCandidate& t : c) t.p = float(t.p / sum);
}

void sampling::top_k(std::vector<TokenCandidate>& c, int32_t k) {
  if (k <= 0) return;
  if (size_t(k) >= c.size()) {
    std::sort(c.begin(), c.end(), more_likely);
    return;
  }
  std::partial_sort(c.begin(), c.begin() + k, c.end(), more_likely);
  c.resize(size_t(k));
}

void sampling::top_p(std::vector<TokenCandidate>& c, float p, size_t min_keep) {
  if (p >= 1.0f || c.empty()) return;
  softmax(c);
  double cum = 0.0;
  for (size_t i = 0; i < c.size(); ++i) {
    cum += c[i].p;
    if (cum >= p && i + 1 >= min_keep) {
      c.resize(i + 1);
      return;
    }
  }
}

void sampling::min_p(std::vector<TokenCandidate>& c, float p, size_t min_keep) {
  if (p <= 0.0f || c.empty()) return;
  std::sort(c.begin(), c.end(), more_likely);
  // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p): no softmax needed.
  const float min_logit = c[0].logit + std::log(p);
  size_t keep = 0;
  while (keep < c.size() && c[keep].logit >= min_logit) ++keep;
  c.resize(std::max(keep, std::min(min_keep, c.size())));
}

void sampling::temperature(std::vector<TokenCandidate>& c, float temp) {
  if (c.empty()) return;
  if (temp <= 0.0f) {
    const auto best = std::min_element(c.begin(), c.end(), more_likely);
    const TokenCandidate keep = *best;
    c.assign(1, keep);
    return;
  }
  for (TokenCandidate& t : c) t.logit /= temp;
}

int32_t sampling::draw(std::vector<TokenCandidate>& c, double u) {
  if (c.empty()) throw_error(ErrorKind::InvalidArgument, "sample", "no candidate tokens left to draw from");
  softmax(c);
  double cum = 0.0;
  for (const TokenCandidate& t : c) {
    cum += t.p;
    if (u < cum) return t.id;
  }
  return c.back().id;  // u within rounding of 1
}

Sampler::Sampler(const SamplerParams& params, size_t n_ctx)
    : params_(params),
      seed_(params.seed == SamplerParams::kRandomSeed ? std::random_device{}() : params.seed),
      window_(params.repeat_last_n < 0 ? n_ctx : size_t(params.repeat_last_n)),
      rng_(seed_) {
  if (!(params.temp == params.temp) || !(params.top_p == params.top_p) || !(params.min_p == params.min_p) ||
      !(params.repeat_penalty > 0.0f) || !std::isfinite(params.repeat_penalty)) {
    throw_error(ErrorKind::InvalidArgument, "sampler",
                fmt::format("temp {} top_p {} min_p {} repeat_penalty {}: need numbers, and a penalty > 0",
                            params.temp, params.top_p, params.min_p, params.repeat_penalty));
  }
}

void Sampler::accept(int32_t token) {
  if (window_ == 0) return;
  recent_.push_back(token);
  while (recent_.size() > window_) recent_.pop_front();
}

int32_t Sampler::sample(const float* logits, size_t n_vocab) {
  if (n_vocab == 0) throw_error(ErrorKind::InvalidArgument, "sample", "empty logits");
  if (n_vocab > size_t(std::numeric_limits<int32_t>::max())) {
    throw_error(ErrorKind::InvalidArgument, "sample",
                fmt::format("{} logits exceed the token id range", n_vocab));
  }
  cand_.resize(n_vocab);
  for (size_t i = 0; i < n_vocab; ++i) cand_[i] = {int32_t(i), logits[i], 0.0f};
  sampling::penalize(cand_, std::vector<int32_t>(recent_.begin(), recent_.end()), params_.repeat_penalty);
  if (params_.temp <= 0.0f) {  // greedy: the other steps all keep the most likely token
    sampling::temperature(cand_, 0.0f);
    return cand_[0].id;
  }
  sampling::top_k(cand_, params_.top_k);
  sampling::top_p(cand_, params_.top_p);
  sampling::min_p(cand_, params_.min_p);
  sampling::temperature(cand_, params_.temp);
  // 53 random bits -> u in [0, 1), the same on every platform for one seed.
  const double u = double(rng_() >> 11) * 0x1.0p-53;
  return sampling::draw(cand_, u);
}

}  // namespace wick
