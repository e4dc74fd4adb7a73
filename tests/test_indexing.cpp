// index_select, gather, scatter / scatter_add (copying and in place) and index_add: hand-computed
// cases, references written here over every value dtype, ids dtype, dim and layout, Candle's sentinel
// ids, and every error path (out-of-range ids per op and ids dtype, shapes, dtypes, contiguity).
#include <gtest/gtest.h>

#include <limits>

#include "check/reduce_refs.h"
#include "reduce_test_util.h"

namespace wick {
namespace {

using testing::expect_error;
using testing::make;
using testing::round_to;

using refs::kSkipId;  // stands for the ids dtype's max value (the "skip" sentinel)
constexpr DType kIdsDTypes[] = {DType::U8, DType::U32, DType::I32, DType::I64};

// ids of dtype dt (kSkipId -> the dtype's max value). Strided: stored interleaved with out-of-range
// garbage and read back through a stride-2 view, so reading past the layout would throw.
Tensor make_ids(const std::vector<int64_t>& v, const Shape& shape, DType dt, bool strided = false) {
  return dispatch_dtype<kIndexDTypes>(dt, "test", [&]<class I>() {
    std::vector<I> raw;
    for (int64_t x : v) {
      raw.push_back(x == kSkipId ? std::numeric_limits<I>::max() : I(x));
      if (strided) raw.push_back(I(200));
    }
    if (!strided) return Tensor::from_vector(raw, shape);
    std::vector<size_t> d = shape.dims();
    d.push_back(2);
    return Tensor::from_vector(raw, Shape(d)).narrow(-1, 0, 1).squeeze(-1);
  });
}

// The reference adds: in f64, rounded to the dtype after each add (the sample sums stay in range).
std::function<double(double, double)> adder(DType dt) {
  return [dt](double a, double b) { return round_to(dt, a + b); };
}

// Random ids in [0, n) with roughly one in six replaced by the sentinel.
std::vector<int64_t> random_ids(size_t count, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int64_t> v(count);
  for (auto& x : v) x = rng() % 6 == 0 ? kSkipId : int64_t(rng() % n);
  return v;
}

// ids laid out as [a, b, c], contiguous or as a transposed view of a [a, c, b] base.
Tensor make_ids3(const std::vector<int64_t>& v, const std::vector<size_t>& dims, DType dt, bool strided) {
  if (!strided) return make_ids(v, Shape(dims), dt);
  std::vector<int64_t> base(v.size());
  std::vector<size_t> bd = {dims[0], dims[2], dims[1]};
  for (size_t p = 0; p < v.size(); ++p) {
    auto c = refs::coords(p, dims);
    base[refs::flat({c[0], c[2], c[1]}, bd)] = v[p];
  }
  return make_ids(base, Shape(bd), dt).transpose(1, 2);
}

// --- hand-computed cases -------------------------------------------------------------------------

TEST(IndexSelect, ByHand) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  Tensor ids = Tensor::from_vector<uint32_t>({2, 0, 2}, Shape{3});
  EXPECT_EQ(x.index_select(ids, 0).to_vector<float>(), (std::vector<float>{5, 6, 1, 2, 5, 6}));
  EXPECT_EQ(x.index_select(ids, 0).shape(), (Shape{3, 2}));
  Tensor cols = Tensor::from_vector<int64_t>({1, 1, 0, 1}, Shape{4});
  EXPECT_EQ(x.index_select(cols, -1).to_vector<float>(),
            (std::vector<float>{2, 2, 1, 2, 4, 4, 3, 4, 6, 6, 5, 6}));
  EXPECT_EQ(x.index_select(cols, 1).shape(), (Shape{3, 4}));
}

TEST(IndexSelect, SentinelGivesZeros) {
  Tensor x = Tensor::from_vector<int32_t>({1, 2, 3, 4}, Shape{2, 2});
  for (DType idt : kIdsDTypes) {
    SCOPED_TRACE(std::string(dtype_name(idt)));
    Tensor ids = make_ids({1, kSkipId, 0}, Shape{3}, idt);
    EXPECT_EQ(x.index_select(ids, 0).to_vector<int32_t>(), (std::vector<int32_t>{3, 4, 0, 0, 1, 2}));
  }
}

// Candle's rule, as include/wick/tensor.h states it: an id equal to its dtype's maximum
// skips even where that index exists. A u8 id of 255 into 256 rows (row r holds r + 1)
// selects nothing; the same rows by a u32 id of 255 are read and written.
TEST(Sentinel, SkipsEvenWhereTheRowExists) {
  std::vector<float> rows(256);
  for (size_t r = 0; r < 256; ++r) rows[r] = float(r + 1);
  const Tensor x = Tensor::from_vector(rows, Shape{256, 1});
  const Tensor u8 = Tensor::from_vector<uint8_t>({255, 3}, Shape{2});
  const Tensor u32 = Tensor::from_vector<uint32_t>({255, 3}, Shape{2});
  // index_select and gather: 0 for the sentinel, row 255 (256) for the u32 id.
  EXPECT_EQ(x.index_select(u8, 0).to_vector<float>(), (std::vector<float>{0, 4}));
  EXPECT_EQ(x.index_select(u32, 0).to_vector<float>(), (std::vector<float>{256, 4}));
  EXPECT_EQ(x.gather(u8.reshape(Shape{2, 1}), 0).to_vector<float>(), (std::vector<float>{0, 4}));
  EXPECT_EQ(x.gather(u32.reshape(Shape{2, 1}), 0).to_vector<float>(), (std::vector<float>{256, 4}));
  // scatter, scatter_add and index_add leave row 255 alone for the sentinel.
  const Tensor src = Tensor::from_vector<float>({-1, -2}, Shape{2, 1});
  auto row = [](const Tensor& t, size_t r) { return t.to_vector<float>()[r]; };
  for (const Tensor& out : {x.scatter(u8.reshape(Shape{2, 1}), src, 0),
                            x.scatter_add(u8.reshape(Shape{2, 1}), src, 0), x.index_add(u8, src, 0)}) {
    EXPECT_EQ(row(out, 255), 256.0f);
  }
  EXPECT_EQ(row(x.scatter(u32.reshape(Shape{2, 1}), src, 0), 255), -1.0f);
  EXPECT_EQ(row(x.scatter_add(u32.reshape(Shape{2, 1}), src, 0), 255), 255.0f);
  EXPECT_EQ(row(x.index_add(u32, src, 0), 255), 255.0f);
  EXPECT_EQ(row(x.scatter(u8.reshape(Shape{2, 1}), src, 0), 3), -2.0f);  // the other id still lands
  Tensor in_place = x.copy();
  in_place.scatter_(u8.reshape(Shape{2, 1}), src, 0);
  in_place.scatter_add_(u8.reshape(Shape{2, 1}), src, 0);
  EXPECT_EQ(row(in_place, 255), 256.0f);
  EXPECT_EQ(row(in_place, 3), -4.0f);
  // The maximum of each ids dtype skips (u32, i32 and i64 maxima cannot index a real row).
  for (DType idt : kIdsDTypes) {
    SCOPED_TRACE(std::string(dtype_name(idt)));
    EXPECT_EQ(x.index_select(make_ids({kSkipId, 0}, Shape{2}, idt), 0).to_vector<float>(),
              (std::vector<float>{0, 1}));
  }
}

TEST(Gather, ByHand) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  Tensor ids = Tensor::from_vector<int64_t>({2, 2, 0, 1, 0, 0, 1, 2}, Shape{2, 4});
  EXPECT_EQ(x.gather(ids, 1).to_vector<float>(), (std::vector<float>{3, 3, 1, 2, 4, 4, 5, 6}));
  Tensor rows = Tensor::from_vector<uint8_t>({1, 0, 1}, Shape{1, 3});
  EXPECT_EQ(x.gather(rows, 0).to_vector<float>(), (std::vector<float>{4, 2, 6}));
  Tensor skip = make_ids({kSkipId, 1, 0}, Shape{1, 3}, DType::U8);
  EXPECT_EQ(x.gather(skip, 0).to_vector<float>(), (std::vector<float>{0, 5, 3}));
}

TEST(Scatter, ByHandSetAndAdd) {
  Tensor dst = Tensor::zeros(Shape{2, 4});
  Tensor ids = Tensor::from_vector<uint32_t>({3, 0, 3, 1, 1, 1}, Shape{2, 3});
  Tensor src = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  // Set: duplicates resolve to the last source element in row-major order.
  EXPECT_EQ(dst.scatter(ids, src, 1).to_vector<float>(), (std::vector<float>{2, 0, 0, 3, 0, 6, 0, 0}));
  EXPECT_EQ(dst.scatter_add(ids, src, 1).to_vector<float>(), (std::vector<float>{2, 0, 0, 4, 0, 15, 0, 0}));
  // The copying forms leave dst alone; the in-place forms write it.
  EXPECT_EQ(dst.to_vector<float>(), std::vector<float>(8, 0.0f));
  dst.scatter_add_(ids, src, 1);
  dst.scatter_add_(ids, src, 1);
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{4, 0, 0, 8, 0, 30, 0, 0}));
  dst.scatter_(ids, src, 1);
  EXPECT_EQ(dst.to_vector<float>(), (std::vector<float>{2, 0, 0, 3, 0, 6, 0, 0}));
  // Along dim 0, with the sentinel skipping an element.
  Tensor d0 = Tensor::full(Scalar(9.0), Shape{3, 2});
  Tensor ids0 = make_ids({2, kSkipId}, Shape{1, 2}, DType::I32);
  EXPECT_EQ(d0.scatter(ids0, Tensor::from_vector<float>({7, 8}, Shape{1, 2}), 0).to_vector<float>(),
            (std::vector<float>{9, 9, 9, 9, 7, 9}));
}

TEST(Scatter, InPlaceWritesThroughSharedStorage) {
  Tensor base = Tensor::zeros(Shape{2, 3}, DType::I64);
  Tensor alias = base.reshape(Shape{6});  // a view of the same storage
  base.scatter_(Tensor::from_vector<int64_t>({2, 0}, Shape{2, 1}),
                Tensor::from_vector<int64_t>({5, 0}, Shape{2, 1}), 1);
  EXPECT_EQ(alias.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 5, 0, 0, 0}));
  // An offset (narrowed along dim 0, still contiguous) destination writes at its offset.
  Tensor row1 = base.narrow(0, 1, 1);
  row1.scatter_add_(Tensor::from_vector<int64_t>({0, 0}, Shape{1, 2}),
                    Tensor::from_vector<int64_t>({3, 4}, Shape{1, 2}), 1);
  EXPECT_EQ(alias.to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 5, 7, 0, 0}));
}

TEST(IndexAdd, ByHand) {
  Tensor x = Tensor::ones(Shape{3, 2}, DType::I32);
  Tensor ids = Tensor::from_vector<int64_t>({2, 0, 2}, Shape{3});
  Tensor src = Tensor::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  EXPECT_EQ(x.index_add(ids, src, 0).to_vector<int32_t>(), (std::vector<int32_t>{4, 5, 1, 1, 7, 9}));
  EXPECT_EQ(x.to_vector<int32_t>(), std::vector<int32_t>(6, 1));  // a copy, x unchanged
  Tensor cols = make_ids({kSkipId, 0}, Shape{2}, DType::U32);
  Tensor src2 = Tensor::from_vector<int32_t>({10, 20, 30, 40, 50, 60}, Shape{3, 2});
  EXPECT_EQ(x.index_add(cols, src2, 1).to_vector<int32_t>(), (std::vector<int32_t>{21, 1, 41, 1, 61, 1}));
}

TEST(IndexAdd, IntegersWrapAndHalvesRoundPerAdd) {
  Tensor x = Tensor::from_vector<uint8_t>({250}, Shape{1});
  Tensor ids = Tensor::from_vector<uint32_t>({0, 0}, Shape{2});
  EXPECT_EQ(x.index_add(ids, Tensor::from_vector<uint8_t>({3, 4}, Shape{2}), 0).to_vector<uint8_t>()[0], 1);
  // f16: 2048 + 1 -> 2048 (ties to even), + 1 -> 2048 again: each add rounds to the stored dtype.
  Tensor h = make({2048}, Shape{1}, DType::F16);
  EXPECT_EQ(h.index_add(ids, make({1, 1}, Shape{2}, DType::F16), 0).item(), 2048.0);
  EXPECT_EQ(
      h.scatter_add(Tensor::from_vector<uint32_t>({0, 0}, Shape{2}), make({1, 1}, Shape{2}, DType::F16), 0)
          .item(),
      2048.0);
}

// --- every value dtype x ids dtype x dim x layout against the references ---------------------------

TEST(Indexing, EveryDTypeIdsDTypeDimAndLayoutMatchReference) {
  const std::vector<size_t> dims = {3, 4, 5};
  uint32_t seed = 1;
  for (DType dt : kAllDTypes) {
    for (const auto& kind : testing::view_kinds()) {
      auto in = kind.build(dt, 3, 4, 5, seed++);
      for (DType idt : kIdsDTypes) {
        for (size_t d = 0; d < 3; ++d) {
          for (bool strided_ids : {false, true}) {
            std::string what = std::string(dtype_name(dt)) + " " + kind.name + " ids " +
                               std::string(dtype_name(idt)) + " dim " + std::to_string(d) +
                               (strided_ids ? " strided ids" : "");
            SCOPED_TRACE(what);
            // index_select: 7 ids (repeats and sentinels).
            auto sel = random_ids(7, dims[d], seed++);
            Tensor s = in.t.index_select(make_ids(sel, Shape{7}, idt, strided_ids), int64_t(d));
            std::vector<size_t> sd = dims;
            sd[d] = 7;
            EXPECT_EQ(s.shape(), Shape(sd));
            EXPECT_EQ(s.to_f64_vector(), refs::index_select(in.v, dims, d, sel));

            // gather: ids of the source dims except 6 along d.
            std::vector<size_t> gd = dims;
            gd[d] = 6;
            auto gi = random_ids(Shape(gd).elem_count(), dims[d], seed++);
            Tensor g = in.t.gather(make_ids3(gi, gd, idt, strided_ids), int64_t(d));
            EXPECT_EQ(g.shape(), Shape(gd));
            EXPECT_EQ(g.to_f64_vector(), refs::gather(in.v, dims, d, gi, gd));

            // scatter / scatter_add: src (strided when the ids are) of dims except 2 along d.
            std::vector<size_t> cd = dims;
            cd[d] = 2;
            auto ci = random_ids(Shape(cd).elem_count(), dims[d], seed++);
            auto src = testing::sample_values(Shape(cd).elem_count(), dt, seed++);
            Tensor src_t = make(src, Shape(cd), dt);
            if (strided_ids) src_t = src_t.t().contiguous().t();
            Tensor ids_t = make_ids3(ci, cd, idt, strided_ids);
            EXPECT_EQ(in.t.scatter(ids_t, src_t, int64_t(d)).to_f64_vector(),
                      refs::scatter(in.v, dims, d, ci, src, cd));
            EXPECT_EQ(in.t.scatter_add(ids_t, src_t, int64_t(d)).to_f64_vector(),
                      refs::scatter(in.v, dims, d, ci, src, cd, adder(dt)));
            Tensor own = in.t.copy();
            own.scatter_add_(ids_t, src_t, int64_t(d));
            EXPECT_EQ(own.to_f64_vector(), refs::scatter(in.v, dims, d, ci, src, cd, adder(dt)));

            // index_add: 3 ids along d, src of dims except 3 along d.
            std::vector<size_t> ad = dims;
            ad[d] = 3;
            auto ai = random_ids(3, dims[d], seed++);
            auto asrc = testing::sample_values(Shape(ad).elem_count(), dt, seed++);
            Tensor ia = in.t.index_add(make_ids(ai, Shape{3}, idt, strided_ids), make(asrc, Shape(ad), dt),
                                       int64_t(d));
            EXPECT_EQ(ia.shape(), Shape(dims));
            EXPECT_EQ(ia.to_f64_vector(), refs::index_add(in.v, dims, d, ai, asrc, ad, adder(dt)));
          }
        }
      }
    }
  }
}

TEST(Indexing, LargeShapesAcrossThreads) {
  // Enough work to split across threads on every op; dim 0 (left = 1) and dim 1 (left > 1).
  std::vector<size_t> dims = {300, 700};
  auto v = testing::sample_values(300 * 700, DType::F32, 77);
  Tensor x = make(v, Shape(dims), DType::F32);
  for (size_t d = 0; d < 2; ++d) {
    SCOPED_TRACE(d);
    auto sel = random_ids(500, dims[d], 5);
    EXPECT_EQ(x.index_select(make_ids(sel, Shape{500}, DType::I64), int64_t(d)).to_f64_vector(),
              refs::index_select(v, dims, d, sel));
    auto gi = random_ids(300 * 700, dims[d], 6);
    EXPECT_EQ(x.gather(make_ids(gi, Shape(dims), DType::U32), int64_t(d)).to_f64_vector(),
              refs::gather(v, dims, d, gi, dims));
    EXPECT_EQ(x.scatter_add(make_ids(gi, Shape(dims), DType::U32), x, int64_t(d)).to_f64_vector(),
              refs::scatter(v, dims, d, gi, v, dims, adder(DType::F32)));
    std::vector<size_t> ad = dims;
    ad[d] = 400;
    auto ai = random_ids(400, dims[d], 8);
    auto asrc = testing::sample_values(Shape(ad).elem_count(), DType::F32, 9);
    EXPECT_EQ(x.index_add(make_ids(ai, Shape{400}, DType::I32), make(asrc, Shape(ad), DType::F32), int64_t(d))
                  .to_f64_vector(),
              refs::index_add(v, dims, d, ai, asrc, ad, adder(DType::F32)));
  }
}

TEST(IndexSelect, RowsInPiecesRepeatedOutOfOrderAndSkipped) {
  // Whole rows copied in pieces that the threads take in turn, each row's source
  // prefetched ahead: rows of 3 elements (many rows ahead, the last pieces short),
  // 1000 f16 (2000 bytes) and 3000 f32 (12000 bytes, more than the prefetched part);
  // ids descending with repeats and sentinels, and a leading dim (left > 1: pieces that
  // start inside a left index's rows, rows of 2 elements prefetched across left indices).
  struct Case {
    std::vector<size_t> dims;
    size_t dim;
    DType dt;
  };
  for (const Case& c :
       {Case{{64, 3}, 0, DType::F32}, Case{{40, 1000}, 0, DType::F16}, Case{{17, 3000}, 0, DType::F32},
        Case{{3, 50, 700}, 1, DType::F16}, Case{{4, 30, 2}, 1, DType::F32}}) {
    SCOPED_TRACE(std::string(dtype_name(c.dt)) + " dim " + std::to_string(c.dim));
    const size_t n = c.dims[c.dim], count = 2000;
    std::vector<int64_t> sel(count);
    for (size_t i = 0; i < count; ++i)  // descending runs, each id several times
      sel[i] = i % 97 == 5 ? kSkipId : int64_t(n - 1 - (i / 3) % n);
    auto v = testing::sample_values(Shape(c.dims).elem_count(), c.dt, 11);
    Tensor x = make(v, Shape(c.dims), c.dt);
    Tensor got = x.index_select(make_ids(sel, Shape{count}, DType::U32), int64_t(c.dim));
    std::vector<size_t> od = c.dims;
    od[c.dim] = count;
    EXPECT_EQ(got.shape(), Shape(od));
    EXPECT_EQ(got.to_f64_vector(), refs::index_select(v, c.dims, c.dim, sel));
  }
}

TEST(Indexing, ZeroSize) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2});
  Tensor none = Tensor::zeros(Shape{0}, DType::U32);
  EXPECT_EQ(x.index_select(none, 0).shape(), (Shape{0, 2}));
  EXPECT_EQ(x.index_add(none, Tensor::zeros(Shape{2, 0}), 1).to_vector<float>(),
            (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(x.gather(Tensor::zeros(Shape{2, 0}, DType::I64), 1).shape(), (Shape{2, 0}));
  EXPECT_EQ(
      x.scatter(Tensor::zeros(Shape{0, 2}, DType::I64), Tensor::zeros(Shape{0, 2}), 0).to_vector<float>(),
      (std::vector<float>{1, 2, 3, 4}));
  Tensor e = Tensor::zeros(Shape{0, 3});
  EXPECT_EQ(e.index_select(Tensor::from_vector<uint32_t>({2, 0}, Shape{2}), 1).shape(), (Shape{0, 2}));
}

// --- errors ---------------------------------------------------------------------------------------

// The largest id each ids dtype holds that is not the sentinel, and a negative id for signed ones.
TEST(IndexingErrors, OutOfRangeIdsForEveryOpAndIdsDType) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  for (DType idt : kIdsDTypes) {
    SCOPED_TRACE(std::string(dtype_name(idt)));
    std::string dt(dtype_name(idt));
    std::vector<int64_t> bad_values = {3, 254};
    if (idt == DType::I32 || idt == DType::I64) bad_values.push_back(-2);
    for (int64_t bad : bad_values) {
      std::string b = "index " + std::to_string(bad);
      expect_error(
          [&] {
            x.index_select(make_ids({0, bad}, Shape{2}, idt), 1);
          },
          ErrorKind::IndexOutOfRange, {"[index_select]", b, "dim 1", "size 3", dt});
      expect_error(
          [&] {
            x.gather(make_ids({0, 1, bad, 0, 0, 0}, Shape{2, 3}, idt), 1);
          },
          ErrorKind::IndexOutOfRange, {"[gather]", b, "size 3", dt});
      Tensor src = Tensor::ones(Shape{2, 2});
      expect_error(
          [&] {
            x.scatter(make_ids({0, 0, 0, bad}, Shape{2, 2}, idt), src, 1);
          },
          ErrorKind::IndexOutOfRange, {"[scatter]", b, "size 3"});
      expect_error(
          [&] {
            x.scatter_add(make_ids({bad, 0, 0, 0}, Shape{2, 2}, idt), src, 1);
          },
          ErrorKind::IndexOutOfRange, {"[scatter_add]", b, "size 3"});
      expect_error(
          [&] {
            x.index_add(make_ids({0, bad}, Shape{2}, idt), src, 1);
          },
          ErrorKind::IndexOutOfRange, {"[index_add]", b, "dim 1", "size 3", dt});
      expect_error([&] { x.index_select(make_ids({bad}, Shape{1}, idt), 0); }, ErrorKind::IndexOutOfRange,
                   {"[index_select]", b, "dim 0", "size 2"});
    }
  }
}

// Of several bad ids, the first in row-major order is reported (negative or too large).
TEST(IndexingErrors, FirstBadIdIsReported) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{3, 2});
  expect_error(
      [&] {
        x.index_select(Tensor::from_vector<int64_t>({0, 7, 1, -2, 9}, Shape{5}), 0);
      },
      ErrorKind::IndexOutOfRange, {"[index_select]", "index 7 out of range", "size 3"});
  expect_error(
      [&] {
        x.index_select(Tensor::from_vector<int64_t>({2, -2, 7}, Shape{3}), 0);
      },
      ErrorKind::IndexOutOfRange, {"[index_select]", "index -2 out of range", "size 3"});
  // The sentinel (the ids dtype's max) is a skip, not a bad id.
  expect_error(
      [&] {
        x.index_select(Tensor::from_vector<uint32_t>({0xffffffffu, 1, 3}, Shape{3}), 0);
      },
      ErrorKind::IndexOutOfRange, {"[index_select]", "index 3 out of range", "size 3"});
}

TEST(IndexingErrors, InPlaceScatterWritesNothingBeforeThrowing) {
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, Shape{2, 3});
  // The bad id comes last in row-major order, after good ones that would otherwise be written.
  Tensor ids = Tensor::from_vector<int64_t>({0, 1, 2, 0, 1, 3}, Shape{2, 3});
  Tensor src = Tensor::full(Scalar(-7.0), Shape{2, 3});
  expect_error([&] { x.scatter_(ids, src, 1); }, ErrorKind::IndexOutOfRange, {"[scatter]", "index 3"});
  expect_error([&] { x.scatter_add_(ids, src, 1); }, ErrorKind::IndexOutOfRange,
               {"[scatter_add]", "index 3"});
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

TEST(IndexingErrors, Shapes) {
  Tensor x = Tensor::zeros(Shape{2, 3});
  Tensor ids2d = Tensor::zeros(Shape{2, 2}, DType::U32);
  expect_error([&] { x.index_select(ids2d, 0); }, ErrorKind::ShapeMismatch,
               {"[index_select]", "[2,2] u32", "1-D"});
  expect_error([&] { x.gather(Tensor::zeros(Shape{2}, DType::U32), 1); }, ErrorKind::ShapeMismatch,
               {"[gather]", "[2] u32", "[2,3] f32"});
  expect_error(
      [&] {
        x.gather(Tensor::zeros(Shape{3, 3}, DType::U32), 1);
      },
      ErrorKind::ShapeMismatch, {"[gather]", "but dim 1"});
  expect_error(
      [&] {
        x.scatter(Tensor::zeros(Shape{2, 2}, DType::U32), Tensor::zeros(Shape{2, 3}), 1);
      },
      ErrorKind::ShapeMismatch, {"[scatter]", "same shape"});
  expect_error(
      [&] {
        x.scatter_add(Tensor::zeros(Shape{3, 2}, DType::U32), Tensor::zeros(Shape{3, 2}), 1);
      },
      ErrorKind::ShapeMismatch, {"[scatter_add]", "[3,2] f32", "but dim 1"});
  expect_error(
      [&] {
        x.index_add(ids2d, Tensor::zeros(Shape{2, 2}), 1);
      },
      ErrorKind::ShapeMismatch, {"[index_add]", "1-D"});
  expect_error(
      [&] {
        x.index_add(Tensor::zeros(Shape{3}, DType::U32), Tensor::zeros(Shape{2, 2}), 1);
      },
      ErrorKind::ShapeMismatch, {"[index_add]", "3 entries", "2 along dim 1"});
  expect_error(
      [&] {
        x.index_add(Tensor::zeros(Shape{2}, DType::U32), Tensor::zeros(Shape{3, 2}), 1);
      },
      ErrorKind::ShapeMismatch, {"[index_add]", "[3,2] f32", "but dim 1"});
}

TEST(IndexingErrors, DTypesDimsAndContiguity) {
  Tensor x = Tensor::zeros(Shape{2, 3});
  Tensor fids = Tensor::zeros(Shape{2});
  expect_error([&] { x.index_select(fids, 0); }, ErrorKind::UnsupportedDType,
               {"[index_select]", "ids", "f32"});
  expect_error(
      [&] {
        x.gather(Tensor::zeros(Shape{2, 3}, DType::F16), 0);
      },
      ErrorKind::UnsupportedDType, {"[gather]", "f16"});
  expect_error(
      [&] {
        x.index_add(fids, Tensor::zeros(Shape{2, 3}), 0);
      },
      ErrorKind::UnsupportedDType, {"[index_add]", "ids"});
  Tensor u32ids = Tensor::zeros(Shape{2, 3}, DType::U32);
  expect_error(
      [&] {
        x.scatter(Tensor::zeros(Shape{2, 3}, DType::BF16), x, 0);
      },
      ErrorKind::UnsupportedDType, {"[scatter]", "bf16"});
  expect_error(
      [&] {
        x.scatter(u32ids, Tensor::zeros(Shape{2, 3}, DType::F64), 0);
      },
      ErrorKind::DTypeMismatch, {"[scatter]", "f64"});
  expect_error(
      [&] {
        x.index_add(Tensor::zeros(Shape{2}, DType::U8), Tensor::zeros(Shape{2, 3}, DType::I32), 0);
      },
      ErrorKind::DTypeMismatch, {"[index_add]", "i32"});
  expect_error([&] { x.index_select(Tensor::zeros(Shape{2}, DType::U8), 2); }, ErrorKind::DimOutOfRange,
               {"[index_select]", "dim 2"});
  expect_error([&] { x.gather(u32ids, -3); }, ErrorKind::DimOutOfRange, {"[gather]", "dim -3"});
  expect_error([&] { x.scatter_add(u32ids, x, 2); }, ErrorKind::DimOutOfRange, {"[scatter_add]"});
  expect_error([&] { x.index_add(Tensor::zeros(Shape{2}, DType::U8), x, 5); }, ErrorKind::DimOutOfRange,
               {"[index_add]"});
  Tensor xt = Tensor::zeros(Shape{3, 2}).t();
  expect_error([&] { xt.scatter_(u32ids, x, 0); }, ErrorKind::InvalidArgument,
               {"[scatter_]", "not contiguous", "[2,3] f32"});
  expect_error([&] { xt.scatter_add_(u32ids, x, 0); }, ErrorKind::InvalidArgument,
               {"[scatter_add_]", "not contiguous"});
  Tensor u;
  expect_error([&] { x.index_select(u, 0); }, ErrorKind::InvalidArgument,
               {"[index_select]", "ids", "undefined"});
  expect_error([&] { u.gather(u32ids, 0); }, ErrorKind::InvalidArgument, {"[gather]", "undefined"});
  expect_error([&] { x.scatter(u32ids, u, 0); }, ErrorKind::InvalidArgument,
               {"[scatter]", "src", "undefined"});
}

}  // namespace
}  // namespace wick
