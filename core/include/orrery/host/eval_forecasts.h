#pragma once
// eval_forecasts.jsonl, which `orrery eval` writes beside eval.json and the dashboard and `orrery plot`
// read: a header line {"orrery_eval_forecasts": VERSION, "split", "levels", "forecasters",
// "normaliser", "windows"}, then one line per window {"dataset", "frequency", "term", "series",
// "start", "season", "history" (its last steps), "actual", "forecasts": {name: [[level][step]]},
// "scores": {name: [MASE, CRPS]}}, values at 6 significant digits, null where missing. Plain JSON:
// no torch, so the dashboard's libraries read it too.

namespace orrery {

inline constexpr int kEvalForecastsVersion = 1;  // a reader refuses another, naming both
inline constexpr const char* kEvalForecastsFile = "eval_forecasts.jsonl";

}  // namespace orrery
