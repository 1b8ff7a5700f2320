#pragma once
// Where the orrery program and its installed data are, for work that starts another orrery
// process (the dashboard beside a REPL, a script's parallel training runs) and for an install
// that finds its scripts and assets relative to itself.
#include <string>

namespace orrery {

// This process when it is the orrery program, else the one beside the core library
// (lib/liborrery_core.so -> bin/orrery: the build tree's and an install's layout), as when a
// test program hosts the Lua API. Throws when neither exists.
std::string orrery_program();

// A file or folder of an installed Orrery's data, <prefix>/share/orrery/<relative> (the scripts,
// the bundled assets), found beside the core library (<prefix>/lib), wherever the prefix was moved;
// "" when it is not there (a build tree, or an install without it).
std::string installed_data(const std::string& relative);

}  // namespace orrery
