#include "file_source.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <cstdio>
#include <optional>
#include <set>

#include "holdout.h"
#include "layout.h"
#include "mapped_file.h"
#include "orrery/error.h"
#include "orrery/frequency.h"
#include "orrery/input_file.h"
#include "orrery/utf8.h"
#include "sampler.h"

namespace fs = std::filesystem;

namespace orrery::data {
namespace {

// The source's static covariates, by name: a numeric column as itself, a categorical one as
// "column=category" for each category any of its files holds. Each series' values are put in
// that order, 0 for a category its file lacks (one-hot: it is not that category).
std::vector<std::string> align_statics(const std::vector<std::string>& columns, std::vector<CacheEntry>& entries) {
  std::vector<std::set<std::string>> categories(columns.size());
  for (const auto& e : entries)
    for (size_t c = 0; c < columns.size() && c < e.static_categories.size(); ++c)
      categories[c].insert(e.static_categories[c].begin(), e.static_categories[c].end());
  std::vector<std::string> names;
  std::vector<size_t> first;  // each column's first name
  for (size_t c = 0; c < columns.size(); ++c) {
    first.push_back(names.size());
    if (categories[c].empty()) names.push_back(columns[c]);
    for (const auto& category : categories[c]) names.push_back(columns[c] + "=" + category);
  }
  for (auto& e : entries) {
    std::vector<size_t> slot;  // each of the file's values' place among `names`
    for (size_t c = 0; c < columns.size(); ++c) {
      const auto& mine = c < e.static_categories.size() ? e.static_categories[c] : std::vector<std::string>{};
      if (std::set<std::string>(mine.begin(), mine.end()).size() != mine.size())  // two read as one text
        throw Error(e.source + ": column " + quote_input(columns[c]) + " holds two categories that read as the same "
                    "text (a non-UTF-8 byte and its \\xNN spelling): rename one");
      if (mine.empty()) slot.push_back(first[c]);
      for (const auto& category : mine)
        slot.push_back(first[c] + static_cast<size_t>(std::distance(categories[c].begin(), categories[c].find(category))));
    }
    for (auto& s : e.series) {
      if (s.statics.size() != slot.size())
        throw Error(e.source + ": its cache entry holds " + std::to_string(s.statics.size()) + " static covariate "
                    "values for series " + quote_input(s.name) + " where its columns make " +
                    std::to_string(slot.size()) + "; delete " + e.index_path + " to rebuild it");
      std::vector<double> aligned(names.size(), 0.0);
      for (size_t k = 0; k < slot.size(); ++k) aligned[slot[k]] = s.statics[k];
      s.statics = std::move(aligned);
    }
  }
  return names;
}

class FileSource final : public DataSource {
 public:
  FileSource(const Json& o, const DataContext& ctx, const FileFormat& format) : split_(ctx.split) {
    files_ = expand_files(o["files"], format.name);
    if (o.value("shard_files", false) && ctx.world_size > 1) {
      // Rank r of W reads files r, r + W, ...: each builds and maps only its share.
      if (static_cast<int64_t>(files_.size()) < ctx.world_size)
        throw Error(format.name + ": shard_files gives each of the " + std::to_string(ctx.world_size) +
                    " ranks its own files, but there are only " + std::to_string(files_.size()) +
                    ": give at least as many files as ranks, or turn shard_files off");
      std::vector<std::string> mine;
      for (size_t i = static_cast<size_t>(ctx.rank); i < files_.size(); i += static_cast<size_t>(ctx.world_size))
        mine.push_back(files_[i]);
      files_ = std::move(mine);
    }
    folder_ = cache_folder(o.value("cache_dir", ""), files_.front());
    const LayoutOptions layout = LayoutOptions::from_json(o);
    if (!layout.frequency.empty()) Frequency::parse(layout.frequency);  // a typo fails before any reading
    Json content = {{"format", format.name}, {"layout", layout.to_json()}};
    for (const auto& name : format.content_options) content[name] = o[name];
    for (const auto& file : files_) {
      entries_.push_back(cached(folder_, file, content, [&](std::ostream& out, const std::string& scratch) {
        return format.read(file, o, out, scratch, ctx.interrupt);
      }));
      maps_.emplace_back(entries_.back().values_path);
      check_mapping(entries_.back(), maps_.back());
    }
    statics_ = align_statics(layout.static_covariates, entries_);  // before regions copy them

    int64_t variates = 1;
    std::map<std::string, int64_t> frequencies;
    for (const auto& e : entries_)
      for (const auto& s : e.series) {
        variates = std::max(variates, s.variates);
        series_ += 1;
        steps_ += s.length;
        if (!s.frequency.empty()) frequencies[s.frequency] += 1;
      }
    for (const auto& [f, n] : frequencies) frequencies_[f] = n;
    // A season only when the whole source agrees on one frequency.
    if (frequencies.size() == 1) season_ = seasonality(Frequency::parse(frequencies.begin()->first));
    const double holdout = holdout_ = o.value("holdout", 0.1);
    const int64_t exclude_last = o.value("exclude_last", int64_t{0});
    std::vector<Region> regions = split_regions(entries_, maps_, holdout, split_, summary_, exclude_last);
    if (regions.empty())
      throw Error(format.name + ": no series for the " + split_name() + " split in " + describe_files() + " (" +
                  why_empty(holdout, exclude_last) + ")");
    for (const auto& r : regions) longest_ = std::max(longest_, r.hi - r.lo);
    past_ = static_cast<int64_t>(layout.past_covariates.size());
    future_ = static_cast<int64_t>(layout.future_covariates.size());
    sampler_ = std::make_unique<WindowSampler>(std::move(regions), variates, season_, mix_seed(ctx.seed, 0),
                                               past_ + future_ > 0,  // not the rank: see synthetic
                                               static_cast<int64_t>(statics_.size()));
    variates_ = variates;
  }

  Batch sample(const SampleRequest& r) const override { return sampler_->sample(r); }
  std::optional<int64_t> longest_series() const override { return longest_; }
  std::vector<std::string> static_covariates() const override { return statics_; }

  std::vector<StoredSeries> stored_series() const override {
    std::vector<StoredSeries> out;
    for (size_t f = 0; f < entries_.size(); ++f)
      for (const auto& s : entries_[f].series) {
        StoredSeries o{s.name, s.columns, s.frequency, {}, {}, s.statics};
        const float* data = maps_[f].floats() + s.offset;
        for (int64_t v = 0; v < s.variates; ++v) o.values.emplace_back(data + v * s.length, data + (v + 1) * s.length);
        if (past_ + future_ > 0)
          for (int64_t v = 0; v < s.variates; ++v)
            o.roles.push_back(static_cast<int64_t>(v < s.variates - s.past - s.future ? VariateRole::target
                                                   : v < s.variates - s.future          ? VariateRole::past
                                                                                        : VariateRole::future));
        out.push_back(std::move(o));
      }
    return out;
  }

  Json describe() const override {
    int64_t built = 0, rows = 0, dropped = 0;
    for (const auto& e : entries_) built += !e.reused, rows += e.rows, dropped += e.dropped;
    Json files = Json::array();  // file names as JSON text holds them (non-UTF-8 bytes as \xNN)
    for (const auto& f : files_) files.push_back(valid_utf8(f));
    Json j = {{"files", files},      {"series", series_},       {"steps", steps_}, {"rows", rows},
              {"variates", variates_}, {"season", season_},       {"cache", folder_},
              {"cache_built", built}, {"cache_reused", static_cast<int64_t>(entries_.size()) - built},
              {"split", split_name()}, {"split_series", summary_.series}, {"split_steps", summary_.steps},
              {"time_split_files", summary_.time_split_files}, {"holdout", holdout_}, {"dropped_series", dropped},
              {"past_covariates", past_}, {"future_covariates", future_}};
    if (!statics_.empty()) j["static_covariates"] = statics_;
    j["frequency"] = frequencies_.size() == 1 ? Json(frequencies_.begin().key()) : Json(nullptr);
    if (frequencies_.size() > 1) j["frequencies"] = frequencies_;
    return j;
  }

 private:
  double holdout_ = 0.1;
  std::string split_name() const { return split_ == Split::validation ? "validation" : "train"; }
  // Why a split has no series, in the terms of the options that decided it.
  std::string why_empty(double holdout, int64_t exclude_last) const {
    int64_t dropped = 0, longest = 0;
    for (const auto& e : entries_) {
      dropped += e.dropped;
      for (const auto& s : e.series) longest = std::max(longest, s.length);
    }
    const auto number = [](double x) {
      char text[32];
      std::snprintf(text, sizeof text, "%g", x);
      return std::string(text);
    };
    if (series_ == 0)
      return dropped > 0 ? "no series at all: the " + std::to_string(dropped) + " found have no observed value, only "
                           "missing markers or empty fields"
                         : "no series at all";
    const std::string lengths = "the longest series has " + std::to_string(longest) + " step" + (longest == 1 ? "" : "s");
    if (exclude_last >= longest)
      return "exclude_last = " + std::to_string(exclude_last) + " keeps back every step: " + lengths;
    if (split_ == Split::validation && holdout == 0) return "holdout = 0 holds out nothing";
    if (split_ == Split::train && holdout == 1) return "every series is held out for validation: holdout = 1";
    return lengths + (exclude_last > 0 ? " (" + std::to_string(longest - exclude_last) + " after exclude_last = " +
                                             std::to_string(exclude_last) + ")" : "") +
           ", too few to split in time between training and validation (holdout = " + number(holdout) +
           " of each series' steps, at least one, go to validation)";
  }
  std::string describe_files() const {
    return files_.size() == 1 ? files_.front() : std::to_string(files_.size()) + " files";
  }
  // A values file shorter than its index says (damaged by hand) would make windows read past it.
  static void check_mapping(const CacheEntry& e, const MappedFile& m) {
    for (const auto& s : e.series)
      if ((s.offset + static_cast<uint64_t>(s.variates * s.length)) * sizeof(float) > m.size())
        throw Error("the cache " + e.values_path + " is shorter than its index " + e.index_path +
                    " says: delete both to rebuild them");
  }

  Split split_;
  std::vector<std::string> files_;
  std::string folder_;
  std::vector<CacheEntry> entries_;
  std::vector<MappedFile> maps_;
  Json frequencies_ = Json::object();
  int64_t series_ = 0, steps_ = 0, season_ = 1, variates_ = 1;
  int64_t past_ = 0, future_ = 0;  // covariate columns named (each series counts the variates they became)
  std::vector<std::string> statics_;  // static covariates, by name (align_statics)
  int64_t longest_ = 0;  // steps of the longest region the split draws
  SplitSummary summary_;
  std::unique_ptr<WindowSampler> sampler_;
};

}  // namespace

std::vector<std::string> expand_files(const Json& files, const std::string& plugin) {
  std::vector<std::string> patterns;
  if (files.is_array()) {
    for (const auto& f : files) patterns.push_back(f.get<std::string>());
  } else if (files.is_string() && !files.get<std::string>().empty()) {
    patterns.push_back(files.get<std::string>());
  }
  if (patterns.empty())
    throw Error("data plugin '" + plugin + "': option files is required: a file, a glob pattern such as \"data/*.csv\", or braces \"{a.csv,b.csv}\"");
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& pattern : patterns) {
    glob_t g{};
    const int rc = ::glob(pattern.c_str(), GLOB_BRACE | GLOB_TILDE, nullptr, &g);
    std::vector<std::string> found(g.gl_pathv, g.gl_pathv + (rc == 0 ? g.gl_pathc : 0));
    ::globfree(&g);
    if (rc == GLOB_NOMATCH || (rc == 0 && found.empty())) {
      const bool literal = pattern.find_first_of("*?[{~") == std::string::npos;
      throw Error(literal ? "no such file " + quote_input(pattern, 300) : "no file matches " + quote_input(pattern, 300));
    }
    if (rc != 0) throw Error("cannot list the files of " + quote_input(pattern, 300));
    std::sort(found.begin(), found.end());
    for (auto& f : found) {
      require_input_file(f, "a data file (files = " + quote_input(pattern, 300) + ")");
      if (seen.insert(f).second) out.push_back(std::move(f));
    }
  }
  return out;
}

OptionSchema file_source_schema(const std::string& kind_of_file, const std::string& extension) {
  const std::string e = "." + extension;
  return OptionSchema{}
      .strings("files", "", kind_of_file + " file, glob pattern such as \"data/*" + e + "\" (sorted) or a list of them; braces list "
                       "several: \"{a" + e + ",more/*" + e + "}\"")
      .string("layout", "auto", "wide: a column per series; long: rows of (id, time, values); auto: long when there "
                                "is an id column", {"auto", "wide", "long"})
      .string("timestamp", "", "time column; default: one named time, timestamp, date, datetime or ds, if any; "
                               "\"none\": rows in file order")
      .string("timestamp_format", "iso", "iso (2024-01-31, 2024-01-31T12:00:00Z, ...), unix (seconds) or year "
                                         "(R's fractional years, 1949.0833 = February 1949)", {"iso", "unix", "year"})
      .string("frequency", "", "the series' frequency (10S, 5T, H, D, B, W, M, Q, A...); default: inferred per "
                               "series from its times. Missing times become unobserved steps")
      .string("id", "", "long layout: the series id column; default: one named id, item_id or series")
      .strings("value", "", "long layout: value column(s), a list or comma-separated; default: every other numeric column")
      .strings("columns", "", "wide layout: the series columns, a list or comma-separated; default: every numeric column but "
                             "the time")
      .boolean("multivariate", false, "wide: a file's columns form one series of several variates; long: an id's "
                                      "value columns do")
      .strings("past_covariates", "", "columns known up to the forecast's start (a price so far), a list or "
                                      "comma-separated: each series' rows after its targets (multivariate; "
                                      "docs/covariates.md)")
      .strings("future_covariates", "", "columns known over the horizon too (a calendar, a planned promotion): "
                                        "each series' last rows")
      .strings("categorical", "", "covariate columns whose cells are categories (a holiday's name, a weekday, a "
                                  "store's format): each enters as one 0/1 row (static: one 0/1 static covariate "
                                  "\"column=category\") per category in its file, at most 64")
      .strings("static_covariates", "", "columns that hold one value per series (a store's size, a "
                                        "product's price band), a list or comma-separated: each series' static "
                                        "covariates, for a model that names the same ones (docs/covariates.md)")
      .boolean("shard_files", false, "data parallel: rank r of W reads only files r, r + W, ... (at least W "
                                     "files), so each builds and maps only its share; the ranks then train on "
                                     "different series, and the run no longer equals one process's")
      .number("holdout", 0.1, "share of each file's series held out for the validation split, chosen by a stable "
                              "hash of file and series name; a file where that picks none (or all) is split in time "
                              "instead: validation draws the last share of each series' steps", 0.0, 1.0)
      .integer("exclude_last", 0, "steps at the end of every series that neither split draws (kept for a later "
                                  "evaluation, as scripts/finetune.lua does)", 0)
      .string("cache_dir", "", "where files are cached as float32 series; default: .orrery-cache beside the first "
                               "file, else $XDG_CACHE_HOME/orrery")
      .integer("buffer_bytes", 64 << 20, "memory for rows before they spill to a temporary file while a file is "
                                         "read (a test knob)", 1);
}

std::unique_ptr<DataSource> make_file_source(const Json& options, const DataContext& context, const FileFormat& format) {
  return std::make_unique<FileSource>(options, context, format);
}

}  // namespace orrery::data
