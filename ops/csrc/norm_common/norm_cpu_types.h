// The norm ops' CPU element types and their conversions to and from float (fp32 accumulation): the
// 2-byte types, their rounding and to_f32/from_f32 are common/cpu_half.h's.
#pragma once

#include <cstdint>

#include "common/cpu_half.h"

namespace norm_core {

using opcore::bf16_t;
using opcore::bits_f32;
using opcore::f32_bits;
using opcore::from_f32;
using opcore::half_t;
using opcore::to_f32;

}  // namespace norm_core
