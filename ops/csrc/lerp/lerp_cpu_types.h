// The lerp CPU core's element types and their conversions to and from the accumulation type (float for
// fp16/bf16/fp32, double for fp64); the 2-byte types and their rounding are common/cpu_half.h's.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "broadcast.h"
#include "common/cpu_half.h"

namespace lerp_core {

using opcore::bf16_t;
using opcore::bits_f32;
using opcore::f32_bits;
using opcore::half_t;

// To and from the accumulation type (AccOf): common/cpu_half.h's to_f32/from_f32 for fp32, fp16 and bf16;
// fp64 stays as it is.
template <typename T>
inline typename AccOf<T>::type to_acc(T v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return opcore::to_f32(v);
  }
}

template <typename T>
inline T from_acc(typename AccOf<T>::type v) {
  if constexpr (std::is_same_v<T, double>) {
    return v;
  } else {
    return opcore::from_f32<T>(v);
  }
}

}  // namespace lerp_core
