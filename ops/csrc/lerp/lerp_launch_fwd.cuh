// lerp CUDA core, part: host: device queries, launch helpers, contig launches and the broadcast forward launch.
// Included in order by lerp.cuh; see its header for the paths and when each is chosen.
#pragma once

#include "common/env_knob.h"
#include "lerp_gpu.h"
#include "lerp_rows_cols.cuh"

namespace lerp_core {
namespace gpu {

// ------------------------------------------------------------------ host --
inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("lerp CUDA error in ") + what + ": " + cudaGetErrorString(e));
}

inline int sm_count() {
  static int cache[64] = {0};  // per device; racing writers store the same value
  int dev = 0, n = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  if (dev >= 0 && dev < 64 && cache[dev] > 0) return cache[dev];
  check_cuda(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  n = n > 0 ? n : 1;
  if (dev >= 0 && dev < 64) cache[dev] = n;
  return n;
}

// Resident blocks of `threads` threads per SM for a kernel (cached per kernel and block size).
inline int blocks_per_sm(const void* kernel, int threads = kThreads) {
  static std::mutex mu;
  static std::map<std::pair<const void*, int>, int> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find({kernel, threads});
  if (it != cache.end()) return it->second;
  int nb = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&nb, kernel, threads, 0), "cudaOccupancy");
  nb = nb > 0 ? nb : 1;
  cache[{kernel, threads}] = nb;
  return nb;
}

// Blocks in one wave of a kernel.
inline int64_t wave_of(const void* kernel) { return int64_t(sm_count()) * blocks_per_sm(kernel); }

using opcore::env_int;

// Block cap for the grid-stride flat kernels: SMs x LERP_BLOCKS_PER_SM
// (default 0 = no cap). Read once.
inline int64_t grid_cap() {
  static const int per_sm = env_int("LERP_BLOCKS_PER_SM", 0);
  return per_sm > 0 ? int64_t(sm_count()) * per_sm : (int64_t(1) << 30);
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Contig tensors below this many elements index in 32 bits (every index,
// plus one grid stride, stays below 2^31).
constexpr int64_t kContig32 = int64_t(1) << 29;

// Packs per thread U of the flat kernels (contig, nd): 1 while one pack
// per thread fits in one wave (wave[0] blocks); `large` for tensors of more
// than 4 such waves (contig: 1, measured best there; nd: 2, which halves its
// per-thread set-up: 38.4 vs 43.1 us for the f16 middle-dims forward on an
// H200); otherwise the smallest U in {2, 4} whose grid fits in one wave of
// that kernel (wave[1], wave[2]), so that all of a thread's loads are in
// flight at once and no block waits for a second wave; `none` (1 or 2) if
// none fits. LERP_PACKS=1, 2 or 4 forces U (read once).
inline int packs_per_thread(int64_t packs, const int64_t (&wave)[3], int large, int none = 1) {
  static const int forced = env_int("LERP_PACKS", 0);
  if (forced == 1 || forced == 2 || forced == 4) return forced;
  const int64_t b1 = ceil_div(packs, kThreads);
  if (b1 <= wave[0]) return 1;
  if (b1 > 4 * wave[0]) return large;
  if (ceil_div(packs, int64_t(kThreads) * 2) <= wave[1]) return 2;
  if (ceil_div(packs, int64_t(kThreads) * 4) <= wave[2]) return 4;
  return none;
}

inline bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }
// Whether every pointer (null ones too) starts on a multiple of `bytes`.
inline bool all_aligned(std::initializer_list<const void*> ptrs, uintptr_t bytes) {
  for (const void* p : ptrs)
    if (reinterpret_cast<uintptr_t>(p) % bytes != 0) return false;
  return true;
}

// Can dims be read VEC-wide along `inner`? Needs every used tensor's stride
// there in {0, 1}, every other stride a multiple of VEC, size % VEC == 0.
inline bool vec_ok(const Layout& lay, int inner, int vec, const bool (&used)[kNumT]) {
  if (vec <= 1) return true;
  if (inner < 0 || lay.size[inner] % vec != 0) return false;
  for (int t = 0; t < kNumT; ++t) {
    if (!used[t]) continue;
    if (lay.stride[t][inner] == 0) continue;  // read as one broadcast scalar per pack
    for (int i = 0; i < lay.nk + lay.nr; ++i) {
      int64_t s = lay.stride[t][i];
      if (i == inner) {
        if (s != 0 && s != 1) return false;
      } else if (s % vec != 0) {
        return false;
      }
    }
  }
  return true;
}

// A backward pass's XY mode (kNoXY, kXYRead, kXYDiff): whether it sums the weight's gradient (dw), and
// then whether it reads x or, x being null, y alone as y - x (4- and 8-byte types).
template <typename T>
int xy_mode(bool dw, const T* x) {
  return !dw ? kNoXY : (x != nullptr || sizeof(T) < 4) ? kXYRead : kXYDiff;
}

// f(std::integral_constant<int, XY>) for a pass's XY mode; kXYDiff is instantiated for 4- and 8-byte
// types only.
template <typename T, typename F>
void with_xy(int mode, F&& f) {
  if constexpr (sizeof(T) >= 4) {
    if (mode == kXYDiff) return f(std::integral_constant<int, kXYDiff>{});
  }
  if (mode == kXYRead) return f(std::integral_constant<int, kXYRead>{});
  f(std::integral_constant<int, kNoXY>{});
}

template <typename T>
__host__ __device__ constexpr int vec_of() {
  return static_cast<int>(16 / sizeof(T));
}

template <typename T, bool FWD, int VEC, int U, typename I>
void contig_launch(int64_t blocks, const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc,
                   T* o0, T* o1, T* o2, int64_t n64, cudaStream_t stream) {
  using A = typename AccOf<T>::type;
  const A ws = static_cast<A>(wsc);
  const I n = static_cast<I>(n64);
  const unsigned g = static_cast<unsigned>(blocks);
  if (FWD && o1 && wmode == 2) {  // training forward, weight needing a gradient: full weight
    fwd_contig_kernel<T, VEC, 1, true, true, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, o1, n);
  } else if (FWD && o1) {  // the same, one-element weight
    fwd_contig_kernel<T, VEC, 1, false, true, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, o1, n);
  } else if (FWD && wmode == 2) {
    fwd_contig_kernel<T, VEC, U, true, false, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, nullptr, n);
  } else if (FWD) {
    fwd_contig_kernel<T, VEC, U, false, false, I><<<g, kThreads, 0, stream>>>(x, y, w, wmode, ws, o0, nullptr, n);
  } else if (o2 && x) {  // weight gradient: full weight
    bwd_contig_kernel<T, VEC, 1, true, kDwXY, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  } else if (o2) {
    bwd_contig_kernel<T, VEC, 1, true, kDwDiff, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  } else if (wmode == 2) {
    bwd_contig_kernel<T, VEC, U, true, kDwNone, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  } else {
    bwd_contig_kernel<T, VEC, U, false, kDwNone, I><<<g, kThreads, 0, stream>>>(a0, x, y, w, wmode, ws, o0, o1, o2, n);
  }
}

// The int32_t contig kernel for U packs per thread, as a pointer (for occupancy).
template <typename T, bool FWD, int V, int U>
const void* contig_kernel_ptr(bool wfull) {
  if (FWD) {
    return wfull ? reinterpret_cast<const void*>(&fwd_contig_kernel<T, V, U, true, false, int32_t>)
                 : reinterpret_cast<const void*>(&fwd_contig_kernel<T, V, U, false, false, int32_t>);
  }
  return wfull ? reinterpret_cast<const void*>(&bwd_contig_kernel<T, V, U, true, kDwNone, int32_t>)
               : reinterpret_cast<const void*>(&bwd_contig_kernel<T, V, U, false, kDwNone, int32_t>);
}

// Aligned contig launch with V-element packs; I = int32_t for tensors of
// fewer than kContig32 elements (fewer registers: U > 1 fits in one wave
// more often), int64_t (one pack per thread) beyond.
template <typename T, bool FWD, int V, typename I>
void launch_contig_packs(const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc, T* o0, T* o1,
                         T* o2, int64_t n, cudaStream_t stream) {
  const int64_t packs = std::max<int64_t>(1, n / V);
  int u = 1;
  if constexpr (std::is_same_v<I, int32_t>) {
    const bool wf = wmode == 2;
    const int64_t wave[3] = {wave_of(contig_kernel_ptr<T, FWD, V, 1>(wf)),
                             wave_of(contig_kernel_ptr<T, FWD, V, 2>(wf)),
                             wave_of(contig_kernel_ptr<T, FWD, V, 4>(wf))};
    // The dw and diff variants (tensor weight needing a gradient) run one pack per thread.
    u = (FWD ? o1 != nullptr : o2 != nullptr) ? 1 : packs_per_thread(packs, wave, 1);
  }
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(packs, int64_t(kThreads) * u), grid_cap()));
  if constexpr (std::is_same_v<I, int32_t>) {
    if (u == 4) return contig_launch<T, FWD, V, 4, I>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
    if (u == 2) return contig_launch<T, FWD, V, 2, I>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  }
  contig_launch<T, FWD, V, 1, I>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
}

// Contig pass: forward reads x, y (w), writes o0 = out and, when o1 is not
// null, o1 = y - x; backward reads a0 = dout (w; x, y for dw) and writes
// o0 = dx, o1 = dy, o2 = dw (each may be null).
template <typename T, bool FWD>
void launch_contig(const T* a0, const T* x, const T* y, const T* w, int wmode, double wsc, T* o0, T* o1, T* o2,
                   int64_t n, cudaStream_t stream) {
  constexpr int V = vec_of<T>();
  bool al = aligned16(a0) && aligned16(o0) && aligned16(o1) && aligned16(o2) && (wmode != 2 || aligned16(w));
  if (FWD) al = al && aligned16(x) && aligned16(y);
  if (!FWD && o2) al = al && aligned16(x) && aligned16(y);
  const bool small = n < kContig32;
  if (!al) {  // rare: scalar loads, one element per thread
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(n, kThreads), grid_cap()));
    contig_launch<T, FWD, 1, 1, int64_t>(blocks, a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  } else if (!small) {
    launch_contig_packs<T, FWD, V, int64_t>(a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  } else {
    launch_contig_packs<T, FWD, V, int32_t>(a0, x, y, w, wmode, wsc, o0, o1, o2, n, stream);
  }
  check_cuda(cudaGetLastError(), "contig kernel launch");
}

// The nd kernels, as pointers (for occupancy) and launches: fwd_nd_kernel,
// or with G fwd_nd_gather_kernel (one, two or four packs per thread).
template <typename T, int VEC, int ND, bool G>
struct NdKernels {
  template <int U>
  static const void* ptr() {
    if constexpr (G) return reinterpret_cast<const void*>(&fwd_nd_gather_kernel<T, VEC, ND, U>);
    return reinterpret_cast<const void*>(&fwd_nd_kernel<T, VEC, ND, U>);
  }
  template <int U>
  static void launch(unsigned blocks, const NdLayout<ND>& L, const GenArgs<T>& a, typename AccOf<T>::type wsc,
                     int32_t count, cudaStream_t stream) {
    if constexpr (G) {
      fwd_nd_gather_kernel<T, VEC, ND, U><<<blocks, kThreads, 0, stream>>>(L, a.x, a.y, a.w, wsc, a.out, count);
    } else {
      fwd_nd_kernel<T, VEC, ND, U><<<blocks, kThreads, 0, stream>>>(L, a.x, a.y, a.w, wsc, a.out, nullptr, count);
    }
  }
};

// An nd kernel's launch for a layout of ND dims with 32-bit offsets; U packs
// per thread from packs_per_thread (2 for large tensors; for small ones more
// than one where that makes the grid a single wave, and 2 with a tensor
// weight; one-element packs and the gather kernel alike, where one element
// a thread took 1.5-2 waves: the sweep's small forwards of one-element packs
// ran 3-5% faster so on an H200, A/B in 4248c85's message). fwd_nd_kernel reads an operand VEC-wide
// unless it is broadcast along the innermost dim; the gather kernel (G) reads
// operands laid out like out VEC-wide, one broadcast along the innermost dim
// one element a pack and the others element by element (NdRead). diff (not
// null; fwd_nd_kernel of 4- and 8-byte types): also diff = y - x, one pack per
// thread, as the contig kernel's diff variant.
template <typename T, int VEC, int ND, bool G>
void nd_launch(const Layout& lay, const GenArgs<T>& a, int64_t n, cudaStream_t stream, T* diff = nullptr) {
  using A = typename AccOf<T>::type;
  using K = NdKernels<T, VEC, ND, G>;
  NdLayout<ND> L;
  const T* ptr[3] = {a.x, a.y, a.w};
  for (int i = 0; i < ND; ++i) {
    L.size[i] = static_cast<int32_t>(lay.size[i]);
    L.magic[i] = lay.magic[i];
    L.shift[i] = lay.shift[i];
    for (int t = 0; t < 3; ++t) L.stride[t][i] = ptr[t] ? static_cast<int32_t>(lay.stride[kX + t][i]) : 0;
  }
  for (int t = 0; t < 3; ++t) {
    bool like_out = true;
    for (int i = 0; i < ND; ++i) like_out = like_out && lay.stride[kX + t][i] == lay.stride[kOut][i];
    const bool inner_bcast = L.stride[t][ND - 1] == 0;
    if (G) {
      L.read[t] = like_out ? kNdWide : (inner_bcast ? kNdOne : kNdEach);
    } else {
      L.read[t] = VEC > 1 && !inner_bcast ? kNdWide : kNdOne;
    }
  }
  const int64_t nv = G ? ceil_div(n, VEC) : n / VEC;
  const int32_t count = static_cast<int32_t>(G ? n : nv);  // the gather kernel takes elements, the other packs
  const A wsc = static_cast<A>(a.wsc);
  if constexpr (!G && sizeof(T) >= 4) {
    if (diff) {
      const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, ceil_div(nv, int64_t(kThreads))));
      fwd_nd_kernel<T, VEC, ND, 1, true><<<blocks, kThreads, 0, stream>>>(L, a.x, a.y, a.w, wsc, a.out, diff, count);
      return;
    }
  }
  // A gathered tensor weight (a third load per pack) runs 2 packs per
  // thread when no U fits in one wave: x [16,1,1,1], y [16,3,224,224],
  // w [3,1,224] 6.2-6.4 vs 6.6-6.8 us kernel time with 1 on an H200
  // (a scalar weight's x [16,1,1,1] case is 0.3 us slower with 2).
  const int64_t wave[3] = {wave_of(K::template ptr<1>()), wave_of(K::template ptr<2>()),
                           wave_of(K::template ptr<4>())};
  const int u = packs_per_thread(nv, wave, 2, a.w ? 2 : 1);
  const unsigned blocks = static_cast<unsigned>(std::max<int64_t>(1, ceil_div(nv, int64_t(kThreads) * u)));
  if (u == 4) return K::template launch<4>(blocks, L, a, wsc, count, stream);
  if (u == 2) return K::template launch<2>(blocks, L, a, wsc, count, stream);
  K::template launch<1>(blocks, L, a, wsc, count, stream);
}

template <typename T, int VEC, bool G>
void nd_pick(const Layout& lay, const GenArgs<T>& a, int64_t n, cudaStream_t stream, T* diff = nullptr) {
  switch (lay.nk + lay.nr) {
    case 1:
      return nd_launch<T, VEC, 1, G>(lay, a, n, stream, diff);
    case 2:
      return nd_launch<T, VEC, 2, G>(lay, a, n, stream, diff);
    case 3:
      return nd_launch<T, VEC, 3, G>(lay, a, n, stream, diff);
    default:
      return nd_launch<T, VEC, 4, G>(lay, a, n, stream, diff);
  }
}

// Fewest elements for fwd_nd_gather_kernel: below, one-element packs measured
// faster on the lerp sweep's small cases (H100); above, the gather kernel
// (lerp-design.md, path 2).
constexpr int64_t kGatherMin = int64_t(1) << 19;

// The widest pack narrower than 16 bytes (V/2 elements, then V/4; at least 2)
// for which fits(v) holds; 0 for none (always for fp64).
template <typename T, typename F>
int widest_narrow(F&& fits) {
  for (int v = vec_of<T>() / 2; v >= 2; v /= 2)
    if (fits(v)) return v;
  return 0;
}

// f(std::integral_constant<int, v>) for v, a width widest_narrow returned.
template <typename T, typename F>
void with_narrow(int v, F&& f) {
  constexpr int V = vec_of<T>();
  if constexpr (V / 4 >= 2) {
    if (v == V / 4) return f(std::integral_constant<int, V / 4>{});
  }
  if constexpr (V / 2 >= 2) f(std::integral_constant<int, V / 2>{});
}

// The widest narrow pack (widest_narrow) that divides the innermost dim and
// every other stride, and that every used pointer is aligned to; 0 for none
// (fp64, or an odd innermost run).
template <typename T>
int narrow_vec(const Layout& lay, int inner, const bool (&used)[kNumT], std::initializer_list<const void*> ptrs) {
  return widest_narrow<T>([&](int v) { return all_aligned(ptrs, v * sizeof(T)) && vec_ok(lay, inner, v, used); });
}

// Whether the forwards take narrow packs (LERP_FWD_NARROW=0: no; read once; for experiments).
inline bool fwd_narrow_on() {
  static const int on = env_int("LERP_FWD_NARROW", 1);
  return on != 0;
}

// nd_pick at a width narrow_vec returned (V/2 or V/4 elements).
template <typename T>
void nd_pick_narrow(int v, const Layout& lay, const GenArgs<T>& a, int64_t n, cudaStream_t stream,
                    T* diff = nullptr) {
  with_narrow<T>(v, [&](auto c) { nd_pick<T, decltype(c)::value, false>(lay, a, n, stream, diff); });
}

// Forward with broadcasting (layout with nothing reduced: all dims in R):
// fwd_nd_kernel for layouts of up to 4 collapsed dims with 32-bit offsets
// (nearly all) that can be read VEC-wide; for the others of those,
// fwd_nd_kernel at a narrower pack (narrow_vec), fwd_nd_gather_kernel with
// aligned pointers and kGatherMin elements or more, one-element packs
// below; else fwd_bcast_kernel. LERP_FWD_ND=0 sends every layout to
// fwd_bcast_kernel, LERP_FWD_GATHER=0 the gather kernel's to one-element
// packs, LERP_FWD_NARROW=0 the narrow packs' to either of those (read once;
// for experiments; fwd_narrow_on).
template <typename T>
void launch_bcast_fwd(const Layout& lay, GenArgs<T> a, int64_t n, cudaStream_t stream) {
  constexpr int V = vec_of<T>();
  const int nd = lay.nk + lay.nr;
  const int inner = nd - 1;
  const bool used[kNumT] = {true, true, true, a.w != nullptr};
  const std::initializer_list<const void*> ptrs = {a.x, a.y, a.w, a.out};
  const bool al = all_aligned(ptrs, 16);
  const bool vec = al && vec_ok(lay, inner, V, used);
  const bool small = small_layout(lay);
  static const int nd_on = env_int("LERP_FWD_ND", 1);
  static const int gather_on = env_int("LERP_FWD_GATHER", 1);
  if (nd_on && small && nd <= 4) {
    const int nv = !vec && fwd_narrow_on() ? narrow_vec<T>(lay, inner, used, ptrs) : 0;
    if (vec) {
      nd_pick<T, V, false>(lay, a, n, stream);
    } else if (nv > 0) {
      nd_pick_narrow<T>(nv, lay, a, n, stream);
    } else if (al && V > 1 && gather_on && n >= kGatherMin) {
      nd_pick<T, V, true>(lay, a, n, stream);
    } else {
      nd_pick<T, 1, false>(lay, a, n, stream);
    }
    check_cuda(cudaGetLastError(), "bcast forward (nd) kernel launch");
    return;
  }
  // Decompose only for tensors that are neither laid out like out nor a single element.
  a.mask = 0;
  for (int t = kX; t < kNumT; ++t) {
    if (!used[t]) continue;
    bool full = true, zero = true;
    for (int i = 0; i < nd; ++i) {
      full = full && lay.stride[t][i] == lay.stride[kOut][i];
      zero = zero && lay.stride[t][i] == 0;
    }
    if (!full && !zero) a.mask |= 1u << t;
  }
  const int v = vec ? V : 1;
  const int64_t nv = n / v;
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(ceil_div(nv, kThreads), grid_cap()));
  if (vec && small) {
    fwd_bcast_kernel<T, V, int32_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  } else if (vec) {
    fwd_bcast_kernel<T, V, int64_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  } else if (small) {
    fwd_bcast_kernel<T, 1, int32_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  } else {
    fwd_bcast_kernel<T, 1, int64_t><<<blocks, kThreads, 0, stream>>>(lay, a, nv);
  }
  check_cuda(cudaGetLastError(), "bcast forward kernel launch");
}

}  // namespace gpu
}  // namespace lerp_core
