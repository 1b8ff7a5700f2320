#pragma once
// One Parquet or Arrow IPC file streamed into series: the schema chooses the layout (typed
// columns: numbers are values, timestamps and dates are times), then each record batch is
// routed row by row to its series, exactly as the csv plugin does with text rows.
#include <ostream>
#include <string>

#include "cache.h"
#include "orrery/interrupt.h"
#include "orrery/json.h"

namespace orrery::data {

// Errors name the file, the row (counted from 1 over the whole file) and the column.
BuildResult read_arrow_file(const std::string& path, const Json& options, std::ostream& out, const std::string& scratch,
                            const Interrupt* interrupt = nullptr);

}  // namespace orrery::data
