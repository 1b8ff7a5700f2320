#pragma once
// Data sources and optimizers as the registry hands them out: every call goes through a guard
// that lets an orrery::Error pass (the plugin's own message for its user) and turns anything
// else it throws, a std::exception or not, into an orrery::Error that names the plugin and its
// file, so no exception crosses the plugin boundary unreported: not from a data worker thread,
// not from an optimizer step. (Architectures, heads and parametrisations run inside the model,
// whose errors name the model's plugins.)
#include <memory>
#include <string>

#include "orrery/data_source.h"
#include "orrery/optimizer.h"
#include "orrery/plugin.h"

namespace orrery {

// The exception in flight (call it inside a catch block), as text: c10 errors without their C++
// backtrace, and a thrown value that is no std::exception said to be one.
std::string current_exception_text();

// Who to name: "data plugin 'csv' (/path/to/data_csv.so)".
std::string plugin_label(const PluginInfo& p);

std::unique_ptr<DataSource> guard_plugin(std::unique_ptr<DataSource> source, const PluginInfo& p);
std::unique_ptr<Optimizer> guard_plugin(std::unique_ptr<Optimizer> optimizer, const PluginInfo& p);

}  // namespace orrery
