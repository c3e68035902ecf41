// Forward kernels of the norm ops (kCenter: layer_norm, else rms_norm); see norm_launch.cuh for when
// each runs.
//   fwd_reg : the row in registers, one read of x and one write of y. kTPR threads per row in each of
//             kCS blocks (kCS > 1: a thread-block cluster per row, its blocks' sums added through
//             distributed shared memory; kTPR = 32: a warp per row, 4 rows a block; 128-1024: a block
//             per row), kVecs packs of V elements per thread (16 bytes) plus (kOdd) one loose element
//             where the row is not a whole number of aligned packs (RowSplit). kRead, when the loads go
//             out (FwdRead).
//   fwd_staged: rows of whole aligned packs, a block per row, the row copied into shared memory by the bulk
//             copy engine (sm_90+), then read from there for the sums and for y: occupancy set by shared
//             memory, not by registers holding the row.
//   fwd_loop: any row length or alignment: a block per row, scalar accesses, the row read twice
//             (three times for layer_norm) from L1/L2.
#pragma once

#include "norm_device.cuh"

namespace norm_core {
namespace gpu {

// When fwd_reg's loads go out. A use of a pack inside its `p < packs` branch holds the next pack's load back
// until this one's data has come (the compiler cannot hoist a load above that branch), and each pack's
// parameter load waits behind the previous pack's store: a round trip to memory a pack.
//   kLate:     each x pack converted as it comes, each pack's weight and bias read as its y is written. The
//              fewest registers, for grids whose many blocks an SM hide the round trips.
//   kPrefetch: kLate, and the parameters' lines asked for into L1 right after x's loads (no register held).
//   kBatched:  every x load out before any is used, and after the row sums every weight and bias load out
//              before any is used: two round trips a row, the parameters held only while y is written.
//   kEarly:    x, weight and bias loads all out before any is used, the parameters held across the sums: one
//              round trip, the most registers.
//   kWords:    kLate with 2-byte x held as its loaded words, each element converted at each use instead of once
//              into a float: half the registers for the row, so that a thread of 64 values fits 64 registers,
//              two blocks of 512 threads an SM, four of 256, eight of 128, and a thread of 32 values 40
//              registers, six blocks of 256, twelve of 128 (held to that by the launch bound).
enum class FwdRead { kLate, kPrefetch, kBatched, kEarly, kWords };

// The blocks an SM fwd_reg's launch bound holds it to: kWords' (above); three for the late reads of 384
// threads at 8 packs, the table's row for a wave of three blocks an SM (norm_tables.cuh: 56 registers by
// ptxas sm_90, fp32); else none, 0 (an explicit 1 gave the other kernels 4-8 more registers by ptxas, and
// slower runs).
template <int kTPR, int kVecs, FwdRead kRead>
constexpr int fwd_min_blocks() {
  constexpr int kBlock = kTPR < 128 ? 128 : kTPR;
  if constexpr (kRead == FwdRead::kWords) return (kVecs == 4 ? 1536 : 1024) / kBlock;
  if constexpr (kRead == FwdRead::kLate && kTPR == 384 && kVecs == 8) return 3;
  return 0;
}

template <typename T, typename W, bool kCenter, int kTPR, int kVecs, int kCS, bool kOdd, FwdRead kRead>
__global__ void __launch_bounds__(kTPR < 128 ? 128 : kTPR, (fwd_min_blocks<kTPR, kVecs, kRead>()))
    fwd_reg(const T* __restrict__ x, const W* __restrict__ w, const W* __restrict__ b, T* __restrict__ y,
            float* __restrict__ mean, float* __restrict__ rstd, int64_t rows, int cols, float eps, int off0) {
  constexpr int V = 16 / sizeof(T), kBlock = kTPR < 128 ? 128 : kTPR, kRPB = kBlock / kTPR, kSpan = kCS * kTPR;
  constexpr bool kEarly = kRead == FwdRead::kEarly, kPrefetch = kRead == FwdRead::kPrefetch;
  constexpr bool kBulk = kEarly || kRead == FwdRead::kBatched;  // x's loads first; the parameters held
  constexpr bool kWords = kRead == FwdRead::kWords, kHoldX = kBulk || kWords;  // x's packs held as loaded
  static_assert(kCS == 1 || kRPB == 1, "a cluster shares one row");
  static_assert(!kWords || sizeof(T) == 2, "only 2-byte rows are held as words");
  __shared__ float smem[2 * 32];
  __shared__ float slot[1];
  const int lane = threadIdx.x % kTPR;
  const int gi = (kCS > 1 ? static_cast<int>(blockIdx.x % kCS) * kTPR : 0) + lane;
  const int64_t row = kCS > 1 ? blockIdx.x / kCS : static_cast<int64_t>(blockIdx.x) * kRPB + threadIdx.x / kTPR;
  const bool live = row < rows;  // a whole group is live or not (the block-wide sums need every thread)
  const RowSplit<V, kOdd> sp(live ? row : 0, cols, off0, gi);
  const float inv_n = 1.f / static_cast<float>(cols);
  const T* xr = x + (live ? row : 0) * cols + sp.head;
  Pack<T, V> xp[kHoldX ? kVecs : 1];
  float v[kWords ? 1 : kVecs][V];
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const int p = gi + i * kSpan;
    if (live && p < sp.packs) {
      xp[kHoldX ? i : 0] = load_pack<T, V>(xr + p * V);
      if constexpr (!kHoldX) {
#pragma unroll
        for (int k = 0; k < V; ++k) v[i][k] = xp[0].get(k);
      }
    } else if constexpr (kWords) {
      xp[i] = Pack<T, V>{};
    } else if constexpr (!kBulk) {
#pragma unroll
      for (int k = 0; k < V; ++k) v[i][k] = 0.f;
    }
  }
  const float e = live && sp.has_loose() ? to_f32(xr[sp.loose - sp.head]) : 0.f;
  if constexpr (kPrefetch) {
    if (live) {
#pragma unroll
      for (int i = 0; i < kVecs; ++i) {
        const int p = gi + i * kSpan;
        if (p < sp.packs) {
          prefetch_param(w, sp.head + p * V);
          if constexpr (kCenter) prefetch_param(b, sp.head + p * V);
        }
      }
    }
  }
  // kBulk: every pack's weight and bias (and the loose element's) loaded at once, before any is used; those of
  // odd rows of 2-byte parameters as WordParam's words.
  constexpr bool kWordP = kBulk && kWordParams<W, V, kOdd>;
  [[maybe_unused]] const auto wq = word_param<kWordP>(w, sp.head + gi * V);
  [[maybe_unused]] const auto bq = word_param<kWordP>(kCenter ? b : w, sp.head + gi * V);
  HeldParam<W, V, kWordP> wp[kBulk ? kVecs : 1] = {}, bp[kBulk && kCenter ? kVecs : 1] = {};
  W we{}, be{};
  const auto read_params = [&]() {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int p = gi + i * kSpan;
      if (live && p < sp.packs) {
        if constexpr (kWordP) {
          if (w != nullptr) wp[i] = wq.raw(i * kSpan);
          if (kCenter && b != nullptr) bp[i] = bq.raw(i * kSpan);
        } else {
          wp[i] = load_param_raw<W, V, kOdd>(w, sp.head + p * V);
          if constexpr (kCenter) bp[i] = load_param_raw<W, V, kOdd>(b, sp.head + p * V);
        }
      }
    }
    if (live && sp.has_loose()) {
      if (w != nullptr) we = w[sp.loose];
      if (b != nullptr) be = b[sp.loose];
    }
  };
  if constexpr (kEarly) read_params();
  if constexpr (kBulk) {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const bool in = live && gi + i * kSpan < sp.packs;
#pragma unroll
      for (int k = 0; k < V; ++k) v[i][k] = in ? xp[i].get(k) : 0.f;
    }
  }
  // Element k of pack i as a float (0 past the row).
  const auto xv = [&](int i, int k) -> float {
    if constexpr (kWords) return xp[i].get(k);
    else return v[i][k];
  };
  // layer_norm's words between its passes (and rms_norm's before ShiftedParam's epilogue): each word plus a zero
  // the compiler cannot know (cols >> 31), so that no pass reuses a value the pass before it took from x (the
  // converted elements, x - mean), which it would hold in registers from one pass to the next (ptxas sm_90, 64
  // registers: 84-144 bytes of spills without, none with; rms_norm's bf16 rows 120-124 bytes at that epilogue; an
  // empty asm naming the words does not stop ptxas, which sees no instruction there).
  const auto renew_x = [&]() {
    if constexpr (kWords) {
      const uint32_t z = static_cast<uint32_t>(cols >> 31);
#pragma unroll
      for (int i = 0; i < kVecs; ++i)
#pragma unroll
        for (int j = 0; j < V / 2; ++j) xp[i].w[j] += z;
    }
  };
  const auto renew_words = [&]() {
    if constexpr (kCenter) renew_x();
  };
  float mu = 0.f;
  if constexpr (kCenter) {
    float s[1] = {e};
#pragma unroll
    for (int i = 0; i < kVecs; ++i)
#pragma unroll
      for (int k = 0; k < V; ++k) s[0] += xv(i, k);
    group_sum<kTPR, 1>(s, smem);
    cluster_sum<kCS, 1>(s, slot);
    mu = s[0] * inv_n;
    renew_words();
  }
  float q[1] = {sp.has_loose() ? (e - mu) * (e - mu) : 0.f};
#pragma unroll
  for (int i = 0; i < kVecs; ++i) {
    const bool in = gi + i * kSpan < sp.packs;
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float d = in ? xv(i, k) - mu : 0.f;
      q[0] += d * d;
    }
  }
  group_sum<kTPR, 1>(q, smem);
  cluster_sum<kCS, 1>(q, slot);
  if constexpr (!std::is_same_v<T, __half>) renew_words();  // f16 rows fit without (and spilled 4-8 bytes with)
  const float rs = rsqrtf(q[0] * inv_n + eps);
  if (!live) return;
  if (gi == 0) {
    if constexpr (kCenter) mean[row] = mu;
    rstd[row] = rs;
  }
  if constexpr (kRead == FwdRead::kBatched) read_params();
  T* yr = y + row * cols + sp.head;
  // Odd rows of 2-byte values and parameters read late, with a weight (and for layer_norm a bias as far off its
  // alignment as the weight): y written pack by pack with the parameters through ShiftedParam's copy for packs
  // kM bytes off (the row's threads, a warp or more, all take the same copy); otherwise through load_param, in a
  // loop of its own (one epilogue lambda for both ways changed the PTX of whole-pack kernels; nvcc 13.0). rms_norm
  // has no bias: sb is the weight's again, and its off the same.
  constexpr bool kShifted = kOdd && !kBulk && sizeof(W) == 2 && V == 8 && kTPR >= 32;
  bool shifted = false;
  if constexpr (kShifted) {
    if (w != nullptr && (kCenter ? b != nullptr : b == nullptr)) {
      const int c0 = sp.head + gi * V;
      const ShiftedParam<W> sw(w, c0), sb(kCenter ? b : w, c0);
      if (sw.off == sb.off) {
        if constexpr (!kCenter) renew_x();
        with_offset(sw.off, [&](auto m) {
          constexpr int kM = decltype(m)::value;
#pragma unroll
          for (int i = 0; i < kVecs; ++i) {
            const int p = gi + i * kSpan;
            if (p >= sp.packs) continue;
            const Pack<W, V> pw = sw.template at<kM>(i * kSpan);
            Pack<W, V> pb{};
            if constexpr (kCenter) pb = sb.template at<kM>(i * kSpan);
            float o[V];
#pragma unroll
            for (int k = 0; k < V; ++k) o[k] = (xv(i, k) - mu) * rs * pw.get(k) + (kCenter ? pb.get(k) : 0.f);
            store_pack<T, V, kOdd>(yr + p * V, pack_of<T, V>(o));
          }
        });
        shifted = true;
      }
    }
  }
  if (!shifted) {
#pragma unroll
    for (int i = 0; i < kVecs; ++i) {
      const int p = gi + i * kSpan;
      if (p >= sp.packs) continue;
      const int c = sp.head + p * V;
      float wv[V], bv[V], o[V];
      if constexpr (kBulk) {
        if constexpr (kWordP) {
          param_floats<W, V>(w, wq.pack(wp[i]), 1.f, wv);
          param_floats<W, V>(b, bq.pack(bp[kCenter ? i : 0]), 0.f, bv);
        } else {
          param_floats<W, V>(w, wp[i], 1.f, wv);
          param_floats<W, V>(b, bp[kCenter ? i : 0], 0.f, bv);
        }
      } else {
        load_param<W, V, kOdd>(w, c, 1.f, wv);
        load_param<W, V, kOdd>(b, c, 0.f, bv);
      }
#pragma unroll
      for (int k = 0; k < V; ++k) o[k] = (xv(i, k) - mu) * rs * wv[k] + bv[k];
      store_pack<T, V, kOdd>(yr + p * V, pack_of<T, V>(o));
    }
  }
  if (sp.has_loose()) {
    const int c = sp.loose;
    float wv, bv;
    if constexpr (kBulk) {
      wv = w != nullptr ? to_f32(we) : 1.f;
      bv = b != nullptr ? to_f32(be) : 0.f;
    } else {
      wv = w != nullptr ? to_f32(w[c]) : 1.f;
      bv = b != nullptr ? to_f32(b[c]) : 0.f;
    }
    yr[c - sp.head] = from_f32<T>((e - mu) * rs * wv + bv);
  }
}

// A row a block of kThreads threads, its cols * sizeof(T) bytes staged in dynamic shared memory (`staged`), then
// read from there: the row sums, then y = (x - mean) * rstd * w + b with the parameters read from global memory
// pack by pack. The host has checked that every row and parameter is whole 16-byte packs. Held to a full SM of
// threads (32 registers; three quarters for fp32 parameters of 2-byte rows, which spilled at 32): shared memory,
// not registers, sets how many rows an SM holds.
template <typename T, typename W, bool kCenter, int kThreads>
__global__ void __launch_bounds__(kThreads, (sizeof(W) > sizeof(T) ? 1536 : 2048) / kThreads)
    fwd_staged(const T* __restrict__ x, const W* __restrict__ w, const W* __restrict__ b, T* __restrict__ y,
               float* __restrict__ mean, float* __restrict__ rstd, int cols, float eps) {
  constexpr int V = 16 / sizeof(T);
  extern __shared__ __align__(16) unsigned char staged[];
  __shared__ float smem[2 * 32];
  __shared__ uint64_t bar;
  const int64_t row = blockIdx.x;
  const int packs = cols / V;
  const Pack<T, V>* xs = reinterpret_cast<const Pack<T, V>*>(staged);
  if (threadIdx.x == 0) init_stage_barrier(&bar);
  __syncthreads();
  if (threadIdx.x < 32) stage_to_shared(staged, x + row * cols, static_cast<uint32_t>(cols) * sizeof(T), &bar);
  wait_staged(&bar);
  const float inv_n = 1.f / static_cast<float>(cols);
  float mu = 0.f;
  if constexpr (kCenter) {
    float s[1] = {0.f};
#pragma unroll 4
    for (int p = threadIdx.x; p < packs; p += kThreads) {
      const Pack<T, V> xp = xs[p];
#pragma unroll
      for (int k = 0; k < V; ++k) s[0] += xp.get(k);
    }
    group_sum<kThreads, 1>(s, smem);
    mu = s[0] * inv_n;
  }
  float q[1] = {0.f};
#pragma unroll 4
  for (int p = threadIdx.x; p < packs; p += kThreads) {
    const Pack<T, V> xp = xs[p];
#pragma unroll
    for (int k = 0; k < V; ++k) {
      const float d = xp.get(k) - mu;
      q[0] += d * d;
    }
  }
  group_sum<kThreads, 1>(q, smem);
  const float rs = rsqrtf(q[0] * inv_n + eps);
  if (threadIdx.x == 0) {
    if constexpr (kCenter) mean[row] = mu;
    rstd[row] = rs;
  }
  T* yr = y + row * cols;
#pragma unroll 1
  for (int p = threadIdx.x; p < packs; p += kThreads) {
    const Pack<T, V> xp = xs[p];
    float wv[V], bv[V], o[V];
    load_param<W, V>(w, p * V, 1.f, wv);
    load_param<W, V>(b, p * V, 0.f, bv);
#pragma unroll
    for (int k = 0; k < V; ++k) o[k] = (xp.get(k) - mu) * rs * wv[k] + bv[k];
    store_pack<T, V>(yr + p * V, pack_of<T, V>(o));
  }
}

template <typename T, typename W, bool kCenter>
__global__ void __launch_bounds__(1024)
    fwd_loop(const T* __restrict__ x, const W* __restrict__ w, const W* __restrict__ b, T* __restrict__ y,
             float* __restrict__ mean, float* __restrict__ rstd, int64_t rows, int cols, float eps) {
  __shared__ float smem[2 * 32];
  const int64_t row = blockIdx.x;
  const T* xr = x + row * cols;
  const float inv_n = 1.f / static_cast<float>(cols);
  float mu = 0.f;
  if constexpr (kCenter) {
    float s[1] = {0.f};
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s[0] += to_f32(xr[c]);
    block_sum<1>(s, smem);
    mu = s[0] * inv_n;
  }
  float q[1] = {0.f};
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = to_f32(xr[c]) - mu;
    q[0] += d * d;
  }
  block_sum<1>(q, smem);
  const float rs = rsqrtf(q[0] * inv_n + eps);
  if (threadIdx.x == 0) {
    if constexpr (kCenter) mean[row] = mu;
    rstd[row] = rs;
  }
  T* yr = y + row * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    const float wv = w != nullptr ? to_f32(w[c]) : 1.f, bv = b != nullptr ? to_f32(b[c]) : 0.f;
    yr[c] = from_f32<T>((to_f32(xr[c]) - mu) * rs * wv + bv);
  }
}

}  // namespace gpu
}  // namespace norm_core
