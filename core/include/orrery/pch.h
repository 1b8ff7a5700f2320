// The precompiled header every Orrery target shares: the ATen tensor API, JSON and the
// standard library. Kept to what core and plugins actually use (not <torch/torch.h>).
#pragma once
#include <ATen/ATen.h>
#include <ATen/core/grad_mode.h>
#include <c10/core/InferenceMode.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>
