#pragma once
// A data source over series files (csv, parquet): the options they share, file patterns, the
// cache, the validation holdout and window sampling. A format plugin supplies only the reader
// that streams one file into a SeriesBuilder.
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "cache.h"
#include "orrery/data_source.h"
#include "orrery/options.h"

namespace orrery::data {

struct FileFormat {
  std::string name;  // "csv": the plugin, in messages and cache keys
  // Reads `path` into the cache's values (`out`), with the source's options; `scratch` is a
  // writable folder for temporaries. Checks `interrupt` (may be null) as it goes: a large file
  // takes minutes.
  std::function<BuildResult(const std::string& path, const Json& options, std::ostream& out, const std::string& scratch,
                            const Interrupt* interrupt)>
      read;
  // The format's own options that change what a file reads as (part of its cache key).
  std::vector<std::string> content_options;
};

// files, layout, timestamp, timestamp_format, frequency, id, value, columns, multivariate,
// shard_files, holdout, cache_dir, buffer_bytes.
// `kind_of_file`: "a CSV"; `extension`: "csv", for the docs.
OptionSchema file_source_schema(const std::string& kind_of_file, const std::string& extension);

std::unique_ptr<DataSource> make_file_source(const Json& options, const DataContext& context, const FileFormat& format);

// Paths from a pattern (glob(3) with {a,b} braces and ~) or a list of them, each pattern's
// matches sorted, repeats dropped; a pattern matching nothing is an error naming it.
std::vector<std::string> expand_files(const Json& files, const std::string& plugin);

}  // namespace orrery::data
