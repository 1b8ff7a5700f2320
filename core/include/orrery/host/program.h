#pragma once
// The path of the orrery program, for work that starts another orrery process (the dashboard
// beside a REPL, a script's parallel training runs).
#include <string>

namespace orrery {

// This process when it is the orrery program, else the one beside the core library
// (lib/liborrery_core.so -> bin/orrery: the build tree's and an install's layout), as when a
// test program hosts the Lua API. Throws when neither exists.
std::string orrery_program();

}  // namespace orrery
