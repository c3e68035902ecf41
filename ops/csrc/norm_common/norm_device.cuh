// Device helpers of the norm ops' CUDA core: 16-byte packs, where a thread's values sit in a row
// (RowSplit), weight/bias reads, and sums over the threads that share one row (a sub-warp, a warp, a
// block, or a cluster of blocks), always added in a fixed order. The fp32 conversions (to_f32/from_f32)
// are common/device_convert.cuh's.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "common/device_convert.cuh"

namespace norm_core {
namespace gpu {

using opcore::gpu::from_f32;
using opcore::gpu::to_f32;

__host__ __device__ __forceinline__ bool aligned16(const void* p) {
  return p == nullptr || reinterpret_cast<uintptr_t>(p) % 16 == 0;
}

// Bits of a 2-byte value (fp16 or bf16), and the value of such bits.
template <typename T>
__device__ __forceinline__ uint32_t bits16(T e) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half_as_ushort(e);
  } else {
    return __bfloat16_as_ushort(e);
  }
}
template <typename T>
__device__ __forceinline__ float f32_of_bits16(uint32_t h) {
  if constexpr (std::is_same_v<T, __half>) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
  } else {
    return __uint_as_float(h << 16);  // bf16 -> fp32 is exact: the bits in the top half
  }
}

// V elements loaded or stored at once (V * sizeof(T) is 16 bytes for the row tensor's type; a float
// weight of a 2-byte input is 32 bytes, two 16-byte accesses). get(k): element k as a float; put(k, e):
// element k's raw value.
template <typename T, int V>
constexpr bool kPackWords = sizeof(T) == 2 && V % 2 == 0;  // held as 32-bit words (the specialization below)
template <typename T, int V, bool kWords = kPackWords<T, V>>
struct alignas(sizeof(T) * V) Pack {
  T v[V];
  __device__ __forceinline__ float get(int k) const { return to_f32(v[k]); }
  __device__ __forceinline__ void put(int k, T e) { v[k] = e; }
};
// 2-byte elements held as 32-bit words of two, so that a pack held raw stays whole registers until its values
// are used. With 16-bit members the compiler split each loaded pack into halves right after its load, which
// waits there for the data: the early parameter reads of 2-byte layer_norm rows went out one after another,
// each behind the last one's data (SASS of fwd_reg's kEarly kernels at 8540562).
template <typename T, int V>
struct alignas(sizeof(T) * V) Pack<T, V, true> {
  uint32_t w[V / 2];
  __device__ __forceinline__ float get(int k) const {
    return k % 2 ? (std::is_same_v<T, __half> ? f32_of_bits16<T>(w[k / 2] >> 16) : __uint_as_float(w[k / 2] & 0xffff0000u))
                 : f32_of_bits16<T>(w[k / 2] & 0xffffu);
  }
  __device__ __forceinline__ void put(int k, T e) {
    w[k / 2] = k % 2 ? (w[k / 2] & 0xffffu) | (bits16(e) << 16) : (w[k / 2] & 0xffff0000u) | bits16(e);
  }
};

// The pack of V floats, each rounded to T (from_f32's rounding).
template <typename T, int V>
__device__ __forceinline__ Pack<T, V> pack_of(const float (&f)[V]) {
  Pack<T, V> o;
  if constexpr (kPackWords<T, V>) {
#pragma unroll
    for (int j = 0; j < V / 2; ++j) o.w[j] = bits16(from_f32<T>(f[2 * j])) | (bits16(from_f32<T>(f[2 * j + 1])) << 16);
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) o.v[k] = from_f32<T>(f[k]);
  }
  return o;
}

template <typename T, int V>
__device__ __forceinline__ Pack<T, V> load_pack(const T* p) {
  return *reinterpret_cast<const Pack<T, V>*>(p);
}
// kStated (the kernels of odd rows): one 16-byte store in inline PTX. As a struct copy, nvcc made the first pack
// of odd rows four 4-byte stores (PTX of fwd_reg's kOdd kernels), though the type is 16-byte aligned; stated,
// odd rows ran up to 13% faster (fp32 layer_norm forwards), but rows of whole packs, whose copies were single
// stores already, up to 7% slower, and keep the copy. p is global memory the kernel never reads back, so the
// compiler need not know what the asm writes.
template <typename T, int V, bool kStated = false>
__device__ __forceinline__ void store_pack(T* p, const Pack<T, V>& v) {
  if constexpr (kStated && sizeof(Pack<T, V>) == 16) {
    uint4 u;
    memcpy(&u, &v, 16);
    asm("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(u.x), "r"(u.y), "r"(u.z), "r"(u.w));
  } else {
    *reinterpret_cast<Pack<T, V>*>(p) = v;
  }
}

// Where one thread's values sit in a row of `cols` elements. The row is cut where its elements become
// 16-byte aligned: `head` elements before, `packs` whole packs of V from there, and a tail of under V
// after. Of the row's kSpan threads, thread `gi` holds packs gi, gi + kSpan, ... (column head + p * V),
// and at most one loose element, column `loose` (-1: none): threads 0..head-1 take the head, threads
// V..V+tail-1 the tail. `off0` is the tensors' first element's offset from 16-byte alignment (in
// elements; the same for every row tensor of the call), so rows of any length and views at any offset
// that all the call's row tensors share read and write whole packs. !kOdd: the host has checked that
// every row is whole aligned packs (no head, no tail), and the split costs no registers.
template <int V, bool kOdd>
struct RowSplit {
  int head = 0, packs, loose = -1;
  __device__ __forceinline__ RowSplit(int64_t row, int cols, int off0, int gi) {
    if constexpr (kOdd) {
      const int o = static_cast<int>((row * cols + off0) % V);
      head = min((V - o) % V, cols);
      packs = (cols - head) / V;
      const int tail = cols - head - packs * V;
      loose = gi < head ? gi : (gi >= V && gi < V + tail ? head + packs * V + (gi - V) : -1);
    } else {
      packs = cols / V;
    }
  }
  __device__ __forceinline__ bool has_loose() const { return kOdd && loose >= 0; }
};

// Asks for the 128-byte line of parameter column c in this SM's L1 (through L2) without holding a register:
// a load of it issued much later then hits in L1 (or L2, if evicted) instead of going to memory. Nothing where
// p is null.
template <typename W>
__device__ __forceinline__ void prefetch_param(const W* p, int c) {
  if (p != nullptr) asm volatile("prefetch.global.L1 [%0];" ::"l"(p + c));
}

// The pack of 2-byte values at p, which need only be element-aligned: the two aligned 16-byte granules that
// hold it (the first again where p is aligned) in vector loads, then their 32-bit words shifted into place in
// registers (two select steps of whole words, a funnel shift for an odd half word). In place of V scalar loads:
// a row of odd length starts each pack at a column off the weight's alignment. Every granule read holds a value
// asked for, so no read reaches a page the values do not.
template <typename W, int V>
__device__ __forceinline__ Pack<W, V> load_shifted(const W* p) {
  static_assert(sizeof(W) == 2 && V == 8, "a 16-byte pack of 2-byte values");
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  const int m = static_cast<int>(a % 16);  // bytes off alignment
  const uint4* g = reinterpret_cast<const uint4*>(a - m);
  const uint4 q0 = __ldg(g), q1 = __ldg(m != 0 ? g + 1 : g);
  const uint32_t u[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
  const int k = m / 4;
  uint32_t t[7], r[5];
#pragma unroll
  for (int i = 0; i < 7; ++i) t[i] = k & 1 ? u[i + 1] : u[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) r[i] = k & 2 ? t[i + 2] : t[i];
  Pack<W, V> out;
#pragma unroll
  for (int i = 0; i < 4; ++i) out.w[i] = __funnelshift_r(r[i], r[i + 1], (m & 2) * 8);  // a shift of 0 or 16
  return out;
}

// One thread's 2-byte parameter packs of a row of odd length, its first at column c0 and each next one `step`
// packs on. Every pack of a row sits as many bytes off the parameter's 16-byte alignment, so the granule address
// is worked out once a row, and at<kM>, the copy for packs kM bytes off (the caller's branch on `off`, the same
// for the row's threads), shifts the words with no select steps: load_shifted's address arithmetic and selects
// at every pack were about a third of the instructions of layer_norm's 2-byte forwards of odd rows (SASS, sm_90).
template <typename W>
struct ShiftedParam {
  static_assert(sizeof(W) == 2, "2-byte parameters");
  const uint4* g;  // the granule holding the first pack's first value
  int off;         // bytes off alignment: 0, 2, ..., 14
  __device__ __forceinline__ ShiftedParam(const W* p, int c0) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p + c0);
    off = static_cast<int>(a % 16);
    g = reinterpret_cast<const uint4*>(a - off);
  }
  template <int kM>
  __device__ __forceinline__ Pack<W, 8> at(int step) const {
    static_assert(kM >= 0 && kM < 16 && kM % 2 == 0, "2-byte values sit an even number of bytes off");
    Pack<W, 8> out;
    const uint4 q0 = __ldg(g + step);
    if constexpr (kM == 0) {
      memcpy(&out, &q0, 16);
    } else {
      const uint4 q1 = __ldg(g + step + 1);  // held values, so no read reaches a page they do not
      const uint32_t u[8] = {q0.x, q0.y, q0.z, q0.w, q1.x, q1.y, q1.z, q1.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
        out.w[i] = kM % 4 ? __funnelshift_r(u[kM / 4 + i], u[kM / 4 + i + 1], 16) : u[kM / 4 + i];
    }
    return out;
  }
};

// One thread's 2-byte parameter packs at one offset from alignment for the whole kernel, its first at column c0
// and each next one `step` packs on, read as 32-bit words for packs held in registers before use (early and
// batched reads): four words, or five where the first value sits in a word's upper half, then shifted into place
// at each use by a funnel shift (pack()). In place of V scalar loads a pack; shifted at the load instead, each
// pack's data was waited for before the next pack's loads went out. The word address and the shift are worked
// out once.
template <typename W>
struct WordParam {
  static_assert(sizeof(W) == 2, "2-byte parameters");
  struct Raw {
    uint32_t u[5];
  };
  const uint32_t* q;  // the word holding the first pack's first value
  int shift;          // 0 or 16: bits of that word below the first value
  __device__ __forceinline__ WordParam(const W* p, int c0) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p + c0);
    shift = static_cast<int>(a & 2) * 8;
    q = reinterpret_cast<const uint32_t*>(a - (a & 2));
  }
  __device__ __forceinline__ Raw raw(int step) const {
    const uint32_t* s = q + step * 4;
    Raw r;
#pragma unroll
    for (int i = 0; i < 4; ++i) r.u[i] = __ldg(s + i);
    r.u[4] = shift != 0 ? __ldg(s + 4) : 0u;  // the fifth word only where it holds a value of the pack
    return r;
  }
  __device__ __forceinline__ Pack<W, 8> pack(const Raw& r) const {
    Pack<W, 8> out;
#pragma unroll
    for (int i = 0; i < 4; ++i) out.w[i] = __funnelshift_r(r.u[i], r.u[i + 1], shift);
    return out;
  }
};
// Whether a kernel over rows of V-element packs that may sit off alignment (kOdd) holds its W parameter packs as
// WordParam's words: 2-byte parameters of 2-byte rows.
template <typename W, int V, bool kOdd>
constexpr bool kWordParams = kOdd && sizeof(W) == 2 && V == 8;
// A WordParam of p's packs from column c0 where kOn, else a placeholder 0 (4-byte or aligned parameters).
template <bool kOn, typename W>
__device__ __forceinline__ auto word_param(const W* p, int c0) {
  if constexpr (kOn) {
    return WordParam<W>(p, c0);
  } else {
    return 0;
  }
}
// A parameter pack held raw in registers: WordParam's words where kOn, else the pack as loaded.
template <typename W, int V, bool kOn>
struct HeldParamOf {
  using type = Pack<W, V>;
};
template <typename W, int V>
struct HeldParamOf<W, V, true> {
  using type = typename WordParam<W>::Raw;
};
template <typename W, int V, bool kOn>
using HeldParam = typename HeldParamOf<W, V, kOn>::type;

// f(std::integral_constant<int, off>{}) for a ShiftedParam's `off` (0, 2, ..., 14), one copy of f for each.
template <typename F, int... kI>
__device__ __forceinline__ void with_offset_of(int off, F& f, std::integer_sequence<int, kI...>) {
  (void)((off == 2 * kI ? (f(std::integral_constant<int, 2 * kI>{}), true) : false) || ...);
}
template <typename F>
__device__ __forceinline__ void with_offset(int off, F&& f) {
  with_offset_of(off, f, std::make_integer_sequence<int, 8>{});
}

// The raw V parameter values (weight or bias) from column c, nothing where p is null, for a pack held in
// registers before its values are used (param_floats). kAny: p + c may sit anywhere (V scalar loads: where
// load_shifted's shifts took the data at the load, the next pack's loads waited for it, and small grids of odd
// rows ran up to 1.5x slower; the kernels hold 2-byte parameters of odd 2-byte rows as WordParam's words instead),
// else it is 16-byte aligned (one vector load).
template <typename W, int V, bool kAny = false>
__device__ __forceinline__ Pack<W, V> load_param_raw(const W* p, int c) {
  Pack<W, V> pk{};
  if (p != nullptr && !kAny) {
    pk = load_pack<W, V>(p + c);
  } else if (p != nullptr) {
#pragma unroll
    for (int k = 0; k < V; ++k) pk.put(k, p[c + k]);
  }
  return pk;
}
// A pack of parameter values as floats, or `fill` where p is null.
template <typename W, int V>
__device__ __forceinline__ void param_floats(const W* p, const Pack<W, V>& pk, float fill, float (&out)[V]) {
#pragma unroll
  for (int k = 0; k < V; ++k) out[k] = p != nullptr ? pk.get(k) : fill;
}

// Reads V parameter values from column c as floats, to be used at once. kAny: p + c may sit anywhere; 2-byte
// values then come through load_shifted (two vector loads in place of V scalar ones: the large grids of odd
// rows ran up to 14% faster), 4-byte ones in V scalar loads (shifted the same way, fp32 backwards of many
// rows ran up to 13% slower). The aligned path is written out rather than as param_floats(load_param_raw):
// that form compiles the kernels of whole-pack rows to other PTX than the code they were timed with (nvcc 13.0,
// sm_90); one null check ahead of both forms does the same to the 4-byte odd-row kernels.
template <typename W, int V, bool kAny = false>
__device__ __forceinline__ void load_param(const W* p, int c, float fill, float (&out)[V]) {
  if constexpr (!kAny) {
    if (p != nullptr) {
      const Pack<W, V> pk = load_pack<W, V>(p + c);
#pragma unroll
      for (int k = 0; k < V; ++k) out[k] = pk.get(k);
    } else {
#pragma unroll
      for (int k = 0; k < V; ++k) out[k] = fill;
    }
  } else {
    if constexpr (sizeof(W) == 2 && V == 8) {
      if (p != nullptr) {
        param_floats<W, V>(p, load_shifted<W, V>(p + c), fill, out);
        return;
      }
    }
    param_floats<W, V>(p, load_param_raw<W, V, kAny>(p, c), fill, out);
  }
}

// Copies `bytes` bytes (a multiple of 16) from global `src` to shared `dst` (both 16-byte aligned) by the bulk
// copy engine (sm_90+), the load counted against mbarrier `bar`: lane l of the calling warp copies the l-th of 32
// slices, after lane 0 has armed the barrier for all of them. Call from one whole warp; every thread then waits
// with wait_staged. No registers hold the data on its way, so a block's occupancy is its shared memory's.
__device__ __forceinline__ void stage_to_shared(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
  const uint32_t lane = threadIdx.x % 32;
  if (lane == 0) asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
  __syncwarp();
  const uint32_t slice = (bytes / 16 + 31) / 32 * 16, lo = min(bytes, lane * slice), hi = min(bytes, lo + slice);
  if (hi > lo) {
    const uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst)) + lo;
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(d),
                 "l"(static_cast<const char*>(src) + lo), "r"(hi - lo), "r"(b)
                 : "memory");
  }
#else
  __trap();  // the host stages rows on sm_90+ only
#endif
}
// Makes `bar` an mbarrier for one arrival (thread 0 of the block), visible to the bulk copy engine; the block
// must sync before any thread uses it.
__device__ __forceinline__ void init_stage_barrier(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// Waits until the copies counted against `bar` (its first phase) have landed in shared memory.
__device__ __forceinline__ void wait_staged(uint64_t* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(bar));
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(b)
        : "memory");
  } while (!done);
#endif
}

// Sums K values over each group of kSpan consecutive lanes (a power of two up to 32) by butterfly
// shuffles; every lane of the group gets the sums.
template <int kSpan, int K>
__device__ __forceinline__ void warp_sum(float (&v)[K]) {
#pragma unroll
  for (int off = kSpan / 2; off > 0; off /= 2) {
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] += __shfl_xor_sync(0xffffffffu, v[k], off);
  }
}

// After warp_sum<32>: adds the sums of kWarps warps (0: all the block's) in warp order; every thread
// gets the sums. `smem` holds at least K * 32 floats; it syncs twice, so every thread of the block must
// call it.
template <int kWarps, int K>
__device__ __forceinline__ void warps_sum(float (&v)[K], float* smem) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warps = kWarps > 0 ? kWarps : blockDim.x / 32;
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < K; ++k) smem[k * 32 + warp] = v[k];
  }
  __syncthreads();
#pragma unroll
  for (int k = 0; k < K; ++k) {
    float s = 0.f;
    for (int i = 0; i < warps; ++i) s += smem[k * 32 + i];
    v[k] = s;
  }
  __syncthreads();
}

// Sums K values over the kTPR threads of a row group (groups are kTPR consecutive threads; a group
// of more than 32 is the whole block). Every thread of the group gets the sums. `smem` holds at least
// K * 32 floats; the block-wide form syncs twice, so every thread of the block must call it.
template <int kTPR, int K>
__device__ __forceinline__ void group_sum(float (&v)[K], float* smem) {
  warp_sum<(kTPR < 32 ? kTPR : 32)>(v);
  if constexpr (kTPR > 32) warps_sum<kTPR / 32>(v, smem);
}

// After group_sum over whole blocks: adds the K sums of the kCS blocks of a thread-block cluster (sm_90+)
// in rank order; every thread gets the sums. `slot` is K floats of shared memory used for nothing else;
// it syncs the cluster twice (the second keeps every block's slot alive until all have read it), so
// every thread of the cluster must call it.
template <int kCS, int K>
__device__ __forceinline__ void cluster_sum(float (&v)[K], float* slot) {
  if constexpr (kCS > 1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) {
#pragma unroll
      for (int k = 0; k < K; ++k) slot[k] = v[k];
    }
    cluster.sync();
    float s[K];
#pragma unroll
    for (int k = 0; k < K; ++k) s[k] = 0.f;
#pragma unroll
    for (int r = 0; r < kCS; ++r) {
      const float* theirs = cluster.map_shared_rank(slot, r);
#pragma unroll
      for (int k = 0; k < K; ++k) s[k] += theirs[k];
    }
    cluster.sync();
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = s[k];
#else
    __trap();  // the host launches clusters on sm_90+ only
#endif
  }
}

// Block-wide sum of K values for blocks of any multiple of 32 threads (the row-loop kernels).
template <int K>
__device__ __forceinline__ void block_sum(float (&v)[K], float* smem) {
  warp_sum<32>(v);
  warps_sum<0>(v, smem);
}

// The column-sum kernels' last step: adds the kLanes row lanes' partial sums of column slot j
// (red[0]: dw, red[1]: db where kCenter) in lane order, so the bits are the same run to run, and writes
// them to column c of dw and db (either may be null).
template <bool kCenter, int kD, int kLanes, int kN, typename W>
__device__ __forceinline__ void put_lane_sums(const float (&red)[kD][kLanes][kN], int j, int64_t c, W* dw,
                                              W* db) {
  float tw = 0.f, tb = 0.f;
#pragma unroll
  for (int l = 0; l < kLanes; ++l) {
    tw += red[0][l][j];
    if constexpr (kCenter) tb += red[1][l][j];
  }
  if (dw != nullptr) dw[c] = from_f32<W>(tw);
  if (kCenter && db != nullptr) db[c] = from_f32<W>(tb);
}

}  // namespace gpu
}  // namespace norm_core
