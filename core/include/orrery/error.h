#pragma once
#include <stdexcept>
#include <string>

namespace orrery {
// Every error a user can cause is an orrery::Error whose message names the file, option or
// plugin at fault. The Lua boundary turns it into a Lua error at the script's line.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Raised by long-running calls (training, evaluation) when the user pressed Ctrl-C.
struct Interrupted : Error {
  Interrupted() : Error("interrupted") {}
};
}  // namespace orrery
