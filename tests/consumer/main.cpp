// A program that uses wick as a dependency (tests/consumer/run.sh builds it through
// find_package, add_subdirectory and pkg-config): a matmul and a sum on the CPU,
// checked against values worked out by hand, and a bad call caught as wick::Error.
// Exit status 0 when every value matches.
#include <cstdio>
#include <vector>

#include "wick/error.h"
#include "wick/tensor.h"

int main() {
  using wick::Shape;
  using wick::Tensor;
  const Tensor a = Tensor::from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, Shape{2, 3});
  const Tensor b = Tensor::from_vector(std::vector<float>{7, 8, 9, 10, 11, 12}, Shape{3, 2});
  int failures = 0;

  // [[1,2,3],[4,5,6]] x [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]
  const std::vector<float> want = {58, 64, 139, 154};
  const std::vector<float> got = a.matmul(b).to_vector<float>();
  if (got != want) {
    std::fprintf(stderr, "consumer: matmul gave [%g %g %g %g], want [58 64 139 154]\n",
                 got.size() > 0 ? got[0] : -1.0f, got.size() > 1 ? got[1] : -1.0f,
                 got.size() > 2 ? got[2] : -1.0f, got.size() > 3 ? got[3] : -1.0f);
    ++failures;
  }
  // 1 + 2 + ... + 6
  if (const double s = a.sum_all().item(); s != 21.0) {
    std::fprintf(stderr, "consumer: sum_all gave %g, want 21\n", s);
    ++failures;
  }
  // [2,3] x [2,3]: the inner dims differ; the error crosses the library boundary typed.
  try {
    (void)a.matmul(a);
    std::fprintf(stderr, "consumer: matmul [2,3] x [2,3] did not throw\n");
    ++failures;
  } catch (const wick::Error& e) {
    if (e.kind() != wick::ErrorKind::ShapeMismatch) {
      std::fprintf(stderr, "consumer: matmul [2,3] x [2,3] threw %s\n", e.what());
      ++failures;
    }
  }
  if (failures == 0) std::printf("consumer: wick works as a dependency\n");
  return failures == 0 ? 0 : 1;
}
