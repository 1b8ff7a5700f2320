#pragma once
// The texts of app/templates/ (the scaffolds of `orrery new plugin`), compiled into the program
// by app/CMakeLists.txt, so that an installed orrery needs no folder of them.
#include <string>

namespace orrery {

// The text of app/templates/<path> ("optim/plugin.cpp", "CMakeLists.txt"); nullptr when none.
const std::string* find_template(const std::string& path);

}  // namespace orrery
