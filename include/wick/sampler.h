// Token sampling: a chain of steps over the logits of one position, on the host,
// in llama.cpp's order and with its defaults and flag names:
//   penalties (--repeat-penalty, --repeat-last-n) -> top-k (--top-k) -> top-p (--top-p)
//   -> min-p (--min-p) -> temperature (--temp) -> the draw (--seed).
// A temperature <= 0 keeps only the most likely token (greedy decoding).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <random>
#include <vector>

namespace wick {

struct SamplerParams {
  float temp = 0.8f;            // <= 0: greedy
  int32_t top_k = 40;           // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  int32_t repeat_last_n = 64;   // tokens the penalty looks back on; 0: off, -1: the whole context
  uint32_t seed = 0xFFFFFFFFu;  // kRandomSeed: draw a seed from std::random_device
  static constexpr uint32_t kRandomSeed = 0xFFFFFFFFu;
};

// A token under consideration: its id, logit and (after softmax) probability.
struct TokenCandidate {
  int32_t id = 0;
  float logit = 0.0f;
  float p = 0.0f;
};

// The chain's steps, each over the current candidates (public so they can be tested
// one by one). Each keeps at least `min_keep` candidates where it removes any.
namespace sampling {
// For each distinct token of `recent`: logit * penalty when the logit is <= 0, else logit / penalty.
void penalize(std::vector<TokenCandidate>& c, const std::vector<int32_t>& recent, float penalty);
// Sorts by logit, descending (ties: lower id first), and fills p with the softmax of the logits.
void softmax(std::vector<TokenCandidate>& c);
// Keeps the k most likely, sorted by logit, descending (k <= 0: leaves c as it is).
void top_k(std::vector<TokenCandidate>& c, int32_t k);
// Keeps the most likely tokens whose probabilities first sum to >= p (p >= 1: all).
void top_p(std::vector<TokenCandidate>& c, float p, size_t min_keep = 1);
// Keeps the tokens whose probability is >= p times the largest (p <= 0: all).
void min_p(std::vector<TokenCandidate>& c, float p, size_t min_keep = 1);
// Divides the logits by temp; temp <= 0 keeps only the largest logit (first among ties: lowest id).
void temperature(std::vector<TokenCandidate>& c, float temp);
// The candidate drawn by u in [0, 1): the first whose cumulative softmax probability exceeds u.
int32_t draw(std::vector<TokenCandidate>& c, double u);
}  // namespace sampling

class Sampler {
 public:
  // n_ctx: what repeat_last_n = -1 means (the context size).
  explicit Sampler(const SamplerParams& params = {}, size_t n_ctx = 0);

  // Runs the chain over `n_vocab` logits and returns the chosen token (not yet accepted).
  int32_t sample(const float* logits, size_t n_vocab);
  // Records a token (prompt or generated) for the repetition penalty.
  void accept(int32_t token);
  const SamplerParams& params() const { return params_; }
  uint32_t seed() const { return seed_; }  // the seed in use (drawn when params().seed is kRandomSeed)

 private:
  SamplerParams params_;
  uint32_t seed_;
  size_t window_;
  std::deque<int32_t> recent_;
  std::mt19937_64 rng_;
  std::vector<TokenCandidate> cand_;
};

}  // namespace wick
