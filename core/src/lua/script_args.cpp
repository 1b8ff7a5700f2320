#include "orrery/host/script_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "orrery/error.h"

namespace orrery {
namespace {

// "3", "0.5", "1e3", "-2": a number only when the whole text is one (so "4OO" and "12abc" are not).
bool read_number(const std::string& text, double* out) {
  if (text.empty() || text.find_first_of(" \t\n") != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) return false;
  *out = d;
  return true;
}

std::vector<std::string> items(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    out.push_back(text.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return out;
    at = comma + 1;
  }
}

// What each type reads as, in messages and --help.
std::string kind(const OptionSpec& s) {
  if (s.type == "int") return "a whole number";
  if (s.type == "number") return "a number";
  if (s.type == "bool") return "true or false";
  if (s.type == "int_list") return "whole numbers, comma-separated";
  if (s.type == "number_list") return "numbers, comma-separated";
  if (s.type == "strings") return "names, comma-separated";
  if (s.type == "path") return "a file or folder";
  if (!s.choices.empty()) return "one of " + join_names(s.choices);
  return "text";
}

// One command-line value as its declared type; what cannot be read is refused here, what is out
// of range by the schema's validation after.
Json typed(const OptionSpec& s, const std::string& text, const std::string& script) {
  const auto bad = [&](const std::string& why) {
    return Error(script + ": argument " + s.name + "=" + text + ": " + why + " (see orrery run " + script + " --help)");
  };
  if (text.empty()) throw bad("no value; expected " + kind(s));
  const auto number = [&](const std::string& item, bool whole) {
    double d = 0;
    if (!read_number(item, &d) || !std::isfinite(d)) throw bad(quote_input(item) + " is not " + (whole ? "a whole number" : "a finite number"));
    if (whole && (std::floor(d) != d || std::fabs(d) >= 9.2e18)) throw bad(quote_input(item) + " is not a whole number");
    return whole ? Json(static_cast<long long>(d)) : Json(d);
  };
  if (s.type == "int") return number(text, true);
  if (s.type == "number") return number(text, false);
  if (s.type == "bool") {
    if (text != "true" && text != "false") throw bad("expected true or false");
    return text == "true";
  }
  if (s.type == "int_list" || s.type == "number_list" || s.type == "strings") {
    Json list = Json::array();
    for (const auto& item : items(text)) {
      if (item.empty()) throw bad("an empty item; expected " + kind(s));
      list.push_back(s.type == "strings" ? Json(item) : number(item, s.type == "int_list"));
    }
    return list;
  }
  return text;  // string, path
}

}  // namespace

Json parse_script_args(const ScriptArgs& declared, const std::map<std::string, std::string>& given) {
  const std::string& script = declared.script;
  std::vector<std::string> names;
  for (const auto& s : declared.schema.specs()) names.push_back(s.name);
  Json user = Json::object();
  for (const auto& [name, text] : given) {
    const OptionSpec* s = declared.schema.find(name);
    if (!s) {
      std::string msg = script + ": unknown argument '" + name + "'";
      if (const std::string near = closest_name(name, names); !near.empty()) msg += " (did you mean '" + near + "'?)";
      msg += names.empty() ? "; it takes no arguments" : "; its arguments are " + join_names(names);
      throw Error(msg + " (see orrery run " + script + " --help)");
    }
    user[name] = typed(*s, text, script);
  }
  Json out;
  try {
    out = declared.schema.validate(user, "this script", {}, "argument");
  } catch (const Error& e) {
    throw Error(script + ": " + e.what() + " (see orrery run " + script + " --help)");
  }
  // A path is refused before any work starts, not when a long run finally reads it.
  for (const auto& s : declared.schema.specs()) {
    if (s.type != "path" || out[s.name].is_null()) continue;
    const std::string path = out[s.name].get<std::string>();
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      throw Error(script + ": argument " + s.name + "=" + path + ": no such file or folder" +
                  (given.count(s.name) ? "" : " (the default; give " + s.name + "=PATH)"));
  }
  return out;
}

std::string script_usage(const ScriptArgs& declared) {
  std::ostringstream out;
  out << "usage: orrery run " << declared.script << " [--resume] [name=value ...]\n";
  if (!declared.about.empty()) out << "\n" << declared.about << "\n";
  if (declared.schema.specs().empty()) return out.str() + "\nIt takes no arguments.\n";
  out << "\narguments (default after =):\n";
  constexpr int kColumn = 28;  // where each argument's help starts
  for (const auto& s : declared.schema.specs()) {
    std::ostringstream head;
    head << "  " << s.name << "=";
    if (s.default_value.is_array()) {
      for (size_t i = 0; i < s.default_value.size(); ++i) {
        const Json& e = s.default_value[i];
        head << (i ? "," : "") << (e.is_string() ? e.get<std::string>() : e.dump());
      }
    } else if (!s.default_value.is_null()) {
      head << (s.default_value.is_string() ? s.default_value.get<std::string>() : s.default_value.dump());
    }
    const std::string name = head.str();
    out << std::left << std::setw(kColumn) << name;
    if (name.size() >= kColumn) out << "\n" << std::setw(kColumn) << "";
    out << s.description << " [" << kind(s);
    if (s.min && s.max) out << ", " << *s.min << " to " << *s.max;
    else if (s.min) out << ", at least " << *s.min;
    else if (s.max) out << ", at most " << *s.max;
    out << "]\n";
  }
  return out.str();
}

}  // namespace orrery
