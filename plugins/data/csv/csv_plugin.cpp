// The csv data plugin: series from CSV files of any size, wide or long, with times (gaps
// filled as unobserved steps) or without, cached as float32 and sampled by memory map.
// The format-neutral parts (layout, cache, holdout, sampling) are plugins/data/common.
#include "csv_reader.h"
#include "file_source.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

OptionSchema schema() {
  return data::file_source_schema("a CSV", "csv")
      .integer("chunk_bytes", 1 << 20, "bytes read from a file at a time (a test knob: small chunks cut rows "
                                       "anywhere)", 1, 1 << 30);
}

std::unique_ptr<DataSource> make(const Json& options, const DataContext& context) {
  static const data::FileFormat format{"csv", data::read_csv, {}};
  return data::make_file_source(options, context, format);
}

}  // namespace

ORRERY_PLUGIN(data, "csv", "0.1.0",
              "Series from CSV files (wide or long, glob patterns, any size): gaps in time filled as unobserved, "
              "cached as float32, a stable validation holdout",
              schema, make)
