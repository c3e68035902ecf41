// Shape, stride and index helpers shared by the CPU and CUDA lerp cores.
//
// Framework-free: shapes come in as int64 vectors, tensors are assumed
// contiguous (row-major). A problem over x, y, weight and out is described by
// a small set of collapsed dimensions; each tensor has one stride per
// dimension (0 where it is broadcast). For a gradient that must be reduced to
// an input's shape, the dimensions are split into "kept" (K: the input varies
// along them) and "reduced" (R: the input is broadcast along them).
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#define LERP_HD __host__ __device__ __forceinline__
#else
#define LERP_HD inline
#endif

namespace lerp_core {

// The type sums and the formula are computed in: float for float and the 2-byte types, double for double.
template <typename T>
struct AccOf {
  using type = float;
};
template <>
struct AccOf<double> {
  using type = double;
};

constexpr int kMaxDims = 8;
// Tensor slots in a Layout.
constexpr int kOut = 0;  // out (forward) or dout (backward)
constexpr int kX = 1;
constexpr int kY = 2;
constexpr int kW = 3;
constexpr int kNumT = 4;

using Shape = std::vector<int64_t>;

inline std::string shape_str(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

inline int64_t numel_of(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Broadcast shapes numpy-style; throws std::invalid_argument naming them.
inline Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const auto& s : shapes) nd = s.size() > nd ? s.size() : nd;
  Shape out(nd, 1);
  for (size_t i = 0; i < nd; ++i) {
    int64_t d = 1;
    for (const auto& s : shapes) {
      if (s.size() + i < nd) continue;
      int64_t v = s[s.size() - nd + i];
      if (v == 1) continue;
      if (d == 1) {
        d = v;
      } else if (d != v) {
        std::ostringstream os;
        os << "lerp: shapes";
        for (const auto& t : shapes) os << " " << shape_str(t);
        os << " are not broadcastable (dim " << i << ": " << d << " vs " << v << ")";
        throw std::invalid_argument(os.str());
      }
    }
    out[i] = d;
  }
  return out;
}

// Collapsed iteration space. Dims [0, nk) are kept dims, [nk, nk+nr) reduced
// dims, each group in row-major order of the output. With no reduction target
// everything is in R (nk == 0).
struct Layout {
  int nk = 0, nr = 0;
  int64_t size[kMaxDims];
  int64_t stride[kNumT][kMaxDims];
  int64_t M = 1;  // number of kept positions (target elements)
  int64_t L = 1;  // number of reduced positions per target element
  // Fast division by size[i] for 32-bit indices below 2^31:
  // q = (umulhi(n, magic) + n) >> shift.
  uint32_t magic[kMaxDims];
  uint32_t shift[kMaxDims];
};

// Magic numbers for dividing n < 2^31 by d (1 <= d < 2^31) with a multiply.
inline void make_divider(int64_t d, uint32_t& magic, uint32_t& shift) {
  uint32_t s = 0;
  while ((int64_t(1) << s) < d) ++s;
  shift = s;
  magic = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << s) - static_cast<uint64_t>(d))) /
                                    static_cast<uint64_t>(d) +
                                1);
}

LERP_HD uint32_t fast_div(uint32_t n, uint32_t magic, uint32_t shift) {
#if defined(__CUDA_ARCH__)
  uint32_t hi = __umulhi(n, magic);
#else
  uint32_t hi = static_cast<uint32_t>((static_cast<uint64_t>(n) * magic) >> 32);
#endif
  return (hi + n) >> shift;
}

// Contiguous strides of `s` broadcast to `out` (right aligned), 0 where s is 1.
inline Shape bcast_strides(const Shape& s, const Shape& out) {
  Shape st(out.size(), 0);
  int64_t acc = 1;
  for (int i = static_cast<int>(s.size()) - 1; i >= 0; --i) {
    int oi = static_cast<int>(out.size() - s.size()) + i;
    st[oi] = (s[i] == 1) ? 0 : acc;
    acc *= s[i];
  }
  return st;
}

// Build the layout for `out` and inputs x, y, w; `target` (kX, kY, kW, or -1)
// selects which tensor's broadcast dims are reduced. Size-1 dims are dropped;
// neighbouring dims of the same group are merged when every tensor is
// contiguous across them (or broadcast in both).
inline Layout make_layout(const Shape& out, const Shape& x, const Shape& y, const Shape& w, int target) {
  const Shape* shp[kNumT] = {&out, &x, &y, &w};
  Shape st[kNumT];
  for (int t = 0; t < kNumT; ++t) st[t] = bcast_strides(*shp[t], out);
  struct D {
    int64_t size;
    int64_t s[kNumT];
    bool kept;
  };
  std::vector<D> dims;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 1) continue;
    D d;
    d.size = out[i];
    for (int t = 0; t < kNumT; ++t) d.s[t] = st[t][i];
    d.kept = target >= 0 && d.s[target] != 0;
    dims.push_back(d);
  }
  // Stable partition: kept dims first, then reduced ones (order preserved).
  std::vector<D> ordered;
  for (const auto& d : dims)
    if (d.kept) ordered.push_back(d);
  for (const auto& d : dims)
    if (!d.kept) ordered.push_back(d);
  // Merge neighbours within a group.
  std::vector<D> merged;
  for (const auto& d : ordered) {
    if (!merged.empty()) {
      D& p = merged.back();
      bool ok = p.kept == d.kept;
      for (int t = 0; ok && t < kNumT; ++t) ok = p.s[t] == d.s[t] * d.size;
      if (ok) {
        p.size *= d.size;
        for (int t = 0; t < kNumT; ++t) p.s[t] = d.s[t];
        continue;
      }
    }
    merged.push_back(d);
  }
  if (merged.empty()) {  // a single element: one dummy dim keeps kernels simple
    D d;
    d.size = 1;
    for (int t = 0; t < kNumT; ++t) d.s[t] = 0;
    d.kept = false;
    merged.push_back(d);
  }
  if (merged.size() > static_cast<size_t>(kMaxDims)) {
    throw std::invalid_argument("lerp: too many non-mergeable broadcast dims for output shape " +
                                shape_str(out));
  }
  Layout lay;
  for (const auto& d : merged) (d.kept ? lay.nk : lay.nr) += 1;
  for (size_t i = 0; i < merged.size(); ++i) {
    lay.size[i] = merged[i].size;
    for (int t = 0; t < kNumT; ++t) lay.stride[t][i] = merged[i].s[t];
    if (merged[i].size < (int64_t(1) << 31)) {
      make_divider(merged[i].size, lay.magic[i], lay.shift[i]);
    } else {
      lay.magic[i] = lay.shift[i] = 0;
    }
    if (merged[i].kept) {
      lay.M *= merged[i].size;
    } else {
      lay.L *= merged[i].size;
    }
  }
  return lay;
}

// Largest offset tensor t reaches over the layout.
inline int64_t max_offset(const Layout& lay, int t) {
  int64_t m = 0;
  for (int i = 0; i < lay.nk + lay.nr; ++i) m += (lay.size[i] - 1) * lay.stride[t][i];
  return m;
}

// Every index and offset of the layout below 2^31 (with headroom for steps)?
inline bool small_layout(const Layout& lay) {
  const int64_t lim = (int64_t(1) << 31) - (int64_t(1) << 20);
  bool small = lay.M < lim && lay.L < lim && lay.M * lay.L < lim;
  for (int i = 0; i < lay.nk + lay.nr; ++i) small = small && lay.size[i] < (int64_t(1) << 31);
  for (int t = 0; t < kNumT; ++t) small = small && max_offset(lay, t) < (int64_t(1) << 31) - 16;
  return small;
}

// Can the training forward write diff = y - x in its one pass, so that the
// backward reads diff instead of x and y (lerp_backward_from_diff)? x and y of
// the output's shape, the weight any shape that broadcasts to it: full size
// or one element (the contig kernel), else a layout of the nd kernel (up to 4
// collapsed dims, 32-bit offsets). The element type is the binding's to check
// (4- and 8-byte types: y - x is then exact in the accumulation type).
inline bool saves_diff_layout(const Shape& xs, const Shape& ys, const Shape& ws) {
  if (xs != ys || ws.size() > xs.size()) return false;
  for (size_t i = 0; i < ws.size(); ++i) {
    const int64_t d = ws[ws.size() - 1 - i];
    if (d != 1 && d != xs[xs.size() - 1 - i]) return false;
  }
  const int64_t n = numel_of(xs), nw = numel_of(ws);
  if (n == 0 || nw == n || nw == 1) return true;
  try {
    const Layout lay = make_layout(xs, xs, xs, ws, -1);
    return lay.nk + lay.nr <= 4 && small_layout(lay);
  } catch (const std::invalid_argument&) {  // more non-mergeable dims than a layout holds
    return false;
  }
}

// The numerically stable lerp used by both frameworks: |w| < 0.5 ? x + w*d
// : y - d*(1-w), with d = y - x. Written as one multiply-add of selected
// operands (y + (w-1)*d is y - d*(1-w) exactly), so the GPU computes one
// product, not both: 6 instructions per element for a tensor weight, 3 for a
// scalar one (its selections are hoisted).
template <typename A>
LERP_HD A lerp_value(A x, A y, A w) {
  const A d = y - x;
  const bool lo = std::fabs(w) < A(0.5);
  return (lo ? x : y) + (lo ? w : w - A(1)) * d;
}

// Offsets of every tensor for position `idx` within the dims [lo, hi).
LERP_HD void decompose(const Layout& lay, int lo, int hi, int64_t idx, int64_t off[kNumT]) {
  for (int t = 0; t < kNumT; ++t) off[t] = 0;
  for (int i = hi - 1; i >= lo; --i) {
    int64_t n = lay.size[i];
    int64_t q = idx / n;
    int64_t c = idx - q * n;
    idx = q;
#pragma unroll
    for (int t = 0; t < kNumT; ++t) off[t] += c * lay.stride[t][i];
  }
}

}  // namespace lerp_core
