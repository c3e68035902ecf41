// Scratch device memory for the ops' CUDA cores in a PyTorch binding: a core asks for bytes through its Alloc
// callback, and each request becomes a byte tensor that the binding's Workspace keeps alive.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace optorch {

// Byte tensors on `like`'s device, alive as long as the Workspace (the binding holds it until the kernels
// are enqueued).
class Workspace {
 public:
  explicit Workspace(const at::Tensor& like) : opts_(like.options().dtype(at::kByte)) {}

  // The cores' Alloc (std::function<void*(size_t bytes)>), valid while this Workspace lives.
  std::function<void*(size_t)> alloc() {
    return [this](size_t bytes) -> void* {
      keep_.push_back(at::empty({static_cast<int64_t>(bytes)}, opts_));
      return keep_.back().mutable_data_ptr();
    };
  }

 private:
  at::TensorOptions opts_;
  std::vector<at::Tensor> keep_;
};

}  // namespace optorch
