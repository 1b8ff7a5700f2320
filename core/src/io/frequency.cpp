#include "orrery/frequency.h"

#include <cctype>
#include <cmath>
#include <map>

#include "orrery/error.h"

namespace orrery {

Frequency Frequency::parse(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  Frequency f;
  if (i > 0) f.multiple = std::stoll(text.substr(0, i));
  std::string name = text.substr(i);
  if (auto dash = name.find('-'); dash != std::string::npos) name = name.substr(0, dash);  // W-SUN, Q-DEC
  static const std::map<std::string, std::string> aliases = {
      {"S", "S"}, {"s", "S"}, {"T", "T"}, {"min", "T"}, {"H", "H"}, {"h", "H"}, {"D", "D"},
      {"B", "B"}, {"W", "W"}, {"M", "M"}, {"ME", "M"}, {"MS", "M"}, {"Q", "Q"}, {"QE", "Q"},
      {"QS", "Q"}, {"A", "A"}, {"Y", "A"}, {"YE", "A"}, {"AS", "A"}, {"YS", "A"}};
  auto it = aliases.find(name);
  if (it == aliases.end() || f.multiple < 1)
    throw Error("unknown frequency '" + text + "' (expected e.g. 10S, 5T, H, D, B, W, M, Q or A)");
  f.base = it->second;
  return f;
}

std::string Frequency::str() const { return (multiple == 1 ? "" : std::to_string(multiple)) + base; }

Term parse_term(const std::string& text) {
  if (text == "short") return Term::short_term;
  if (text == "medium") return Term::medium_term;
  if (text == "long") return Term::long_term;
  throw Error("unknown term '" + text + "' (expected short, medium or long)");
}

const char* term_name(Term t) {
  switch (t) {
    case Term::short_term: return "short";
    case Term::medium_term: return "medium";
    case Term::long_term: return "long";
  }
  return "?";
}

int64_t seasonality(const Frequency& f) {
  static const std::map<std::string, int64_t> base = {{"S", 3600}, {"T", 1440}, {"H", 24}, {"B", 5},
                                                      {"M", 12},   {"Q", 4},    {"D", 1},  {"W", 1}, {"A", 1}};
  const int64_t m = base.at(f.base);
  return m % f.multiple == 0 ? m / f.multiple : 1;
}

bool has_term(const Frequency& f, Term term) {
  return term == Term::short_term || f.base == "H" || f.base == "T" || f.base == "S";
}

int64_t prediction_length(const Frequency& f, Term term) {
  if (!has_term(f, term))
    throw Error(std::string("the ") + term_name(term) + " term is defined for hourly and faster data only (GIFT-Eval), not " +
                f.str());
  static const std::map<std::string, int64_t> length = {{"S", 60}, {"T", 48}, {"H", 48}, {"D", 30}, {"B", 30},
                                                        {"W", 8},  {"M", 12}, {"Q", 8},  {"A", 6}};
  const int64_t multiplier = term == Term::short_term ? 1 : term == Term::medium_term ? 10 : 15;
  return length.at(f.base) * multiplier;
}

int64_t test_windows(int64_t shortest_series, int64_t prediction_length) {
  const double w = std::ceil(0.1 * static_cast<double>(shortest_series) / static_cast<double>(prediction_length));
  return std::min<int64_t>(std::max<int64_t>(1, static_cast<int64_t>(w)), 20);
}

}  // namespace orrery
