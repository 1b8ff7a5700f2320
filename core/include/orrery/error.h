#pragma once
#include <stdexcept>
#include <string>
#include <string_view>

namespace orrery {
// Every error a user can cause is an orrery::Error whose message names the file, option or
// plugin at fault. The Lua boundary turns it into a Lua error at the script's line.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Raised by long-running calls (training, forecasts) when a stop was requested (interrupt.h).
struct Interrupted : Error {
  Interrupted() : Error("interrupted") {}
};

// User input quoted for an error message: in double quotes, control and non-UTF-8 bytes as
// \xNN, and cut to about `max` characters ("...", then how long it was), so a 10 MB cell or a
// binary file never floods the terminal.
std::string quote_input(std::string_view text, size_t max = 80);
}  // namespace orrery
