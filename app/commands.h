#pragma once
// The `orrery` program's commands that live outside main.cpp, and the helpers they share.
#include <cstdint>
#include <string>
#include <vector>

#include "orrery/host/lua_session.h"
#include "orrery/model_spec.h"

namespace orrery {

bool wants_help(const std::vector<std::string>& args);
// A whole number given to `flag`, or an error naming both.
int64_t parse_whole_number(const std::string& flag, const std::string& value);
// "a, b,,c" -> {"a", "b", "c"}: a flag's list of names, spaces around each trimmed.
std::vector<std::string> comma_list(const std::string& value);
// The Box-Cox flags every forecasting command takes: --box-cox (each series' transform),
// --box-cox-check (kept per series by its own check) and --no-box-cox, and --box-cox-average or
// --no-box-cox-average (ForecastOptions::box_cox_average), read into an options struct's fields;
// the defaults are inference_defaults.h's. Returns false for any other argument. Two flags that
// ask for different forecasts are refused, naming both.
struct BoxCoxFlags {
  std::string given;          // the transform's flag read; "" = the default
  std::string average_given;  // the average's flag read; "" = the default
  bool read(const std::string& command, const std::string& arg, bool& box_cox, bool& check, bool& average);
};
// A plugin given to `flag`: its name, or a choice as JSON {"name": ..., "options": {...}}.
PluginSpec parse_plugin_choice(const std::string& flag, const std::string& value);

int cmd_bench(const std::vector<std::string>& args);
int cmd_launch(const std::vector<std::string>& args);  // launch.cpp
// Runs `orrery ARGS...` as n ranks of one job on this machine, with the variables torchrun sets
// (port 0: a free one; timeout: ORRERY_DIST_TIMEOUT, "" = the default). The first rank that
// fails stops the others; returns 0 or its status.
int run_ranks(int64_t n, int port, const std::string& timeout, const std::vector<std::string>& orrery_args);
int cmd_eval(const std::vector<std::string>& args);   // eval.cpp
int cmd_bench_data(const std::vector<std::string>& args);  // bench_data.cpp
int cmd_bench_train(const std::vector<std::string>& args);  // bench_train.cpp
int cmd_bench_generate(const std::vector<std::string>& args);  // bench_generate.cpp
// The Lua libraries the program adds to the core's `orrery` table (app/ui_commands.cpp).
std::vector<LuaLibrary> program_lua_libraries();
int cmd_ui(const std::vector<std::string>& args);    // app/ui_commands.cpp
int cmd_new(const std::vector<std::string>& args);   // app/new_plugin.cpp
int cmd_export(const std::vector<std::string>& args);  // app/export.cpp
int cmd_plot(const std::vector<std::string>& args);

}  // namespace orrery
