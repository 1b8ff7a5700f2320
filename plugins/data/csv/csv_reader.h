#pragma once
// One CSV file streamed into series: the header and the first rows choose the layout (which
// columns are times, ids, values), then every row is parsed and routed to its series.
#include <ostream>
#include <string>

#include "cache.h"
#include "orrery/interrupt.h"
#include "orrery/json.h"

namespace orrery::data {

// Errors name file:line and the column: a row of the wrong width, a non-numeric value, a
// timestamp that does not parse, a repeated time in a series, a file without data rows.
BuildResult read_csv(const std::string& path, const Json& options, std::ostream& out, const std::string& scratch,
                     const Interrupt* interrupt = nullptr);

}  // namespace orrery::data
