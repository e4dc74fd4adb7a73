#include <cstdio>
#include <random>
#include <vector>
#include "wick/quant.h"
#include "wick/tensor.h"
using namespace wick;
std::vector<float> normal_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed); std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> v(n); for (auto& x : v) x = d(rng); return v;
}
int main() {
  for (size_t k : {size_t(4096), size_t(14336)})
  for (GgmlType t : {GgmlType::Q4_0, GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    const size_t n = 1;
    QTensor w = QTensor::quantize(Tensor::from_vector(normal_values(n * k, 71), Shape{n, k}), t);
    Tensor x = Tensor::from_vector(normal_values(k, 72), Shape{1, k});
    for (int bf = 0; bf < 2; ++bf) {
      Tensor xs = bf ? x.to_dtype(DType::BF16).to_dtype(DType::F32) : x;
      const float want = qmatmul(xs, w).to_vector<float>()[0];
      std::vector<float> xq = QTensor::quantize(xs, GgmlType::Q8_1).dequantize(DType::F32).to_vector<float>();
      std::vector<float> wd = w.dequantize(DType::F32).to_vector<float>();
      double emu = 0; for (size_t i = 0; i < k; ++i) emu += double(wd[i]) * double(xq[i]);
      const double e = (emu - want) * (emu - want) / (double(want) * want);
      std::printf("%s k=%zu %s: cpu %.6f  q8_1-emulation %.6f  nmse %.3g\n", std::string(ggml_type_name(t)).c_str(), k, bf ? "bf16" : "f32 ", want, emu, e);
    }
  }
}
