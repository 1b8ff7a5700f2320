#pragma once
// Plugin options: each plugin declares a schema (name, type, default, range, description);
// the host validates user options against it before the plugin sees them, so a plugin can
// read its options without checks, and a typo is reported with the plugin's name.
#include <optional>
#include <string>
#include <vector>

#include "orrery/json.h"

namespace orrery {

struct OptionSpec {
  std::string name;
  // "int", "number", "bool", "string", "number_list", "int_list", "table", "list", "strings", and
  // "path" (a string naming a file or folder; whoever reads it checks that it exists)
  std::string type;
  Json default_value;
  std::string description;
  std::optional<double> min, max;
  std::vector<std::string> choices;  // for "string"; empty = any
  // The default before it changed, when it did: a saved spec without the option meant this, and
  // every spec a model keeps names the option, so a checkpoint rebuilds as it was trained.
  std::optional<Json> default_was;
};

// A `strings` option's value as names: "a, b" -> {"a", "b"} (each trimmed of spaces and tabs,
// empty ones skipped); a JSON list is taken as it is.
std::vector<std::string> string_list(const Json& value);
// Names as a message lists them: {"a", "b"} -> "a, b".
std::string join_names(const std::vector<std::string>& names);

class OptionSchema {
 public:
  OptionSchema& integer(std::string name, long long def, std::string doc,
                        std::optional<double> min = {}, std::optional<double> max = {});
  OptionSchema& number(std::string name, double def, std::string doc,
                       std::optional<double> min = {}, std::optional<double> max = {});
  OptionSchema& boolean(std::string name, bool def, std::string doc);
  OptionSchema& string(std::string name, std::string def, std::string doc,
                       std::vector<std::string> choices = {});
  OptionSchema& number_list(std::string name, std::vector<double> def, std::string doc);
  // A table of options of its own (e.g. a schedule), checked by whoever reads it; null default.
  OptionSchema& table(std::string name, std::string doc);
  // A string or a list of strings (files, column names).
  OptionSchema& strings(std::string name, std::string def, std::string doc);
  // A list of anything (e.g. a mixture's sources), checked by whoever reads it; null default.
  OptionSchema& list(std::string name, std::string doc);
  // The last option's default was `before` until this version changed it (OptionSpec::default_was).
  OptionSchema& default_was(Json before);
  // One option as it is (a script's declaration builds its schema this way).
  OptionSchema& add(OptionSpec spec);
  // Every option of `other`, after this schema's own.
  OptionSchema& extend(const OptionSchema& other);

  const std::vector<OptionSpec>& specs() const { return specs_; }
  const OptionSpec* find(const std::string& name) const;

  // Returns the options with defaults filled in. `owner` names the plugin in errors, e.g.
  // "architecture plugin 'toto2'". Throws orrery::Error on unknown names, wrong types,
  // non-finite or out-of-range values (a list's range applies to each item). `also_known` are
  // names the caller reads itself (not in `user`): an unknown name is compared against them too,
  // and they are listed in the error. `noun` is what the errors call an option ("argument").
  Json validate(const Json& user, const std::string& owner,
                const std::vector<std::string>& also_known = {}, const std::string& noun = "option") const;

  Json to_json() const;
  static OptionSchema from_json(const Json& j);

 private:
  std::vector<OptionSpec> specs_;
};

// The closest name in `candidates` to `name` (edit distance), or "" when none is close.
std::string closest_name(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace orrery
