#pragma once
// A script's arguments, declared once (orrery.args in Lua) and read from the command line's
// name=value pairs: each value is typed by its declaration, checked against its range or choices,
// and refused, with the argument named, when it is malformed (steps=4OO), out of range (steps=-5)
// or unknown (stpes=10, with the argument it resembles). The same declaration prints --help.
#include <map>
#include <string>

#include "orrery/json.h"
#include "orrery/options.h"

namespace orrery {

struct ScriptArgs {
  std::string script;  // the script's path, as the command line gave it: errors and --help name it
  std::string about;   // what the script does, a paragraph
  OptionSchema schema; // types: int, number, bool, string, path, int_list, number_list, strings
};

// The command line's values typed and checked: every declared argument, its default where not
// given (null for an argument without one). Throws orrery::Error naming the script and argument.
Json parse_script_args(const ScriptArgs& declared, const std::map<std::string, std::string>& given);

// What `orrery run SCRIPT --help` prints: usage, the paragraph, one line per argument with its
// type, range and default.
std::string script_usage(const ScriptArgs& declared);

}  // namespace orrery
