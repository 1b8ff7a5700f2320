#pragma once
#include <memory>

#include "orrery/json.h"
#include "orrery/param.h"

namespace orrery {
using ParametrisationFactory = std::unique_ptr<Parametrisation> (*)(const Json& options);
}  // namespace orrery
