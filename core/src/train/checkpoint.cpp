#include "orrery/host/checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/host/file_tree.h"
#include "orrery/host/model.h"
#include "orrery/optimizer.h"
#include "orrery/safetensors.h"

namespace fs = std::filesystem;

namespace orrery {
namespace {

const char* kFiles[] = {"model.safetensors", "optimizer.safetensors"};
// 2: checkpoint.json carries the CRC-32 of its own text (record_crc32).
constexpr const char* kFormat = "orrery-checkpoint-2";

std::array<uint32_t, 256> crc_table() {
  std::array<uint32_t, 256> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    t[i] = c;
  }
  return t;
}

// "step-000000120" for 120: names sort as the steps do.
std::string folder_name(int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "step-%09lld", static_cast<long long>(step));
  return buf;
}

// The step a folder name stands for, or -1 when it is not a checkpoint's name.
int64_t step_of(const std::string& name) {
  if (!name.starts_with("step-") || name.size() < 6) return -1;
  const std::string digits = name.substr(5);
  if (digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoll(digits);
}

// Leftovers of a writer killed mid-way: temporaries and half-removed folders. The run folder is
// locked by its one trainer (run_store.h), so no other process is writing them.
void remove_leftovers(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(".tmp.") || name.starts_with(".old.")) remove_tree(e.path(), ec);
  }
}

void check(bool ok, const std::string& why) {
  if (!ok) throw Error(why);
}

}  // namespace

namespace {
// CRC-32 register `c` after `n` more bytes (start from 0xFFFFFFFF, finish with ~).
uint32_t crc32_update(uint32_t c, const char* bytes, size_t n) {
  static const std::array<uint32_t, 256> table = crc_table();
  for (size_t i = 0; i < n; ++i) c = table[(c ^ static_cast<uint8_t>(bytes[i])) & 0xFF] ^ (c >> 8);
  return c;
}

// checkpoint.json's own check: the CRC-32 of the record's JSON text without it. A record read
// back and dumped again gives the same text (nlohmann sorts keys and round-trips numbers).
uint32_t record_crc32(Json record) {
  record.erase("record_crc32");
  const std::string text = json_text(record);
  return crc32_update(0xFFFFFFFFu, text.data(), text.size()) ^ 0xFFFFFFFFu;
}
}  // namespace

uint32_t file_crc32(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read " + path);
  std::vector<char> buf(1 << 20);
  uint32_t c = 0xFFFFFFFFu;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    c = crc32_update(c, buf.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) throw Error("cannot read " + path);
  return c ^ 0xFFFFFFFFu;
}

std::vector<std::string> list_checkpoints(const std::string& run_dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(run_dir) / "checkpoints", ec)) {
    const int64_t step = step_of(e.path().filename().string());
    if (step >= 0 && e.is_directory(ec)) found.emplace_back(step, e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [step, path] : found) out.push_back(std::move(path));
  return out;
}

std::vector<int64_t> set_aside_checkpoints(const std::string& run_dir, int64_t from) {
  std::vector<int64_t> moved;
  for (const std::string& dir : list_checkpoints(run_dir)) {
    const fs::path p = dir;
    const int64_t step = step_of(p.filename().string());
    if (step < from) continue;
    fs::path to = p.parent_path() / ("diverged-" + p.filename().string());
    std::error_code ec;
    for (int k = 2; fs::exists(to, ec); ++k)  // set aside before, by an earlier divergence
      to = p.parent_path() / ("diverged-" + p.filename().string() + "." + std::to_string(k));
    fs::rename(p, to, ec);
    if (ec) throw Error("cannot set aside the diverged checkpoint " + dir + ": " + ec.message());
    moved.push_back(step);
  }
  if (!moved.empty()) sync_path((fs::path(run_dir) / "checkpoints").string());
  return moved;
}

void write_checkpoint(const std::string& run_dir, const Model& model, const Optimizer& optimizer,
                      const CheckpointRecord& r, int64_t keep) {
  write_checkpoint(run_dir, model, optimizer.state_tensors(), optimizer.counters(), r, keep);
}

void write_checkpoint(const std::string& run_dir, const Model& model, const NamedTensors& optimizer_state,
                      const Json& optimizer_counters, const CheckpointRecord& r, int64_t keep) {
  const TrainState& state = r.state;
  const fs::path root = fs::path(run_dir) / "checkpoints";
  std::error_code ec;
  fs::create_directories(root, ec);
  if (ec) throw Error("cannot create " + root.string() + ": " + ec.message());
  remove_leftovers(root);
  const std::string name = folder_name(state.step);
  const fs::path tmp = root / (".tmp." + name + "." + std::to_string(::getpid()));
  fs::create_directory(tmp, ec);
  if (ec) throw Error("cannot create " + tmp.string() + ": " + ec.message());

  model.save_weights((tmp / kFiles[0]).string());
  NamedTensors opt_state;
  for (const auto& [n, t] : optimizer_state) opt_state.emplace_back(n, t.detach().cpu());
  save_safetensors((tmp / kFiles[1]).string(), opt_state, {{"orrery_optimizer_counters", optimizer_counters.dump()}});
  Json files = Json::object();
  for (const char* f : kFiles) {
    const std::string p = (tmp / f).string();
    files[f] = {{"bytes", static_cast<int64_t>(fs::file_size(p))}, {"crc32", file_crc32(p)}};
  }
  Json record = {{"format", kFormat}, {"step", state.step}, {"state", state.to_json()},
                 {"metrics_bytes", r.metrics_bytes}, {"forecasts_bytes", r.forecasts_bytes},
                 {"threads", at::get_num_threads()}, {"config", r.config}, {"files", files}};
  record["record_crc32"] = record_crc32(record);
  write_file_atomically((tmp / "checkpoint.json").string(), [&](std::ostream& o) { o << record.dump(1) << "\n"; });
  sync_path(tmp.string());

  // Into place: a checkpoint of the same step (a resumed run passing it again) is moved aside
  // first, since a rename cannot replace a folder that has files.
  const fs::path final_dir = root / name;
  const fs::path old = root / (".old." + name + "." + std::to_string(::getpid()));
  if (fs::exists(final_dir, ec)) fs::rename(final_dir, old, ec);
  fs::rename(tmp, final_dir, ec);
  if (ec) throw Error("cannot move the checkpoint into " + final_dir.string() + ": " + ec.message());
  sync_path(root.string());
  remove_tree(old, ec);

  // The newest `keep` stay, and those of keep_steps. A folder is renamed out of the way before it
  // is removed, so a crash mid-removal leaves a leftover, not a damaged checkpoint.
  const std::vector<std::string> all = list_checkpoints(run_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i) {
    if (std::find(r.keep_steps.begin(), r.keep_steps.end(), step_of(fs::path(all[i]).filename().string())) !=
        r.keep_steps.end())
      continue;
    const fs::path gone = root / (".old." + fs::path(all[i]).filename().string());
    fs::rename(all[i], gone, ec);
    if (!ec) remove_tree(gone, ec);
  }
}

namespace {

// The checkpoint in `dir`, its files checked against checkpoint.json; throws saying what is wrong.
Checkpoint read_checked(const std::string& dir) {
  const fs::path d = dir;
  Json record;
  {
    std::ifstream in(d / "checkpoint.json");
    check(static_cast<bool>(in), "no checkpoint.json");
    try {
      record = Json::parse(in);
    } catch (const std::exception& e) {
      throw Error(std::string("checkpoint.json is not valid JSON (") + e.what() + ")");
    }
  }
  check(record.is_object() && record.value("format", "") == kFormat,
        "checkpoint.json has no known format (" + std::string(kFormat) + " expected)");
  // Its numbers decide how much of metrics.jsonl survives a resume: checked like the files.
  check(record.contains("record_crc32") && record["record_crc32"].is_number_unsigned() &&
            record["record_crc32"].get<uint64_t>() == record_crc32(record),
        "checkpoint.json fails its CRC-32 check (edited or damaged)");
  for (const char* f : kFiles) {
    const fs::path p = d / f;
    std::error_code ec;
    const Json& expect = record["files"][f];
    check(fs::exists(p, ec), std::string(f) + " is missing");
    const auto bytes = static_cast<int64_t>(fs::file_size(p, ec));
    check(!ec && expect.is_object() && bytes == expect.value("bytes", int64_t{-1}),
          std::string(f) + " has " + std::to_string(bytes) + " bytes, the checkpoint says " +
              (expect.is_object() ? expect.value("bytes", Json(nullptr)).dump() : "nothing"));
    check(file_crc32(p.string()) == expect.value("crc32", uint32_t{0}), std::string(f) + " fails its CRC-32 check");
  }
  Checkpoint c;
  c.dir = dir;
  try {
    c.state = TrainState::from_json(record.at("state"));
    c.metrics_bytes = record.at("metrics_bytes"), c.forecasts_bytes = record.at("forecasts_bytes");
    c.threads = record.value("threads", 0);
    c.config = record.value("config", Json::object());
  } catch (const Json::exception& e) {
    throw Error(std::string("checkpoint.json is incomplete: ") + e.what());
  }
  check(c.state.step == record.value("step", int64_t{-1}) && step_of(d.filename().string()) == c.state.step,
        "the step in checkpoint.json does not match the folder's name");
  return c;
}

// A checked checkpoint's weights and optimizer state, loaded: from here a mismatch is a changed
// model or optimizer, not damage.
void load_into(const Checkpoint& c, Model& model, Optimizer& optimizer, bool share) {
  const SafetensorsFile weights = load_safetensors((fs::path(c.dir) / kFiles[0]).string());
  const std::string opt_path = (fs::path(c.dir) / kFiles[1]).string();
  const SafetensorsFile opt = load_safetensors(opt_path);
  Json counters;
  try {
    counters = Json::parse(opt.metadata.at("orrery_optimizer_counters"));
  } catch (const std::exception&) {
    throw Error(opt_path + ": no optimizer counters in its metadata");
  }
  model.load_weights(weights, (fs::path(c.dir) / kFiles[0]).string());
  load_optimizer_state(optimizer, opt.tensors, counters, opt_path, share);
}

}  // namespace

std::optional<Checkpoint> load_latest_checkpoint(const std::string& run_dir, Model& model, Optimizer& optimizer,
                                                 const std::function<void(const std::string&)>& warn, bool share) {
  std::vector<std::string> all = list_checkpoints(run_dir);
  std::error_code ec;
  if (fs::is_directory(fs::path(run_dir) / "checkpoints", ec)) remove_leftovers(fs::path(run_dir) / "checkpoints");
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    Checkpoint c;
    try {
      c = read_checked(*it);
    } catch (const Error& e) {
      if (warn) warn("skipping checkpoint " + *it + ": " + e.what());
      continue;
    }
    load_into(c, model, optimizer, share);
    return c;
  }
  return std::nullopt;
}

Checkpoint read_checkpoint_record(const std::string& dir) {
  try {
    return read_checked(dir);
  } catch (const Error& e) {
    throw Error("checkpoint " + dir + ": " + e.what());
  }
}

Checkpoint load_checkpoint(const std::string& dir, Model& model, Optimizer& optimizer, bool share) {
  Checkpoint c = read_checkpoint_record(dir);
  load_into(c, model, optimizer, share);
  return c;
}

void load_optimizer_state(Optimizer& opt, const NamedTensors& saved, const Json& counters, const std::string& file,
                          bool share) {
  const NamedTensors into = opt.state_tensors();
  std::map<std::string, const at::Tensor*> by_name;
  for (const auto& [name, t] : saved) by_name[name] = &t;
  std::vector<std::string> problems;
  for (const auto& [name, t] : into) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      problems.push_back("missing '" + name + "'");
      continue;
    }
    if (it->second->sizes() != t.sizes())
      problems.push_back("'" + name + "' has shape " + c10::str(it->second->sizes()) + ", expected " + c10::str(t.sizes()));
    else if (it->second->scalar_type() != t.scalar_type())
      problems.push_back("'" + name + "' is " + c10::toString(it->second->scalar_type()) + ", expected " +
                         c10::toString(t.scalar_type()));
    by_name.erase(it);
  }
  if (!share)
    for (const auto& [name, t] : by_name) problems.push_back("unexpected '" + name + "'");
  if (!problems.empty()) {
    std::string msg = file + " is not this optimizer's state:";
    for (size_t i = 0; i < problems.size() && i < 6; ++i) msg += (i ? ", " : " ") + problems[i];
    if (problems.size() > 6) msg += " and " + std::to_string(problems.size() - 6) + " more";
    throw Error(msg + " (was the optimizer or the model changed since the checkpoint?)");
  }
  try {
    opt.restore_counters(counters);
  } catch (const std::exception& e) {
    throw Error(file + ": the optimizer's counters do not fit: " + e.what());
  }
  at::NoGradGuard no_grad;
  std::map<std::string, const at::Tensor*> source;
  for (const auto& [name, t] : saved) source[name] = &t;
  for (const auto& [name, t] : into) t.copy_(*source.at(name));
}

}  // namespace orrery
