// Scratch device memory for the ops' CUDA cores in a Paddle binding: a core asks for bytes through its Alloc
// callback, and each request becomes a uint8 tensor that the binding's Workspace keeps alive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "paddle/extension.h"

namespace oppaddle {

// uint8 tensors on `like`'s place, alive as long as the Workspace (the binding holds it until the kernels
// are enqueued).
class Workspace {
 public:
  explicit Workspace(const paddle::Tensor& like) : place_(like.place()) {}

  // The cores' Alloc (std::function<void*(size_t bytes)>), valid while this Workspace lives.
  std::function<void*(size_t)> alloc() {
    return [this](size_t bytes) -> void* {
      keep_.push_back(paddle::empty({static_cast<int64_t>(bytes)}, paddle::DataType::UINT8, place_));
      return keep_.back().data();
    };
  }

 private:
  paddle::Place place_;
  std::vector<paddle::Tensor> keep_;
};

}  // namespace oppaddle
