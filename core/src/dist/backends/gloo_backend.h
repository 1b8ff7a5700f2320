#pragma once
// The one door to ProcessGroupGloo.hpp (gloo_backend.cpp), so no other file needs gloo headers.
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>

namespace orrery {

// Gloo binds `interface` when given, else the address of `host`.
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                                    std::chrono::milliseconds timeout, const std::string& host,
                                                    const std::string& interface);

}  // namespace orrery
