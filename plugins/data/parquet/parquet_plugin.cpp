// The parquet data plugin: series from Parquet and Arrow IPC (Feather v2) files through the
// Arrow C++ of the pyarrow wheel, read a record batch at a time, with the csv plugin's layouts,
// cache, holdout and sampling (plugins/data/common).
#include "arrow_reader.h"
#include "file_source.h"
#include "orrery/plugin.h"

namespace {
using namespace orrery;

OptionSchema schema() {
  return data::file_source_schema("a Parquet or Arrow IPC (Feather v2)", "parquet")
      .integer("batch_rows", 65536, "rows read from a Parquet file at a time (a test knob)", 1, 1 << 30);
}

std::unique_ptr<DataSource> make(const Json& options, const DataContext& context) {
  static const data::FileFormat format{"parquet", data::read_arrow_file, {}};
  return data::make_file_source(options, context, format);
}

}  // namespace

ORRERY_PLUGIN(data, "parquet", "0.1.0",
              "Series from Parquet and Arrow IPC files (wide or long, glob patterns, any size), read by record "
              "batch, cached as float32, a stable validation holdout",
              schema, make)
