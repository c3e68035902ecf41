// Paddle tensor helpers shared by every op's Paddle binding (CPU .cc and GPU .cu files).
#pragma once

#include <string>

#include "paddle/extension.h"

namespace oppaddle {

// A dtype's name for one-line errors.
inline std::string dtype_name(paddle::DataType d) {
  switch (d) {
    case paddle::DataType::FLOAT32: return "float32";
    case paddle::DataType::FLOAT64: return "float64";
    case paddle::DataType::FLOAT16: return "float16";
    case paddle::DataType::BFLOAT16: return "bfloat16";
    case paddle::DataType::INT32: return "int32";
    case paddle::DataType::INT64: return "int64";
    case paddle::DataType::BOOL: return "bool";
    default: return "dtype#" + std::to_string(static_cast<int>(d));
  }
}

// A tensor's data as the core's element type: paddle::float16/bfloat16 are 2-byte structs, which the cores
// see through their own 2-byte types.
template <typename T>
const T* cptr(const paddle::Tensor& t) {
  return reinterpret_cast<const T*>(t.data());
}
template <typename T>
T* mptr(paddle::Tensor& t) {
  return reinterpret_cast<T*>(t.data());
}

}  // namespace oppaddle
