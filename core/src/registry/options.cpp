#include "orrery/options.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "orrery/error.h"

namespace orrery {
namespace {

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string describe_value(const Json& v) {
  if (v.is_string()) return "the string " + quote_input(v.get<std::string>());
  if (v.is_number_float() && !std::isfinite(v.get<double>()))
    return std::string("number ") + (std::isnan(v.get<double>()) ? "NaN" : v.get<double>() > 0 ? "inf" : "-inf");
  // replace: a value built in C++ (not parsed) may hold bytes that are not UTF-8; dump would throw.
  std::string text = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 80) {  // cut between characters: a message must stay UTF-8 (fuzz_options)
    size_t cut = 80;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
    text = text.substr(0, cut) + "...";
  }
  return v.type_name() + std::string(" ") + text;
}

}  // namespace

std::string join_names(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s;
}

std::vector<std::string> string_list(const Json& value) {
  std::vector<std::string> out;
  if (value.is_array()) {
    for (const auto& v : value) out.push_back(v.get<std::string>());
    return out;
  }
  const std::string text = value.is_string() ? value.get<std::string>() : "";
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = text.find(',', at);
    if (comma == std::string::npos) comma = text.size();
    std::string name = text.substr(at, comma - at);
    const size_t a = name.find_first_not_of(" \t"), b = name.find_last_not_of(" \t");
    if (a != std::string::npos) out.push_back(name.substr(a, b - a + 1));
    at = comma + 1;
  }
  return out;
}

std::string closest_name(const std::string& name, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_d = std::max<size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    size_t d = edit_distance(name, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

OptionSchema& OptionSchema::integer(std::string name, long long def, std::string doc,
                                    std::optional<double> min, std::optional<double> max) {
  specs_.push_back({std::move(name), "int", def, std::move(doc), min, max, {}, {}});
  return *this;
}
OptionSchema& OptionSchema::number(std::string name, double def, std::string doc,
                                   std::optional<double> min, std::optional<double> max) {
  specs_.push_back({std::move(name), "number", def, std::move(doc), min, max, {}, {}});
  return *this;
}
OptionSchema& OptionSchema::boolean(std::string name, bool def, std::string doc) {
  specs_.push_back({std::move(name), "bool", def, std::move(doc), {}, {}, {}, {}});
  return *this;
}
OptionSchema& OptionSchema::string(std::string name, std::string def, std::string doc,
                                   std::vector<std::string> choices) {
  specs_.push_back({std::move(name), "string", def, std::move(doc), {}, {}, std::move(choices), {}});
  return *this;
}
OptionSchema& OptionSchema::number_list(std::string name, std::vector<double> def,
                                        std::string doc) {
  specs_.push_back({std::move(name), "number_list", def, std::move(doc), {}, {}, {}, {}});
  return *this;
}

OptionSchema& OptionSchema::strings(std::string name, std::string def, std::string doc) {
  specs_.push_back({std::move(name), "strings", def, std::move(doc), {}, {}, {}, {}});
  return *this;
}

OptionSchema& OptionSchema::list(std::string name, std::string doc) {
  specs_.push_back({std::move(name), "list", nullptr, std::move(doc), {}, {}, {}, {}});
  return *this;
}

OptionSchema& OptionSchema::table(std::string name, std::string doc) {
  specs_.push_back({std::move(name), "table", nullptr, std::move(doc), {}, {}, {}, {}});
  return *this;
}

OptionSchema& OptionSchema::default_was(Json before) {
  if (specs_.empty()) throw std::logic_error("OptionSchema::default_was needs an option before it");
  specs_.back().default_was = std::move(before);
  return *this;
}

OptionSchema& OptionSchema::extend(const OptionSchema& other) {
  specs_.insert(specs_.end(), other.specs_.begin(), other.specs_.end());
  return *this;
}

const OptionSpec* OptionSchema::find(const std::string& name) const {
  for (const auto& s : specs_)
    if (s.name == name) return &s;
  return nullptr;
}

OptionSchema& OptionSchema::add(OptionSpec spec) {
  specs_.push_back(std::move(spec));
  return *this;
}

Json OptionSchema::validate(const Json& user, const std::string& owner,
                            const std::vector<std::string>& also_known, const std::string& noun) const {
  if (!user.is_null() && !user.is_object())
    throw Error("options for " + owner + " must be a table of name = value pairs");
  Json out = Json::object();
  for (const auto& s : specs_) out[s.name] = s.default_value;
  if (user.is_null()) return out;

  std::vector<std::string> known = also_known;
  for (const auto& s : specs_) known.push_back(s.name);
  for (const auto& [key, value] : user.items()) {
    const OptionSpec* s = find(key);
    if (!s) {
      std::string msg = "unknown " + noun + " '" + key + "' for " + owner;
      std::string near = closest_name(key, known);
      if (!near.empty()) msg += " (did you mean '" + near + "'?)";
      msg += known.empty() ? "; it takes no " + noun + "s" : "; its " + noun + "s are: " + join_names(known);
      throw Error(msg);
    }
    auto bad = [&](const std::string& what) {
      return Error(noun + " '" + key + "' of " + owner + " must be " + what + ", got " +
                   describe_value(value));
    };
    Json v = value;
    if (v.is_number() && !std::isfinite(v.get<double>())) throw bad("a finite number");
    if (s->type == "int") {
      // A whole float becomes an integer; 2.5 is refused, and so is 1e30 (by the range below,
      // or as beyond 64 bits) before any conversion could overflow.
      const auto range = [&](double d) {
        std::ostringstream r;
        if (d > 0 && s->max) r << "<= " << *s->max;
        else if (d < 0 && s->min) r << ">= " << *s->min;
        else r << "within the range of a 64-bit integer";
        return r.str();
      };
      if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::floor(d) != d) throw bad("an integer");
        if (std::fabs(d) >= 9.2e18) throw bad(range(d));
        v = static_cast<long long>(d);
      }
      if (v.is_number_unsigned() && v.get<unsigned long long>() > 9200000000000000000ull) throw bad(range(1));
      if (!v.is_number_integer()) throw bad("an integer");
    } else if (s->type == "number") {
      if (!v.is_number()) throw bad("a number");
      v = v.get<double>();
    } else if (s->type == "bool") {
      if (!v.is_boolean()) throw bad("true or false");
    } else if (s->type == "string" || s->type == "path") {
      if (!v.is_string()) throw bad("a string");
      if (!s->choices.empty() &&
          std::find(s->choices.begin(), s->choices.end(), v.get<std::string>()) == s->choices.end()) {
        std::vector<std::string> shown = s->choices;  // an empty choice (none) shows as ""
        for (auto& c : shown)
          if (c.empty()) c = "\"\"";
        throw bad("one of " + join_names(shown));
      }
    } else if (s->type == "number_list") {
      // Empty is allowed only where it is the default (none, as in checkpoint_at = {}).
      if (!v.is_array() || (v.empty() && !s->default_value.empty())) throw bad("a non-empty list of numbers");
      for (auto& e : v)
        if (!e.is_number() || !std::isfinite(e.get<double>())) throw bad("a list of finite numbers");
    } else if (s->type == "int_list") {
      if (!v.is_array() || (v.empty() && !s->default_value.empty())) throw bad("a non-empty list of integers");
      for (auto& e : v) {
        if (e.is_number_float() && std::floor(e.get<double>()) == e.get<double>() && std::fabs(e.get<double>()) < 9.2e18)
          e = static_cast<long long>(e.get<double>());
        if (!e.is_number_integer()) throw bad("a list of integers");
      }
    } else if (s->type == "table") {
      if (!v.is_object() && !v.is_null()) throw bad("a table of name = value pairs");
    } else if (s->type == "list") {
      if (!v.is_array() && !v.is_null()) throw bad("a list");
    } else if (s->type == "strings") {
      bool ok = v.is_string() || (v.is_array() && !v.empty());
      if (v.is_array())
        for (const auto& e : v) ok = ok && e.is_string();
      if (!ok) throw bad("a string or a non-empty list of strings");
    }
    const auto in_range = [&](const Json& n, const std::string& what) {
      const double d = n.get<double>();
      std::ostringstream range;
      if (s->min && d < *s->min) range << ">= " << *s->min;
      if (s->max && d > *s->max) range << "<= " << *s->max;
      if (!range.str().empty()) throw bad(what + range.str());
    };
    if (v.is_number()) in_range(v, "");
    if (v.is_array() && (s->type == "number_list" || s->type == "int_list"))
      for (const auto& e : v) in_range(e, "a list of numbers each ");
    out[key] = v;
  }
  return out;
}

Json OptionSchema::to_json() const {
  Json arr = Json::array();
  for (const auto& s : specs_) {
    Json o = {{"name", s.name}, {"type", s.type}, {"default", s.default_value},
              {"description", s.description}};
    if (s.min) o["min"] = *s.min;
    if (s.max) o["max"] = *s.max;
    if (!s.choices.empty()) o["choices"] = s.choices;
    if (s.default_was) o["default_was"] = *s.default_was;
    arr.push_back(o);
  }
  return arr;
}

OptionSchema OptionSchema::from_json(const Json& j) {
  OptionSchema schema;
  for (const auto& o : j) {
    OptionSpec s;
    s.name = o.at("name").get<std::string>();
    s.type = o.at("type").get<std::string>();
    s.default_value = o.at("default");
    s.description = o.value("description", "");
    if (o.contains("min")) s.min = o["min"].get<double>();
    if (o.contains("max")) s.max = o["max"].get<double>();
    if (o.contains("choices")) s.choices = o["choices"].get<std::vector<std::string>>();
    if (o.contains("default_was")) s.default_was = o["default_was"];
    schema.specs_.push_back(std::move(s));
  }
  return schema;
}

}  // namespace orrery
