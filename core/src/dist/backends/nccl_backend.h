#pragma once
// NCCL for the tensors on GPUs (nccl_backend.cpp in CUDA builds); in a build without CUDA,
// nccl_backend_none.cpp answers nullptr and every collective goes through Gloo.
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>

namespace orrery {

c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout);

}  // namespace orrery
