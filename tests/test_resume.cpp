// Checkpoints and resume: a run killed at any moment goes on from its newest whole checkpoint
// and ends exactly as if it had never stopped; damaged checkpoints are skipped, changed runs
// refused, optimizer state restored exactly.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <random>
#include <set>

#include "orrery/host/checkpoint.h"
#include "orrery/error.h"
#include "orrery/host/model.h"
#include "orrery/host/registry.h"
#include "orrery/host/routed_optimizer.h"
#include "orrery/host/run_store.h"
#include "support.h"

namespace fs = std::filesystem;
using orrery::Json;

namespace {

// A tiny run with every piece that has state: two optimizers, two data workers, patch masking,
// validation and forecast snapshots. on_step stops it with an error at fail_at.
const char* kScript = R"(
local m = orrery.model{arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 2}, seed = 1}
local run = orrery.train{
  model = m, data = {"synthetic"}, steps = args.steps, batch_size = args.batch or 4, context_length = 64,
  log_every = 1, val_every = 5, checkpoint_every = args.every, name = args.name, runs_dir = args.runs or "runs",
  quiet = true, branch = args.branch, checkpoint_at = args.at and {args.at}, schedule = args.decay and {kind = "wsd", warmup = 1, decay = tonumber(args.decay)},
  data_workers = 2, prefetch = 3,
  optimizer = {{"normuon", lr = 0.01, params = {role = "hidden"}}, {"adamw", lr = 1e-3}},
  on_step = function(ev) if args.fail_at and ev.step >= args.fail_at then error("stopped at step " .. ev.step, 0) end end,
}
m:save(run.run_dir .. "/final.safetensors")
print("finished", run.steps, run.resumed_from)
)";

struct Run {
  std::string dir, script;
  explicit Run(const std::string& name) : dir(test::temp_dir(name)), script(dir + "/run.lua") {
    std::ofstream(script) << kScript;
  }
  test::CommandResult go(const std::string& args) const {
    return test::run_command("cd '" + dir + "' && " + test::orrery_cmd("run run.lua " + args));
  }
  std::string run_dir(const std::string& name) const { return dir + "/runs/" + name; }
};

// The train, val and skip events of a run as "kind step loss" (every digit), in file order.
std::vector<std::string> losses(const std::string& run_dir) {
  std::vector<std::string> out;
  std::ifstream in(run_dir + "/metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const Json e = Json::parse(line);
    const std::string kind = e["event"];
    if (kind == "train" || kind == "val" || kind == "skip") {
      char loss[40];
      std::snprintf(loss, sizeof loss, "%.17g", e.value("loss", 0.0));
      out.push_back(kind + " " + std::to_string(e["step"].get<int64_t>()) + " " + loss);
    }
  }
  return out;
}

std::vector<int64_t> forecast_steps(const std::string& run_dir) {
  std::vector<int64_t> out;
  std::ifstream in(run_dir + "/forecasts.jsonl");
  for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line)["step"].get<int64_t>());
  return out;
}

// The newest checkpoint's step in `dir` (-1: none), and whether a writer left a temporary.
int64_t newest_step(const std::string& dir) {
  const auto all = orrery::list_checkpoints(dir);
  return all.empty() ? -1 : std::stoll(fs::path(all.back()).filename().string().substr(5));
}
bool write_in_progress(const std::string& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/checkpoints", ec))
    if (e.path().filename().string().starts_with(".tmp.")) return true;
  return false;
}

void flip_byte(const std::string& path, std::streamoff at) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(at);
  char c = 0;
  f.get(c);
  f.seekp(at);
  f.put(static_cast<char>(c ^ 0x5a));
}

}  // namespace

TEST_CASE("killed with SIGKILL at random moments and resumed each time, a run ends as the uninterrupted one", "[process][slow]") {
  Run r("resume-kill");
  const std::string steps = "steps=240 every=1";
  REQUIRE(r.go(steps + " name=ref").status == 0);

  const std::string k = r.run_dir("k");
  std::mt19937 rng(20261123);
  int kills = 0, mid_write = 0, launches = 0;
  for (;;) {
    REQUIRE(++launches < 200);
    test::Background p({"run", r.script, "--resume", "steps=240", "every=1", "name=k", "runs=" + r.dir + "/runs"},
                       r.dir + "/launch" + std::to_string(launches) + ".log");
    if (kills >= 20 && mid_write >= 3) {  // enough: let it finish
      REQUIRE(p.wait_exit(300) == 0);
      INFO(p.output());
      CHECK_THAT(p.output(), Catch::Contains("finished\t240"));
      break;
    }
    // A third of the kills land while a checkpoint is being written; the others a random
    // moment after the run made progress, or at any moment of start-up.
    const int mode = static_cast<int>(rng() % 6);
    const int64_t from = newest_step(k);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    const auto start = std::chrono::steady_clock::now();
    const auto early = std::chrono::milliseconds(rng() % 600);
    bool killed = false;
    while (!killed && p.running() && std::chrono::steady_clock::now() < deadline) {
      const bool due = mode < 2   ? write_in_progress(k)
                       : mode < 5 ? newest_step(k) > from
                                  : std::chrono::steady_clock::now() - start > early;
      if (due) {
        if (mode >= 2 && mode < 5) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 20000));
        p.kill_now();
        killed = true;
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(300));
      }
    }
    if (!killed) {  // it finished before a kill was due
      INFO(p.output());
      REQUIRE(p.exit_status() == 0);
      break;
    }
    ++kills;
    mid_write += write_in_progress(k);
  }
  std::printf("resume under SIGKILL: %d kills, %d during a checkpoint write, %d launches\n", kills, mid_write, launches);
  INFO(kills << " kills, " << mid_write << " during a checkpoint write, " << launches << " launches");
  CHECK(kills >= 20);
  CHECK(mid_write >= 3);

  // Bit for bit: the final weights, every loss in order (none lost, none twice), the snapshots.
  CHECK(test::read_text(k + "/final.safetensors") == test::read_text(r.run_dir("ref") + "/final.safetensors"));
  const auto got = losses(k), want = losses(r.run_dir("ref"));
  CHECK(got.size() == want.size());
  CHECK(got == want);
  CHECK(forecast_steps(k) == forecast_steps(r.run_dir("ref")));
  const Json summary = Json::parse(test::read_text(k + "/summary.json"));
  CHECK(summary["steps"] == 240);
  CHECK_FALSE(summary.contains("error"));
  CHECK(orrery::list_checkpoints(k).size() == 3);  // checkpoint_keep
  CHECK_FALSE(write_in_progress(k));
}

TEST_CASE("resume skips a damaged checkpoint with a warning naming it, refuses another run, and trains a finished run no more", "[process][slow]") {
  Run r("resume-damage");
  REQUIRE(r.go("steps=20 every=5 name=ref").status == 0);
  const auto failed = r.go("steps=20 every=5 name=c fail_at=12");
  REQUIRE(failed.status == 1);
  CHECK_THAT(failed.output, Catch::Contains("stopped at step 12"));
  const std::string c = r.run_dir("c");
  REQUIRE(orrery::list_checkpoints(c).size() == 2);  // steps 5 and 10

  // The newest damaged, a torn temporary beside it.
  const std::string ten = c + "/checkpoints/step-000000010";
  flip_byte(ten + "/model.safetensors", static_cast<std::streamoff>(fs::file_size(ten + "/model.safetensors") / 2));
  fs::create_directory(c + "/checkpoints/.tmp.step-000000011.99999");
  std::ofstream(c + "/checkpoints/.tmp.step-000000011.99999/model.safetensors") << "half";

  const auto resumed = r.go("--resume steps=20 every=5 name=c");
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  CHECK_THAT(resumed.output, Catch::Contains("warning: skipping checkpoint runs/c/checkpoints/step-000000010: "
                                             "model.safetensors fails its CRC-32 check"));
  CHECK_THAT(resumed.output, Catch::Contains("resuming at step 5/20 from runs/c/checkpoints/step-000000005"));
  CHECK_FALSE(fs::exists(c + "/checkpoints/.tmp.step-000000011.99999"));
  CHECK(test::read_text(c + "/final.safetensors") == test::read_text(r.run_dir("ref") + "/final.safetensors"));
  CHECK(losses(c) == losses(r.run_dir("ref")));

  // What shapes the saved state must match; the run is left as it was.
  const auto changed = r.go("--resume steps=20 every=5 name=c batch=8");
  CHECK(changed.status == 1);
  CHECK_THAT(changed.output, Catch::Contains("cannot resume run runs/c: this script asks for another run "
                                             "(train.batch_size was 4, now 8)"));
  // A run started before the named seed streams (its config records none) drew other data and
  // masks from its seed: refused, and left as it was.
  {
    const std::string config = c + "/config.json";
    const std::string kept = test::read_text(config);
    Json older = Json::parse(kept);
    older.erase("seed_streams");
    std::ofstream(config) << older.dump();
    const auto earlier = r.go("--resume steps=20 every=5 name=c");
    CHECK(earlier.status == 1);
    CHECK_THAT(earlier.output, Catch::Contains("cannot resume run runs/c: this script asks for another run (it was "
                                               "started by an earlier Orrery whose random streams came from its "
                                               "seed another way (seed_streams was \"unrecorded\", now \"named\")"));
    std::ofstream(config) << kept;
  }
  // Finished: the final checkpoint is loaded, nothing is trained, the script goes on with it.
  fs::remove(c + "/final.safetensors");
  const auto again = r.go("--resume steps=20 every=5 name=c");
  INFO(again.output);
  CHECK(again.status == 0);
  CHECK_THAT(again.output, Catch::Contains("finished before (20 steps)"));
  CHECK(test::read_text(c + "/final.safetensors") == test::read_text(r.run_dir("ref") + "/final.safetensors"));
  CHECK(losses(c) == losses(r.run_dir("ref")));

  // More steps: it trains on from its final checkpoint, saying it no longer reproduces the 20-step run.
  const auto longer = r.go("--resume steps=25 every=5 name=c");
  INFO(longer.output);
  CHECK(longer.status == 0);
  CHECK_THAT(longer.output, Catch::Contains("warning: run runs/c goes on with other settings (train.steps was 20, now 25)"));
  CHECK_THAT(longer.output, Catch::Contains("resuming at step 20/25"));
  CHECK(Json::parse(test::read_text(c + "/summary.json"))["steps"] == 25);

  // Every checkpoint damaged: the run starts over in its folder, and still ends the same.
  REQUIRE(r.go("steps=20 every=5 name=d fail_at=7").status == 1);
  flip_byte(r.run_dir("d") + "/checkpoints/step-000000005/optimizer.safetensors", 100);
  const auto over = r.go("--resume steps=20 every=5 name=d");
  INFO(over.output);
  CHECK(over.status == 0);
  CHECK_THAT(over.output, Catch::Contains("optimizer.safetensors fails its CRC-32 check"));
  CHECK_THAT(over.output, Catch::Contains("has no checkpoint to resume from: it starts over"));
  CHECK(test::read_text(r.run_dir("d") + "/final.safetensors") == test::read_text(r.run_dir("ref") + "/final.safetensors"));
}

TEST_CASE("a branch starts a new run at another run's checkpoint: the same schedule continues it bit for bit", "[slow]") {
  Run r("resume-branch");
  REQUIRE(r.go("steps=20 every=5 at=7 name=stable").status == 0);
  const std::string stable = r.run_dir("stable");
  // checkpoint_at: step 7 is kept beside the newest three, step 5 is not.
  const auto kept = orrery::list_checkpoints(stable);
  REQUIRE(kept.size() == 4);
  CHECK(fs::path(kept[0]).filename() == "step-000000007");
  CHECK(fs::path(kept[1]).filename() == "step-000000010");
  const std::string metrics_before = test::read_text(stable + "/metrics.jsonl");
  const std::string ten = "runs/stable/checkpoints/step-000000010";

  // Branched at step 10 under the same schedule: steps 11-20 are the stable run's, bit for bit.
  const auto same = r.go("steps=20 every=5 name=same branch=" + ten);
  INFO(same.output);
  REQUIRE(same.status == 0);
  CHECK_THAT(same.output, Catch::Contains("run same: branching at step 10/20 from " + ten));
  std::vector<std::string> tail;
  for (const auto& l : losses(stable))
    if (std::stoll(l.substr(l.find(' ') + 1)) > 10) tail.push_back(l);
  CHECK(losses(r.run_dir("same")) == tail);
  CHECK(test::read_text(r.run_dir("same") + "/final.safetensors") == test::read_text(stable + "/final.safetensors"));
  const Json summary = Json::parse(test::read_text(r.run_dir("same") + "/summary.json"));
  CHECK(summary["branched_from"] == ten);
  CHECK(summary["resumed_from"].is_null());
  CHECK(Json::parse(test::read_text(r.run_dir("same") + "/config.json"))["branch"] == ten);

  // Another decay from the same point trains otherwise; the stable run is only read.
  const auto decayed = r.go("steps=16 every=5 name=decayed decay=0.375 branch=" + ten);
  INFO(decayed.output);
  REQUIRE(decayed.status == 0);
  const auto branch = losses(r.run_dir("decayed"));
  REQUIRE(branch.size() >= 3);
  CHECK(branch[0] == tail[0]);  // step 11's loss comes from the weights of step 10
  CHECK(branch[2] != tail[2]);  // then the decayed rate (below 1 from the second step of 11-16) moves them
  CHECK(test::read_text(stable + "/metrics.jsonl") == metrics_before);

  // A run folder branches from its newest checkpoint.
  const auto newest = r.go("steps=25 every=5 name=newest branch=runs/stable");
  INFO(newest.output);
  CHECK(newest.status == 0);
  CHECK_THAT(newest.output, Catch::Contains("branching at step 20/25 from runs/stable/checkpoints/step-000000020"));

  // What a resume fixes, a branch fixes too; a folder that is not there is named.
  const auto other = r.go("steps=20 every=5 name=other batch=8 branch=" + ten);
  CHECK(other.status == 1);
  CHECK_THAT(other.output, Catch::Contains("cannot branch from " + ten + ": this run differs from the one it "
                                           "branches off (train.batch_size was 4, now 8)"));
  const auto missing = r.go("steps=20 every=5 name=missing branch=runs/nowhere");
  CHECK(missing.status == 1);
  CHECK_THAT(missing.output, Catch::Contains("branch: no such folder: runs/nowhere"));
  CHECK_FALSE(fs::exists(r.run_dir("other")));
  CHECK_FALSE(fs::exists(r.run_dir("missing")));
}

TEST_CASE("an edited checkpoint.json fails its own CRC; a run folder without config.json is not resumed", "[process]") {
  Run r("resume-record");
  REQUIRE(r.go("steps=20 every=5 name=ref").status == 0);
  REQUIRE(r.go("steps=20 every=5 name=c fail_at=12").status == 1);
  const std::string c = r.run_dir("c");
  // One digit of metrics_bytes changed (before: metrics.jsonl was cut mid-line on resume, exit 0).
  const std::string record = c + "/checkpoints/step-000000010/checkpoint.json";
  std::string text = test::read_text(record);
  const size_t at = text.find("\"metrics_bytes\": ");
  REQUIRE(at != std::string::npos);
  char& digit = text[at + 17];
  digit = digit == '9' ? '8' : static_cast<char>(digit + 1);
  std::ofstream(record, std::ios::binary | std::ios::trunc) << text;
  const auto resumed = r.go("--resume steps=20 every=5 name=c");
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  CHECK_THAT(resumed.output, Catch::Contains("warning: skipping checkpoint runs/c/checkpoints/step-000000010: "
                                             "checkpoint.json fails its CRC-32 check (edited or damaged)"));
  CHECK_THAT(resumed.output, Catch::Contains("resuming at step 5/20"));
  CHECK(losses(c) == losses(r.run_dir("ref")));

  // config.json deleted (before: a new run started beside it at step 0, without a word).
  REQUIRE(r.go("steps=20 every=5 name=e fail_at=12").status == 1);
  fs::remove(r.run_dir("e") + "/config.json");
  const auto lost = r.go("--resume steps=20 every=5 name=e");
  CHECK(lost.status == 1);
  CHECK_THAT(lost.output, Catch::Contains("cannot resume run runs/e: its config.json is missing, so its checkpoints "
                                          "cannot be checked against this script"));
  CHECK_FALSE(fs::exists(r.dir + "/runs/e-1"));
}

TEST_CASE("SIGTERM checkpoints the step it stopped at; --resume goes on from there", "[process]") {
  Run r("resume-term");
  REQUIRE(r.go("steps=200 every=0 name=ref").status == 0);
  test::Background p({"run", r.script, "steps=200", "every=0", "name=t", "runs=" + r.dir + "/runs"}, r.dir + "/t.log");
  const std::string metrics = r.run_dir("t") + "/metrics.jsonl";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto lines = [&] {
    const std::string text = test::read_text(metrics);
    return std::count(text.begin(), text.end(), '\n');
  };
  while (p.running() && std::chrono::steady_clock::now() < deadline && lines() < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  p.signal(SIGTERM);
  REQUIRE(p.wait_exit(60) == 143);
  const auto saved = orrery::list_checkpoints(r.run_dir("t"));
  REQUIRE(saved.size() == 1);  // checkpoint_minutes' default is on: Ctrl-C and SIGTERM write one
  CHECK(Json::parse(test::read_text(r.run_dir("t") + "/summary.json"))["interrupted"] == true);
  const int64_t stopped = newest_step(r.run_dir("t"));
  CHECK(stopped > 0);
  CHECK(stopped < 200);
  const auto resumed = r.go("--resume steps=200 every=0 name=t");
  INFO(resumed.output);
  CHECK(resumed.status == 0);
  CHECK_THAT(resumed.output, Catch::Contains("resuming at step " + std::to_string(stopped) + "/200"));
  CHECK(test::read_text(r.run_dir("t") + "/final.safetensors") == test::read_text(r.run_dir("ref") + "/final.safetensors"));
  CHECK(losses(r.run_dir("t")) == losses(r.run_dir("ref")));
}

TEST_CASE("a run folder is trained by one process at a time", "[process]") {
  const std::string dir = test::temp_dir("resume-lock");
  orrery::RunStore first(dir, "r", Json{{"x", 1}});
  CHECK_THROWS_WITH(orrery::RunStore(first.dir()), Catch::Contains("is in use: another process is training this run"));
}

TEST_CASE("every optimizer's state round-trips: a reloaded optimizer steps exactly as the original") {
  auto& reg = orrery::Registry::global();
  auto data = reg.create<orrery::PluginKind::data>("synthetic", Json::object(), orrery::DataContext{});
  const orrery::Batch batch = data->sample({4, 128, 3});
  for (const std::string name : {"adamw", "sgd", "muon", "normuon", "dion2"}) {
    INFO(name);
    Json opts = name == "sgd" ? Json{{"lr", 1e-2}, {"momentum", 0.9}} : Json::object();
    const auto groups = orrery::optimizer_groups_from_json(
        Json::array({{{"name", name}, {"options", opts}, {"params", {{"role", "hidden"}}}}, {{"name", "adamw"}}}));
    auto a = test::tiny_model(4), b = test::tiny_model(5);
    orrery::RoutedOptimizer oa(reg, groups, a->params(), a->parametrisation());
    orrery::RoutedOptimizer ob(reg, groups, b->params(), b->parametrisation());
    auto step = [&](orrery::Model& m, orrery::Optimizer& o) {
      for (auto& p : m.params()) p.tensor.mutable_grad().reset();
      m.loss(batch).backward();
      o.step(orrery::StepScalars{0.5, 1.0, -1.0});
    };
    for (int i = 0; i < 3; ++i) step(*a, oa);
    // b takes a's weights and optimizer state as a checkpoint would carry them.
    const std::string dir = test::temp_dir("resume-opt-" + name);
    orrery::TrainState st;
    st.step = 3;
    st.masking_rng = "00";
    orrery::write_checkpoint(dir, *a, oa, {st, 0, 0, Json::object(), {}}, 1);
    const auto loaded = orrery::load_latest_checkpoint(dir, *b, ob, {});
    REQUIRE(loaded);
    CHECK(loaded->state.step == 3);
    for (int i = 0; i < 2; ++i) step(*a, oa), step(*b, ob);
    for (size_t i = 0; i < a->params().size(); ++i) {
      INFO(a->params()[i].info.name);
      CHECK(at::equal(a->params()[i].tensor, b->params()[i].tensor));
    }
    CHECK(oa.counters() == ob.counters());
  }
  // A state that is not this optimizer's is refused, naming the tensors, and nothing changes.
  auto m = test::tiny_model();
  orrery::RoutedOptimizer adamw(reg, orrery::optimizer_groups_from_json({{"name", "adamw"}}), m->params(),
                                m->parametrisation());
  orrery::NamedTensors saved = adamw.state_tensors();
  saved.pop_back();
  saved.emplace_back("nonsense", at::zeros({2}));
  CHECK_THROWS_WITH(orrery::load_optimizer_state(adamw, saved, adamw.counters(), "opt.safetensors"),
                    Catch::Contains("opt.safetensors is not this optimizer's state: missing '") &&
                        Catch::Contains("unexpected 'nonsense'"));
}
