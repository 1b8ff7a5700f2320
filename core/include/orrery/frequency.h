#pragma once
// GIFT-Eval's per-frequency conventions (SalesforceAIResearch/gift-eval, src/gift_eval/data.py,
// and gluonts' get_seasonality), as one table: a frequency string such as "5T" or "M" gives
// the seasonality m of the MASE scale and the seasonal-naive baseline, the prediction length
// of each term, and the number of non-overlapping test windows.
#include <cstdint>
#include <string>

namespace orrery {

// A pandas-style frequency: a multiple and a base, "10S", "5T", "H", "D", "B", "W", "M", "Q",
// "A". Newer pandas aliases (min, h, s, ME, QE, Y, YE) and anchors ("W-SUN", "Q-DEC", "MS")
// are read as GIFT-Eval normalises them.
struct Frequency {
  std::string base;      // S, T, H, D, B, W, M, Q or A
  int64_t multiple = 1;
  static Frequency parse(const std::string& text);  // throws naming the text when unknown
  std::string str() const;                          // "5T", "M"
};

enum class Term { short_term, medium_term, long_term };
Term parse_term(const std::string& text);  // "short", "medium", "long"
const char* term_name(Term t);

// gluonts get_seasonality: the base's period (S 3600, T 1440, H 24, B 5, M 12, Q 4; D, W, A 1)
// divided by the multiple when it divides exactly, else 1.
int64_t seasonality(const Frequency& f);

// Base prediction length (M 12, W 8, D 30, H 48, T 48, S 60; A 6 and Q 8 from GIFT-Eval's
// M4 table, the only one that has them; B as D) times the term's multiplier (1, 10, 15).
// Medium and long terms exist only for high frequencies (H, T, S), as in GIFT-Eval: asking
// for them at another frequency is an error.
int64_t prediction_length(const Frequency& f, Term term);
bool has_term(const Frequency& f, Term term);

// min(max(1, ceil(0.1 * shortest series / prediction length)), 20).
int64_t test_windows(int64_t shortest_series, int64_t prediction_length);

}  // namespace orrery
