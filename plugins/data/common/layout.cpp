#include "layout.h"

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>

#include "orrery/error.h"
#include "orrery/one_hot.h"
#include "orrery/options.h"
#include "orrery/utf8.h"

namespace orrery::data {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The header for messages: plain names as they are, others (control or non-UTF-8 bytes) quoted
// and escaped, cut between characters, so the message stays text that JSON can hold.
std::string columns_of(const std::vector<std::string>& header) {
  std::string s;
  for (const auto& h : header) {
    const bool plain = is_utf8(h) && std::none_of(h.begin(), h.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == 0x7F;
    });
    s += (s.empty() ? "" : ", ") + (plain ? h : quote_input(h));
  }
  if (s.size() <= 300) return s;
  size_t cut = 300;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  return s.substr(0, cut) + "...";
}

}  // namespace

LayoutOptions LayoutOptions::from_json(const Json& o) {
  LayoutOptions l;
  l.layout = o.value("layout", "auto");
  l.timestamp = o.value("timestamp", "");
  const std::string format = o.value("timestamp_format", "iso");
  l.time_format = format == "unix" ? TimeFormat::unix_seconds : format == "year" ? TimeFormat::year_fraction : TimeFormat::iso;
  l.frequency = o.value("frequency", "");
  l.id = o.value("id", "");
  if (o.contains("value")) l.value = string_list(o["value"]);
  if (o.contains("columns")) l.columns = string_list(o["columns"]);
  l.multivariate = o.value("multivariate", false);
  if (o.contains("past_covariates")) l.past_covariates = string_list(o["past_covariates"]);
  if (o.contains("future_covariates")) l.future_covariates = string_list(o["future_covariates"]);
  if (o.contains("categorical")) l.categorical = string_list(o["categorical"]);
  if (o.contains("static_covariates")) l.static_covariates = string_list(o["static_covariates"]);
  return l;
}

Json LayoutOptions::to_json() const {
  const char* format = time_format == TimeFormat::unix_seconds ? "unix" : time_format == TimeFormat::year_fraction ? "year" : "iso";
  Json j = {{"layout", layout}, {"timestamp", timestamp}, {"timestamp_format", format}, {"frequency", frequency},
            {"id", id}, {"value", value}, {"columns", columns}, {"multivariate", multivariate}};
  // Only when given: a file read without them keeps the key it had before these options existed.
  if (!past_covariates.empty()) j["past_covariates"] = past_covariates;
  if (!future_covariates.empty()) j["future_covariates"] = future_covariates;
  if (!categorical.empty()) j["categorical"] = categorical;
  if (!static_covariates.empty()) j["static_covariates"] = static_covariates;
  return j;
}

Layout resolve_layout(const std::vector<std::string>& header, const std::function<bool(size_t)>& numeric,
                      const LayoutOptions& o, const std::string& file, const std::function<std::string(size_t)>& text_in) {
  auto find = [&](const std::string& name, const char* option) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return static_cast<int>(i);
    throw Error(file + ": no column " + quote_input(name) + " (option " + option + "); its columns are " +
                columns_of(header));
  };
  auto find_named = [&](std::initializer_list<const char*> names) {
    for (const char* n : names)
      for (size_t i = 0; i < header.size(); ++i)
        if (lower(header[i]) == n) return static_cast<int>(i);
    return -1;
  };
  Layout l;
  l.header = header;
  const bool covariates = !o.past_covariates.empty() || !o.future_covariates.empty();
  l.multivariate = o.multivariate || covariates;
  if (o.timestamp == "none") l.time = -1;
  else l.time = o.timestamp.empty() ? find_named({"time", "timestamp", "date", "datetime", "ds"}) : find(o.timestamp, "timestamp");

  if (o.layout == "wide") {
    if (!o.id.empty()) throw Error(file + ": option id is for the long layout, but layout = \"wide\"");
  } else {
    l.id = o.id.empty() ? find_named({"id", "item_id", "series"}) : find(o.id, "id");
    if (o.layout == "long" && l.id < 0)
      throw Error(file + ": the long layout needs an id column (option id; or one named id, item_id or series); "
                  "its columns are " + columns_of(header));
  }
  l.long_form = l.id >= 0;
  if (l.long_form && !o.columns.empty())
    throw Error(file + ": option columns is for the wide layout; the long layout's value columns are option value");
  if (!l.long_form && !o.value.empty())
    throw Error(file + ": option value is for the long layout (an id column); the wide layout's series are option "
                "columns");
  if (l.id >= 0 && l.id == l.time) throw Error(file + ": column " + quote_input(header[l.id]) + " cannot be both the time and the id");

  const auto& chosen = l.long_form ? o.value : o.columns;
  for (const auto& name : chosen) {
    const int c = find(name, l.long_form ? "value" : "columns");
    if (c == l.time || c == l.id)
      throw Error(file + ": column " + quote_input(name) + " is the " + (c == l.time ? "time" : "id") + " column, not a value column");
    if (std::find(l.values.begin(), l.values.end(), c) != l.values.end())
      throw Error(file + ": column " + quote_input(name) + " is listed twice");
    l.values.push_back(c);
  }
  // Covariate columns: found, not the time or id, not a target too, each once.
  std::vector<int> covariate_columns;
  for (const auto* names : {&o.past_covariates, &o.future_covariates})
    for (const auto& name : *names) {
      const char* option = names == &o.past_covariates ? "past_covariates" : "future_covariates";
      const int c = find(name, option);
      if (c == l.time || c == l.id)
        throw Error(file + ": column " + quote_input(name) + " is the " + (c == l.time ? "time" : "id") +
                    " column, not a covariate (option " + option + ")");
      if (std::find(l.values.begin(), l.values.end(), c) != l.values.end())
        throw Error(file + ": column " + quote_input(name) + " is both a target (option " +
                    (l.long_form ? "value" : "columns") + ") and a covariate (option " + option + ")");
      if (std::find(covariate_columns.begin(), covariate_columns.end(), c) != covariate_columns.end())
        throw Error(file + ": column " + quote_input(name) + " is named twice as a covariate");
      covariate_columns.push_back(c);
    }
  // Static covariate columns: the same checks, and none may be a covariate of the other kinds.
  std::vector<int> static_columns;
  for (const auto& name : o.static_covariates) {
    const int c = find(name, "static_covariates");
    if (c == l.time || c == l.id)
      throw Error(file + ": column " + quote_input(name) + " is the " + (c == l.time ? "time" : "id") +
                  " column, not a static covariate (option static_covariates)");
    if (std::find(l.values.begin(), l.values.end(), c) != l.values.end())
      throw Error(file + ": column " + quote_input(name) + " is both a target (option " +
                  (l.long_form ? "value" : "columns") + ") and a static covariate (option static_covariates)");
    if (std::find(covariate_columns.begin(), covariate_columns.end(), c) != covariate_columns.end())
      throw Error(file + ": column " + quote_input(name) + " is both a covariate over time and a static covariate "
                  "(option static_covariates)");
    if (std::find(static_columns.begin(), static_columns.end(), c) != static_columns.end())
      throw Error(file + ": column " + quote_input(name) + " is named twice as a static covariate");
    static_columns.push_back(c);
  }
  auto is_covariate = [&](int c) {
    return std::find(covariate_columns.begin(), covariate_columns.end(), c) != covariate_columns.end() ||
           std::find(static_columns.begin(), static_columns.end(), c) != static_columns.end();
  };
  if (chosen.empty())
    for (size_t i = 0; i < header.size(); ++i)
      if (static_cast<int>(i) != l.time && static_cast<int>(i) != l.id && numeric(i) && !is_covariate(static_cast<int>(i)))
        l.values.push_back(static_cast<int>(i));
  if ((covariates || !static_columns.empty()) && l.values.empty())
    throw Error(file + ": every value column is a covariate: no target to forecast; its columns are " +
                columns_of(header));
  l.values.insert(l.values.end(), covariate_columns.begin(), covariate_columns.end());
  l.past = o.past_covariates.size(), l.future = o.future_covariates.size();
  l.values.insert(l.values.end(), static_columns.begin(), static_columns.end());
  l.statics = static_columns.size();
  // Categorical columns: covariates (over time or static), each named once.
  l.categorical.assign(l.values.size(), false);
  l.categories.assign(l.values.size(), {});
  const size_t first_covariate = l.values.size() - l.statics - covariate_columns.size();
  for (const auto& name : o.categorical) {
    const int c = find(name, "categorical");
    const auto at = std::find(l.values.begin() + static_cast<std::ptrdiff_t>(first_covariate), l.values.end(), c);
    if (at == l.values.end())
      throw Error(file + ": column " + quote_input(name) + " is named by option categorical but is not a covariate; "
                  "name it in past_covariates, future_covariates or static_covariates too");
    const size_t k = static_cast<size_t>(at - l.values.begin());
    if (l.categorical[k]) throw Error(file + ": column " + quote_input(name) + " is named twice by option categorical");
    l.categorical[k] = true;
  }
  if (l.values.empty()) {
    std::string example;
    for (size_t i = 0; text_in && example.empty() && i < header.size(); ++i)
      if (static_cast<int>(i) != l.time && static_cast<int>(i) != l.id) example = text_in(i);
    throw Error(file + ": no value columns: no numeric column besides the time and id" +
                (example.empty() ? "" : " (" + example + ")") + "; its columns are " + columns_of(header));
  }
  return l;
}

std::vector<std::vector<std::string>> Layout::static_categories() const {
  std::vector<std::vector<std::string>> out;
  for (size_t k = values.size() - statics; k < values.size(); ++k) {
    out.emplace_back();
    for (const auto& c : categories[k]) out.back().push_back(valid_utf8(c));
  }
  return out;
}

bool Layout::any_categorical() const { return std::find(categorical.begin(), categorical.end(), true) != categorical.end(); }

double Layout::category(size_t k, std::string_view cell) const {
  if (cell.empty()) return std::numeric_limits<double>::quiet_NaN();
  const auto& c = categories[k];
  const auto at = std::lower_bound(c.begin(), c.end(), cell);
  // The first pass saw every cell; another one means the file changed between the passes.
  if (at == c.end() || *at != cell)
    throw Error("column " + quote_input(header[values[k]]) + ": the category " + quote_input(cell) +
                " was not there when the file was first read; did the file change while it was read?");
  return static_cast<double>(at - c.begin());
}

CategoryPass::CategoryPass(Layout& layout, const std::string& file) : layout_(layout) {
  for (size_t k = 0; k < layout.values.size(); ++k)
    sets_.emplace_back(file + ": column " + quote_input(layout.header[layout.values[k]]));
}

void CategoryPass::finish() {
  for (size_t k = 0; k < sets_.size(); ++k)
    if (layout_.categorical[k]) layout_.categories[k] = sets_[k].sorted();
}

RowRouter::RowRouter(const Layout& layout, SeriesBuilder& builder, std::string file_stem)
    : layout_(layout), builder_(builder), stem_(std::move(file_stem)) {
  dynamic_ = layout.values.size() - layout.statics;
  for (size_t k = 0; k < dynamic_; ++k) {
    const std::string& name = layout.header[layout.values[k]];
    if (!layout.categorical[k]) variates_.push_back(name);
    for (const auto& c : layout.categories[k]) variates_.push_back(name + "=" + c);
    const size_t first_covariate = dynamic_ - layout.past - layout.future;
    if (k >= first_covariate) (k < first_covariate + layout.past ? past_ : future_) += layout.width(k);
  }
  row_.resize(variates_.size());
  // A categorical static column (a store's format) is one 0/1 static per category, as a
  // categorical covariate over time is one row per category.
  std::vector<std::string> statics;
  for (size_t k = dynamic_; k < layout.values.size(); ++k) {
    const std::string& name = layout.header[layout.values[k]];
    static_slot_.push_back(statics.size());
    if (!layout.categorical[k]) statics.push_back(name);
    for (const auto& c : layout.categories[k]) statics.push_back(name + "=" + c);
  }
  builder_.set_static_columns(std::move(statics));
}

void RowRouter::add_statics(size_t g, int64_t line, const double* values) {
  if (static_slot_.empty()) return;
  if (category_seen_.size() <= g) category_seen_.resize(g + 1, std::vector<std::pair<double, int64_t>>(static_slot_.size(), {-1, 0}));
  for (size_t k = dynamic_; k < layout_.values.size(); ++k) {
    const size_t s = k - dynamic_, slot = static_slot_[s];
    if (!layout_.categorical[k]) {
      builder_.add_static(g, slot, values[k], line);
      continue;
    }
    if (std::isnan(values[k])) continue;  // an empty cell: this row says nothing of the series' category
    auto& [seen, seen_line] = category_seen_[g][s];
    const auto& categories = layout_.categories[k];
    if (seen >= 0 && seen != values[k]) {
      const std::string key = builder_.group_key(g);
      throw Error(builder_.settings().where(line) + ": column " + quote_input(layout_.header[layout_.values[k]]) +
                  " is a static covariate (one category per series), but" +
                  (key.empty() ? "" : " (series " + quote_input(key) + ")") + " it is " +
                  quote_input(categories[static_cast<size_t>(values[k])]) + " here and " +
                  quote_input(categories[static_cast<size_t>(seen)]) + " at " + builder_.settings().line_word + " " +
                  std::to_string(seen_line));
    }
    if (seen < 0) {
      seen = values[k], seen_line = line;
      for (size_t j = 0; j < categories.size(); ++j)
        builder_.add_static(g, slot + j, static_cast<double>(static_cast<size_t>(values[k]) == j), line);
    }
  }
}

void RowRouter::add(std::string_view id, double seconds, int64_t line, const double* values) {
  bool created = false;
  const size_t g = builder_.group(layout_.long_form ? id : std::string_view(), created);
  const size_t n = dynamic_;
  if (created) {
    const std::vector<std::string>& names = variates_;  // one per column unless categorical (then multivariate)
    // The series' name: the id or column; a wide multivariate series is the file's.
    const std::string group_name = layout_.long_form ? std::string(id) : stem_;
    size_t first;
    if (layout_.multivariate) {
      first = builder_.add_series(g, group_name, names, past_, future_);
    } else {
      first = builder_.add_series(g, layout_.long_form ? (n == 1 ? group_name : group_name + "/" + names[0]) : names[0],
                                  {names[0]});
      for (size_t k = 1; k < n; ++k)
        builder_.add_series(g, layout_.long_form ? group_name + "/" + names[k] : names[k], {names[k]});
    }
    first_series_.push_back(first);
  }
  size_t at = 0;  // values[k]'s first variate in row_
  for (size_t k = 0; k < n; ++k) {
    if (layout_.categorical[k]) {  // one 0/1 variate per category; all unobserved where the cell is empty
      const size_t width = layout_.width(k);
      if (!std::isnan(values[k]) && !(values[k] >= 0 && values[k] < static_cast<double>(width)))
        throw Error(builder_.settings().where(line) + ": column " + quote_input(layout_.header[layout_.values[k]]) +
                    ": category index " + std::to_string(values[k]) + " out of range (a reader's defect)");
      for (size_t j = 0; j < width; ++j)
        row_[at + j] = std::isnan(values[k]) ? std::numeric_limits<float>::quiet_NaN()
                                             : static_cast<float>(static_cast<size_t>(values[k]) == j);
      at += width;
      continue;
    }
    // Training data is float32: a value beyond its range would be infinite, one below its
    // smallest normal number (1e-40, 1e-50) a denormal or an exact zero.
    const double a = std::fabs(values[k]);
    if (std::isfinite(a) && (a > FLT_MAX || (a > 0 && a < FLT_MIN))) {
      char text[32];
      std::snprintf(text, sizeof text, "%.9g", values[k]);
      throw Error(builder_.settings().where(line) + ": column " + quote_input(layout_.header[layout_.values[k]]) +
                  ": the value " + text + " is " +
                  (a > FLT_MAX ? "beyond float32's range (+-3.4e38)" : "below float32's smallest normal number (1.2e-38)") +
                  ": rescale the column");
    }
    row_[at++] = static_cast<float>(values[k]);
  }
  add_statics(g, line, values);
  builder_.add_time(g, seconds, line);
  const size_t first = first_series_[g];
  if (layout_.multivariate) {
    builder_.add_values(first, row_.data());
  } else {
    for (size_t k = 0; k < n; ++k) builder_.add_values(first + k, &row_[k]);
  }
}

}  // namespace orrery::data
