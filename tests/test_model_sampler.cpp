// The sampler chain's steps on a small logit vector, against values computed by hand:
// logits [1, 2, 3, 0.5, -1] have softmax p = e^(l - 3) / 1.603615
// = [0.084394, 0.229406, 0.623591, 0.051187, 0.011421] (ids 0..4).
#include <gtest/gtest.h>

#include <map>

#include "wick/error.h"
#include "wick/sampler.h"

namespace wick {
namespace {

const std::vector<float> kLogits = {1.0f, 2.0f, 3.0f, 0.5f, -1.0f};

std::vector<TokenCandidate> candidates() {
  std::vector<TokenCandidate> c;
  for (size_t i = 0; i < kLogits.size(); ++i) c.push_back({int32_t(i), kLogits[i], 0.0f});
  return c;
}

std::vector<int32_t> ids(const std::vector<TokenCandidate>& c) {
  std::vector<int32_t> v;
  for (const auto& t : c) v.push_back(t.id);
  return v;
}

TEST(Sampler, SoftmaxSortsAndNormalizes) {
  auto c = candidates();
  sampling::softmax(c);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1, 0, 3, 4}));
  const double want[] = {0.623591, 0.229406, 0.084394, 0.051187, 0.011421};
  for (size_t i = 0; i < c.size(); ++i) EXPECT_NEAR(c[i].p, want[i], 1e-6);
}

TEST(Sampler, TopKKeepsTheKLargest) {
  auto c = candidates();
  sampling::top_k(c, 2);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1}));
  c = candidates();
  sampling::top_k(c, 0);  // off
  EXPECT_EQ(c.size(), 5u);
  c = candidates();
  sampling::top_k(c, 10);  // more than there are
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1, 0, 3, 4}));
}

TEST(Sampler, TopPKeepsTheSmallestSetReachingP) {
  auto c = candidates();
  sampling::top_p(c, 0.8f);  // 0.6236 < 0.8 <= 0.6236 + 0.2294
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1}));
  c = candidates();
  sampling::top_p(c, 0.9f);  // 0.8530 < 0.9 <= 0.9374
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1, 0}));
  c = candidates();
  sampling::top_p(c, 0.5f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2}));
  c = candidates();
  sampling::top_p(c, 0.5f, 3);  // min_keep
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1, 0}));
  c = candidates();
  sampling::top_p(c, 1.0f);  // off
  EXPECT_EQ(c.size(), 5u);
}

TEST(Sampler, MinPKeepsTokensWithinAFactorOfTheBest) {
  auto c = candidates();
  sampling::min_p(c, 0.1f);  // p >= 0.06236: ids 2, 1, 0 (0.0844), not 3 (0.0512)
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1, 0}));
  c = candidates();
  sampling::min_p(c, 0.3f);  // p >= 0.1871
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1}));
  c = candidates();
  sampling::min_p(c, 0.9f, 2);  // only id 2 passes; min_keep 2
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2, 1}));
  c = candidates();
  sampling::min_p(c, 0.0f);  // off
  EXPECT_EQ(c.size(), 5u);
}

TEST(Sampler, RepetitionPenaltyDividesPositiveAndMultipliesNegativeLogits) {
  auto c = candidates();
  sampling::penalize(c, {2, 4, 4}, 2.0f);  // each distinct token once
  EXPECT_FLOAT_EQ(c[2].logit, 1.5f);
  EXPECT_FLOAT_EQ(c[4].logit, -2.0f);
  EXPECT_FLOAT_EQ(c[0].logit, 1.0f);
  EXPECT_FLOAT_EQ(c[1].logit, 2.0f);
  EXPECT_FLOAT_EQ(c[3].logit, 0.5f);
}

TEST(Sampler, TemperatureScalesAndZeroKeepsTheBest) {
  auto c = candidates();
  sampling::temperature(c, 0.5f);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_FLOAT_EQ(c[i].logit, 2.0f * kLogits[i]);
  c = candidates();
  sampling::temperature(c, 0.0f);
  EXPECT_EQ(ids(c), (std::vector<int32_t>{2}));
  std::vector<TokenCandidate> tie = {{5, 1.0f, 0}, {3, 1.0f, 0}, {4, 0.0f, 0}};
  sampling::temperature(tie, -1.0f);
  EXPECT_EQ(ids(tie), (std::vector<int32_t>{3}));  // ties: the lower id
}

TEST(Sampler, DrawWalksTheCumulativeProbabilities) {
  // Candidates 2 and 1: p = 0.731059, 0.268941.
  std::vector<TokenCandidate> c = {{1, 2.0f, 0}, {2, 3.0f, 0}};
  EXPECT_EQ(sampling::draw(c, 0.0), 2);
  EXPECT_EQ(sampling::draw(c, 0.73), 2);
  EXPECT_EQ(sampling::draw(c, 0.7311), 1);
  EXPECT_EQ(sampling::draw(c, 0.999999), 1);
  std::vector<TokenCandidate> none;
  EXPECT_THROW(sampling::draw(none, 0.5), Error);
}

TEST(Sampler, GreedyTakesTheArgmaxAfterPenalties) {
  SamplerParams p;
  p.temp = 0.0f;
  Sampler s(p);
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size()), 2);
  p.repeat_penalty = 2.0f;
  Sampler pen(p);
  pen.accept(2);  // 3 / 2 = 1.5 < 2: id 1 wins
  EXPECT_EQ(pen.sample(kLogits.data(), kLogits.size()), 1);
}

TEST(Sampler, PenaltyWindowForgetsOldTokens) {
  SamplerParams p;
  p.temp = 0.0f;
  p.repeat_penalty = 2.0f;
  p.repeat_last_n = 2;
  Sampler s(p);
  s.accept(2);
  s.accept(0);
  s.accept(3);  // the window holds 0 and 3: id 2 is no longer penalized
  EXPECT_EQ(s.sample(kLogits.data(), kLogits.size()), 2);
  p.repeat_last_n = 0;  // off
  Sampler off(p);
  off.accept(2);
  EXPECT_EQ(off.sample(kLogits.data(), kLogits.size()), 2);
}

TEST(Sampler, SameSeedSameTokens) {
  SamplerParams p;
  p.temp = 1.0f;
  p.seed = 42;
  Sampler a(p), b(p);
  std::vector<int32_t> ta, tb;
  for (int i = 0; i < 50; ++i) {
    ta.push_back(a.sample(kLogits.data(), kLogits.size()));
    tb.push_back(b.sample(kLogits.data(), kLogits.size()));
  }
  EXPECT_EQ(ta, tb);
  EXPECT_EQ(a.seed(), 42u);
}

TEST(Sampler, DrawsFollowTheSoftmax) {
  SamplerParams p;
  p.temp = 1.0f;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.seed = 7;
  Sampler s(p);
  std::map<int32_t, int> count;
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++count[s.sample(kLogits.data(), kLogits.size())];
  const double want[] = {0.084394, 0.229406, 0.623591, 0.051187, 0.011421};
  for (int32_t id = 0; id < 5; ++id) EXPECT_NEAR(double(count[id]) / n, want[id], 0.01) << "id " << id;
}

TEST(Sampler, DefaultChainIsLlamaCpps) {
  const SamplerParams p;
  EXPECT_FLOAT_EQ(p.temp, 0.8f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_FLOAT_EQ(p.top_p, 0.95f);
  EXPECT_FLOAT_EQ(p.min_p, 0.05f);
  EXPECT_FLOAT_EQ(p.repeat_penalty, 1.0f);
  EXPECT_EQ(p.repeat_last_n, 64);
  // With the defaults top-p 0.95 keeps ids 2, 1, 0, 3 (0.9374 < 0.95 <= 0.9886), so id 4
  // is never drawn.
  SamplerParams q;
  q.seed = 3;
  Sampler s(q);
  for (int i = 0; i < 2000; ++i) EXPECT_NE(s.sample(kLogits.data(), kLogits.size()), 4);
}

TEST(Sampler, BadParametersAreRefused) {
  SamplerParams p;
  p.repeat_penalty = 0.0f;
  EXPECT_THROW(Sampler{p}, Error);
  p = SamplerParams{};
  p.temp = NAN;
  EXPECT_THROW(Sampler{p}, Error);
  Sampler s;
  EXPECT_THROW(s.sample(kLogits.data(), 0), Error);
}

}  // namespace
}  // namespace wick
