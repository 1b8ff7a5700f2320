// The experiment scripts end to end at a toy size: scripts/proxy_search.lua (four chained search
// rounds, the decay round branched off one stable run), scripts/scaling.lua (budgets branched
// off one run per size, both laws fitted), scripts/prior_ablation.lua (the synthetic prior's
// families, arm by arm, on paired seeds; sign_average.lua scores its saved models again),
// scripts/decision.lua (inference arms on saved models, paired with a reference and ETS) and
// scripts/zero_shot.lua's recipes and the quickstart that shares them. Run again, each reads its
// work back and trains nothing.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "orrery/host/file_tree.h"
#include "orrery/json.h"
#include "orrery/safetensors.h"
#include "support.h"

namespace fs = std::filesystem;
using orrery::Json;

namespace {

// A scratch folder laid out like a checkout: scripts/ (with lib/) and assets/.
std::string checkout(const std::string& name) {
  const std::string dir = test::temp_dir(name);
  fs::create_directory_symlink(std::string(ORRERY_SOURCE_DIR) + "/scripts", dir + "/scripts");
  fs::create_directory_symlink(std::string(ORRERY_SOURCE_DIR) + "/assets", dir + "/assets");
  return dir;
}

std::set<std::string> folders(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

// A one-series benchmark, the bundled Nile, in dir/nile: a script's scoring stays short.
void nile_benchmark(const std::string& dir) {
  fs::create_directory(dir + "/nile");
  fs::copy_file(std::string(ORRERY_SOURCE_DIR) + "/assets/data/nile.csv", dir + "/nile/nile.csv");
  std::ofstream(dir + "/nile/manifest.json")
      << R"({"datasets": [{"name": "nile", "file": "nile.csv", "frequency": "A", "series": 1, "length": 100}]})";
}

test::CommandResult run(const std::string& dir, const std::string& args) {
  return test::run_command("cd '" + dir + "' && " + test::orrery_cmd("run " + args));
}

// A command the script refuses: exit status 1 and `message` in its output.
void refuses(const std::string& dir, const std::string& command, const std::string& message) {
  const auto r = run(dir, command);
  INFO(command << "\n" << r.output);
  CHECK(r.status == 1);
  CHECK_THAT(r.output, Catch::Contains(message));
}

// Runs the script again: it must succeed and train nothing (no new folder under `runs`).
// Returns the result file it wrote again, for the caller to compare with the first.
Json rerun_without_training(const std::string& dir, const std::string& cmd, const std::string& runs,
                            const std::string& result) {
  const auto before = folders(dir + "/" + runs);
  const auto again = run(dir, cmd);
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(folders(dir + "/" + runs) == before);
  return Json::parse(test::read_text(dir + "/" + result));
}

}  // namespace

TEST_CASE("proxy_search.lua chains four rounds, branches the decays, and resumes without training again") {
  const std::string dir = checkout("proxy-search");
  const std::string cmd = "scripts/proxy_search.lua trials=3 steps=8 final_seeds=2";
  const auto first = run(dir, cmd);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const Json r = Json::parse(test::read_text(dir + "/runs/proxy_search/proxy_search.json"));
  REQUIRE(r["rounds"].size() == 4);
  for (const auto& round : r["rounds"]) {
    CHECK(round["trials"] == 3);
    // Each round runs the previous round's best first, so its best is never worse than that.
    CHECK(round["best"].get<double>() <= round["start"].get<double>());
  }
  // Each round's study holds the tuned value of its own dimensions.
  CHECK(r["config"]["decay"] == r["rounds"][3]["params"]["decay"]);
  CHECK(r["config"]["lr"] == r["rounds"][2]["params"]["lr"]);
  // The decay trials branch off the stable run's checkpoint at 8 x (1 - 0.5) = step 4.
  const Json decay = Json::parse(test::read_text(dir + "/runs/proxy_search/runs/decay-t001/summary.json"));
  CHECK(decay["branched_from"] == "runs/proxy_search/runs/decay-stable-s0/checkpoints/step-000000004");
  for (const char* round : {"arch", "mix", "optimizer", "decay"}) {  // the Search tab's views, as SVG
    CHECK(fs::exists(dir + "/runs/proxy_search/" + round + "/search.svg"));
    CHECK(Json::parse(test::read_text(dir + "/runs/proxy_search/" + round + "/study.json"))["trials"].size() == 3);
  }
  for (const char* split : {"validation", "test"}) {
    CHECK(r["final"]["default"][split].size() == 2);
    CHECK(r["final"][std::string(split) + "_difference"].contains("verdict"));
  }

  const Json r2 = rerun_without_training(dir, cmd, "runs/proxy_search/runs", "runs/proxy_search/proxy_search.json");
  CHECK(r2["config"] == r["config"]);
  CHECK(r2["final"] == r["final"]);
  // A benchmark that is not there is refused before the first trial, not when the first scores.
  refuses(dir, "scripts/proxy_search.lua name=typo data=nlie " + cmd.substr(cmd.find(' ') + 1),
          "argument data=nlie: no such file or folder");
  CHECK(!fs::exists(dir + "/runs/typo"));
}

TEST_CASE("scaling.lua branches shorter budgets off each size's run and fits both laws") {
  const std::string dir = checkout("scaling");
  const std::string cmd = "scripts/scaling.lua shapes=16x1,32x1,48x1,64x1 points_per_param=2 bootstrap=20 val_batches=1";
  const auto first = run(dir, cmd);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const Json r = Json::parse(test::read_text(dir + "/runs/scaling/scaling.json"));
  CHECK(r["size"]["law"] == "size");
  CHECK(r["joint"]["law"] == "joint");
  CHECK(r["size"]["intervals"]["alpha"].size() == 2);
  CHECK(r["size"].contains("holdout"));
  // 64x1: 2 points per parameter of ~197k parameters at 16 x 256 points a step is 97 steps, with
  // budgets of a quarter and a half (24 and 49 steps) branched off its checkpoints at their decay
  // starts (steps 19 and 39 under a 20% decay).
  std::vector<int64_t> budgets;
  for (const auto& p : r["points"])
    if (p["run"] == "64x1") budgets.push_back(p["budget"]);
  REQUIRE(budgets.size() == 3);
  CHECK(budgets[0] * 4 == Approx(budgets[2]).margin(2));
  CHECK(budgets[1] * 2 == Approx(budgets[2]).margin(2));
  const Json half = Json::parse(test::read_text(dir + "/runs/scaling/runs/64x1-" + std::to_string(budgets[1]) +
                                                "/summary.json"));
  const int64_t start = static_cast<int64_t>(std::floor(budgets[1] * 0.8 + 0.5));
  char expected[128];
  std::snprintf(expected, sizeof expected, "runs/scaling/runs/64x1-full/checkpoints/step-%09lld",
                static_cast<long long>(start));
  CHECK(half["branched_from"] == expected);
  CHECK(half["steps"] == budgets[1]);
  CHECK(fs::exists(dir + "/runs/scaling/plots/scaling.svg"));

  const Json r2 = rerun_without_training(dir, cmd, "runs/scaling/runs", "runs/scaling/scaling.json");
  CHECK(r2["points"] == r["points"]);
}

TEST_CASE("prior_ablation.lua trains every arm on paired seeds, compares each with the first, and resumes") {
  const std::string dir = checkout("prior-ablation");
  const std::string cmd =
      "scripts/prior_ablation.lua arms=default,ets,augmented,short,patch16,obs20,obs0,averaged,classical16,early,classical16+early,classical+patch8,"
      "classical16+persistent+steep,classical16+window4,classical16+context64,classical16+ensemble64,classical16+ensemble64+boxcox,classical16+context128x3,classical16+full "
      "seeds=2 "
      "steps=3 batch=2 "
      "context=128";
  const auto first = run(dir, cmd);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const Json r = Json::parse(test::read_text(dir + "/runs/prior_ablation/prior_ablation.json"));
  // The ets arm draws a quarter of its synthetic series from ets, the default families in the
  // rest, in their default proportions.
  const Json& def = r["families"]["default"];
  const Json& ets = r["families"]["ets"];
  CHECK(!def.contains("ets"));
  CHECK(ets["ets"].get<double>() == Approx(0.25));
  CHECK(ets["kernel_synth"].get<double>() == Approx(0.75 * def["kernel_synth"].get<double>()));
  for (const char* arm : {"default", "ets"})
    for (const char* split : {"validation", "test"}) {
      INFO(arm << " " << split);
      REQUIRE(r["scores"][arm][split].size() == 2);  // one entry per seed
      CHECK(r["scores"][arm][split]["0"].size() == r["scores"]["default"][split]["1"].size());  // the same configurations
    }
  CHECK(r["comparison"]["ets"]["test_difference"].contains("verdict"));
  CHECK(r["families"]["augmented"] == def);  // augmented: the default families, augmented in the mix
  const Json config = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/augmented-s0/config.json"));
  CHECK(config["data"]["options"]["augment"]["mixup"] == 0.1);
  CHECK(fs::exists(dir + "/runs/prior_ablation/runs/short-s1/model.safetensors"));
  const Json short_config = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/short-s0/config.json"));
  CHECK(short_config["data"]["options"]["sources"][0]["options"]["short_prob"] == 0.3);
  // The recipe arms: 16-step patches; the observability source at 20% of the series.
  const Json patch16 = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/patch16-s1/config.json"));
  CHECK(patch16["model"]["patch_size"] == 16);
  const Json obs20 = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/obs20-s0/config.json"));
  CHECK(obs20["data"]["describe"]["sources"][1]["share"].get<double>() == Approx(0.2));
  // obs0: the synthetic source alone.
  const Json obs0 = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/obs0-s0/config.json"));
  CHECK(obs0["data"]["options"]["sources"].size() == 1);
  CHECK(obs0["data"]["options"]["sources"][0]["name"] == "synthetic");
  CHECK(r["comparison"]["patch16"]["test_difference"].contains("verdict"));
  // classical16: the classical families on 16-step patches; early: the loss on each target
  // patch's first 16 steps, weighed 4.
  const Json classical16 = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/classical16-s0/config.json"));
  CHECK(classical16["model"]["patch_size"] == 16);
  CHECK(r["families"]["classical16"]["ets"].get<double>() == Approx(0.2));
  const Json early = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/early-s1/config.json"));
  CHECK(early["train"]["early_steps"] == 16);
  CHECK(early["train"]["early_weight"] == 4.0);
  CHECK(Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/default-s0/config.json"))["train"]["early_steps"] == 0);
  // Joined arms: both parts' settings; early weighs the first half of a 16-step patch.
  const Json joined = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/classical16+early-s0/config.json"));
  CHECK(joined["model"]["patch_size"] == 16);
  CHECK(joined["train"]["early_steps"] == 8);
  CHECK(joined["train"]["early_weight"] == 4.0);
  CHECK(r["families"]["classical16+early"] == r["families"]["classical16"]);
  CHECK(r["comparison"]["classical16+early"]["test_difference"].contains("verdict"));
  // Tables merge entry by entry: both options of the synthetic source, classical16's families.
  const Json three = Json::parse(
      test::read_text(dir + "/runs/prior_ablation/runs/classical16+persistent+steep-s1/config.json"));
  const Json& synthetic = three["data"]["options"]["sources"][0]["options"];
  CHECK(synthetic["ets_smoothing"] == "log_uniform");
  CHECK(synthetic["ets_max_drift"] == 0.05);
  CHECK(three["model"]["patch_size"] == 16);
  CHECK(r["families"]["classical16+persistent+steep"] == r["families"]["classical16"]);
  // A windowed scaler is part of the model; a scoring arm scores another arm's models, untrained.
  CHECK(Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/classical16+window4-s0/config.json"))["model"]
                                   ["scaler_window"] == 4);
  CHECK(r["scored"]["classical16+context64"]["context"] == 64);
  CHECK(r["scored"]["classical16"]["context"] == 128);
  CHECK(!fs::exists(dir + "/runs/prior_ablation/runs/classical16+context64-s0"));
  CHECK_THAT(first.output, Catch::Contains("classical16+context64 seed 1: scores classical16's model"));
  CHECK(r["scores"]["classical16+context64"]["test"]["0"].size() == r["scores"]["classical16"]["test"]["0"].size());
  CHECK(r["scores"]["classical16+context64"]["test"] != r["scores"]["classical16"]["test"]);
  // ensemble64: the last 64 steps and the whole (128-step) context, averaged; another score again.
  CHECK(r["scored"]["classical16+ensemble64"]["context"] == Json::array({64, 128}));
  CHECK(!fs::exists(dir + "/runs/prior_ablation/runs/classical16+ensemble64-s0"));
  CHECK(r["scores"]["classical16+ensemble64"]["test"] != r["scores"]["classical16+context64"]["test"]);
  CHECK(r["scores"]["classical16+ensemble64"]["test"] != r["scores"]["classical16"]["test"]);
  // boxcox: the same ensemble, each window's Box-Cox transform forecast; another score, no training.
  CHECK(r["scored"]["classical16+ensemble64+boxcox"]["box_cox"] == true);
  CHECK(!fs::exists(dir + "/runs/prior_ablation/runs/classical16+ensemble64+boxcox-s0"));
  CHECK(r["scores"]["classical16+ensemble64+boxcox"]["test"] != r["scores"]["classical16+ensemble64"]["test"]);
  // Each seed's geometric means are kept beside its scores.
  CHECK(r["summaries"]["classical16+ensemble64+boxcox"]["test"]["1"]["crps"].get<double>() > 0);
  CHECK(r["summaries"]["classical16"]["validation"]["0"].contains("coverage"));
  // context128x3: trained on at most 128 steps for three times the steps, scored from 128.
  CHECK(r["trained"]["classical16+context128x3"]["steps"] == 9);
  CHECK(r["trained"]["classical16+context128x3"]["context"] == 128);
  CHECK(r["scored"]["classical16+context128x3"]["context"] == 128);
  const Json x3 = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/classical16+context128x3-s1/config.json"));
  CHECK(x3["train"]["steps"] == 9);
  // full: every sample observed over the whole context; the others keep the mixture's 64.
  const Json full = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/classical16+full-s0/config.json"));
  CHECK(full["data"]["options"]["min_context"] == 0);
  CHECK(x3["data"]["options"]["min_context"] == 64);
  const Json patch8 = Json::parse(test::read_text(dir + "/runs/prior_ablation/runs/classical+patch8-s1/config.json"));
  CHECK(patch8["model"]["patch_size"] == 8);
  CHECK(r["families"]["classical+patch8"]["ets"].get<double>() == Approx(0.2));
  // Checkpoint averaging: the model scored and saved is the mean of the checkpoints kept from
  // 85% of the steps on (step 2 of 3) and the final one.
  const std::string averaged_run = dir + "/runs/prior_ablation/runs/averaged-s0";
  CHECK(Json::parse(test::read_text(averaged_run + "/config.json"))["train"]["checkpoint_at"] == Json::array({2}));
  {
    const auto saved = orrery::load_safetensors(averaged_run + "/model.safetensors");
    const auto at2 = orrery::load_safetensors(averaged_run + "/checkpoints/step-000000002/model.safetensors");
    const auto at3 = orrery::load_safetensors(averaged_run + "/checkpoints/step-000000003/model.safetensors");
    REQUIRE(saved.tensors.size() == at3.tensors.size());
    for (const auto& [name, t] : saved.tensors) {
      INFO(name);
      const at::Tensor mean = (at2.find(name)->to(at::kDouble) + at3.find(name)->to(at::kDouble)) / 2;
      CHECK(at::equal(t, mean.to(t.scalar_type())));
    }
  }
  CHECK(!r["comparison"]["default"].contains("test_difference"));  // the reference
  // ETS on the same windows, once, and every arm against it, overall and by frequency bucket.
  CHECK(r["reference"]["test"].size() == r["scores"]["default"]["test"]["0"].size());
  CHECK(r["comparison"]["default"]["test_vs_ets"].contains("verdict"));
  CHECK(r["comparison"]["ets"]["buckets"]["yearly"]["configurations"] == 8);
  // The arm named ets is a trained model, not the baseline of that name.
  CHECK(r["comparison"]["ets"]["test_vs_ets"]["change"] != 0);
  CHECK_THAT(first.output, Catch::Contains("test windows by frequency, arm / ETS (configurations):"));
  CHECK_THAT(first.output, Catch::Contains("arm / default - 1 (90% bootstrap over configurations):"));

  const Json r2 = rerun_without_training(dir, cmd, "runs/prior_ablation/runs", "runs/prior_ablation/prior_ablation.json");
  CHECK(r2["scores"] == r["scores"]);
  CHECK(r2["comparison"] == r["comparison"]);
  // Other training settings do not reuse the saved scores.
  const auto other = run(dir, "scripts/prior_ablation.lua arms=default,ets seeds=2 steps=4 batch=2 context=128");
  CHECK(other.status == 1);
  CHECK_THAT(other.output, Catch::Contains("holds arm 'default' trained otherwise (steps, context, batch or its "
                                           "options differ); give runs_dir= another folder to train it anew"));
  refuses(dir, "scripts/prior_ablation.lua arms=default,etz",
          "unknown arm 'etz' (arms: default, state_space, ets, arima, kernel_trend, short, augmented, classical, patch16, "
          "patch8, obs20, obs0, averaged, classical16, early, classical80, persistent, steep, window8, window4, context64, "
          "ensemble64, boxcox, context128, context128x3, steps45, full, breaks, breaks30, span16; or arms joined by '+', "
          "e.g. classical16+early)");
  refuses(dir, "scripts/prior_ablation.lua arms=classical16+ensemble64 context=64",
          "arm 'classical16+ensemble64' scores from 64 steps twice; give context= above 64");
  refuses(dir, "scripts/prior_ablation.lua arms=classical16+context64+ensemble64",
          "'context64' and 'ensemble64' both set eval_context");
  // seed=K: that seed only, in a folder of its own, and no report; its scores are the same
  // seed's in a run of all of them.
  const auto one = run(dir, "scripts/prior_ablation.lua arms=ets seeds=2 seed=1 steps=3 batch=2 context=128 runs_dir=one");
  INFO(one.output);
  REQUIRE(one.status == 0);
  CHECK_THAT(one.output, Catch::Contains("seed 1 done: one/prior_ablation/prior_ablation.json"));
  CHECK_THAT(one.output, !Catch::Contains("bootstrap"));
  const Json r1 = Json::parse(test::read_text(dir + "/one/prior_ablation/prior_ablation.json"));
  CHECK(r1["scores"]["ets"]["test"].size() == 1);
  CHECK(r1["scores"]["ets"]["test"]["1"] == r["scores"]["ets"]["test"]["1"]);
  refuses(dir, "scripts/prior_ablation.lua arms=ets seeds=2 seed=2", "seed must be a whole number from 0 to seeds - 1 (1), got '2'");
  refuses(dir, "scripts/prior_ablation.lua arms=default,classical16+patch16",
          "arm 'classical16+patch16': 'classical16' and 'patch16' both set patch_size");
  refuses(dir, "scripts/prior_ablation.lua arms=default,classical16+ets",
          "arm 'classical16+ets': 'classical16' and 'ets' both set families.ets");
  refuses(dir, "scripts/prior_ablation.lua arms=default,classical16+erly", "unknown arm 'erly' in 'classical16+erly'");

  // sign_average.lua scores the saved models again, plain and sign-averaged: plain is what the
  // ablation scored with the model in memory.
  const auto averaged = run(dir, "scripts/sign_average.lua arms=augmented seeds=2");
  INFO(averaged.output);
  REQUIRE(averaged.status == 0);
  const Json sa = Json::parse(test::read_text(dir + "/runs/prior_ablation/sign_average.json"));
  for (const char* seed : {"0", "1"})
    for (const char* split : {"validation", "test"}) {
      const Json& plain = sa["scores"]["augmented"][seed]["plain"][split];
      REQUIRE(plain.size() == r["scores"]["augmented"][split][seed].size());
      for (const auto& [config, score] : plain.items())
        CHECK(score.get<double>() == Approx(r["scores"]["augmented"][split][seed][config].get<double>()).epsilon(1e-12));
      CHECK(sa["scores"]["augmented"][seed]["averaged"][split] != plain);
    }
  CHECK(sa["comparison"]["augmented"]["test"].contains("verdict"));
  CHECK(sa["trained"]["augmented"]["context"] == 128);  // scored with the context it was trained with
  CHECK_THAT(averaged.output, Catch::Contains("averaged / plain - 1 (90% bootstrap)"));
  refuses(dir, "scripts/sign_average.lua arms=ets seeds=3", "prior_ablation/runs/ets-s2/model.safetensors is missing");
  refuses(dir, "scripts/sign_average.lua arms=classical seeds=2", "prior_ablation.json has no arm 'classical'");
}

TEST_CASE("decision.lua scores saved models under each inference arm, pairs them with the reference and ETS, and resumes") {
  const std::string dir = checkout("decision");
  // Two small yearly data sets, so a comparison over configurations has an interval.
  fs::create_directory(dir + "/two");
  for (const char* f : {"nile.csv", "lake_huron.csv"})
    fs::copy_file(std::string(ORRERY_SOURCE_DIR) + "/assets/data/" + f, dir + "/two/" + f);
  std::ofstream(dir + "/two/manifest.json")
      << R"({"datasets": [{"name": "nile", "file": "nile.csv", "frequency": "A", "series": 1, "length": 100},)"
      << R"({"name": "lake_huron", "file": "lake_huron.csv", "frequency": "A", "series": 1, "length": 98}]})";
  std::ofstream(dir + "/make.lua")
      << "for s = 0, 3 do  -- models 2 and 3 for against= below\n"
         "  orrery.model{arch = {'toto2', d_model = 16, num_layers = 1, num_heads = 1}, patch_size = 16, seed = s}"
         ":save('m' .. s .. '.safetensors')\n"
         "end\n";
  REQUIRE(run(dir, "make.lua").status == 0);
  const std::string cmd = "scripts/decision.lua models=m0.safetensors,m1.safetensors benchmarks=two "
                          "arms=whole,ens+boxcox,ens+checked,whole+ets+theta+median,ens+checked+ets+picked,"
                          "ens+checked+o2,ens+boxcox+avg out=d.json";
  const auto first = run(dir, cmd);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const Json d = Json::parse(test::read_text(dir + "/d.json"));
  for (const char* split : {"validation", "test"}) {
    const std::string key = std::string("two|") + split;
    const Json& c = d["comparison"][key];
    for (const char* arm : {"whole", "ens+boxcox", "ens+checked", "whole+ets+theta+median", "ens+checked+ets+picked",
                            "ens+checked+o2", "ens+boxcox+avg"}) {
      INFO(arm << " " << split);
      const Json& seeds = d["scores"][arm][key];
      REQUIRE(seeds.size() == 2);
      REQUIRE(seeds[0].size() == 2);  // both configurations scored for each seed
      CHECK(seeds[0] != seeds[1]);     // two models, two sets of scores
      // The arm's level is the geometric mean over configurations of the seeds' mean log score.
      double logs = 0;
      for (const auto& [config, v] : seeds[0].items())
        logs += (std::log(v["score"].get<double>()) + std::log(seeds[1][config]["score"].get<double>())) / 2;
      CHECK(c[arm]["score"].get<double>() == Approx(std::exp(logs / 2)).epsilon(1e-9));
      CHECK(c[arm]["vs_ets"]["score"].contains("verdict"));
    }
    CHECK(!c["whole"].contains("vs_reference"));
    CHECK(c["ens+boxcox"]["vs_reference"].contains("verdict"));
    CHECK(c["ens+boxcox"]["worst"].size() == 2);
    CHECK(d["ets"][key].size() == 2);
  }
  CHECK_THAT(first.output, Catch::Contains("score vs whole"));
  CHECK_THAT(first.output, Catch::Contains("guard 1.25"));
  // Run again: everything is read back, nothing scored twice (a score altered in the file stays).
  Json altered = d;
  const std::string config = altered["scores"]["whole"]["two|test"][0].items().begin().key();
  altered["scores"]["whole"]["two|test"][0][config]["score"] = 123.0;
  std::ofstream(dir + "/d.json") << altered.dump();
  const auto again = run(dir, cmd);
  REQUIRE(again.status == 0);
  const Json back = Json::parse(test::read_text(dir + "/d.json"));
  CHECK(back["scores"]["whole"]["two|test"][0][config]["score"] == 123.0);
  CHECK(back["scores"]["ens+boxcox"] == d["scores"]["ens+boxcox"]);
  // Other models: their scores are made again; ETS's, which depend on the windows alone, are kept.
  altered = back;
  altered["ets"]["two|test"][config]["score"] = 456.0;
  std::ofstream(dir + "/d.json") << altered.dump();
  const auto swapped = run(dir, "scripts/decision.lua models=m1.safetensors,m0.safetensors benchmarks=two "
                                "arms=whole,ens+boxcox,ens+checked,whole+ets+theta+median,ens+checked+ets+picked,"
                                "ens+checked+o2 out=d.json");
  REQUIRE(swapped.status == 0);
  const Json other = Json::parse(test::read_text(dir + "/d.json"));
  CHECK(other["scores"]["whole"]["two|test"][1][config]["score"] == d["scores"]["whole"]["two|test"][0][config]["score"]);
  CHECK(other["ets"]["two|test"][config]["score"] == 456.0);
  // against=: each arm compared with the same arm of another results file (models 1 and 0 there,
  // 2 and 3 here), by configuration with each side's seeds averaged, and by frequency bucket.
  const auto vs = run(dir, "scripts/decision.lua models=m2.safetensors,m3.safetensors benchmarks=two "
                           "arms=whole,ens+checked out=a.json against=d.json");
  INFO(vs.output);
  REQUIRE(vs.status == 0);
  CHECK_THAT(vs.output, Catch::Contains("against d.json: score"));
  const Json a = Json::parse(test::read_text(dir + "/a.json"));
  for (const char* arm : {"whole", "ens+checked"}) {
    const std::string key = "two|test";
    const Json &mine = a["scores"][arm][key], &theirs = other["scores"][arm][key];
    double diff = 0;
    for (const auto& [c, v] : mine[0].items())
      for (int s = 0; s < 2; ++s)
        diff += (std::log(mine[s][c]["score"].get<double>()) - std::log(theirs[s][c]["score"].get<double>())) / 4;
    const Json& against = a["comparison"][key][arm]["vs_against"];
    CHECK(std::fabs(diff) > 1e-6);  // other models: a change to measure
    CHECK(against["score"]["change"].get<double>() == Approx(std::expm1(diff)).epsilon(1e-9).margin(1e-12));
    CHECK(against["buckets"]["yearly"]["crps"].contains("verdict"));
    CHECK(against["worst"].size() == 2);
    CHECK(against["best"].size() == 2);
  }
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole out=e.json against=d.json",
          "against: d.json holds 2 models and models= gives 1; compare as many seeds on each side");
  refuses(dir, "scripts/decision.lua models=m2.safetensors,m3.safetensors benchmarks=two arms=whole,ens out=e.json "
          "against=d.json", "against: d.json has no scores of arm 'ens' on two|validation");
  {  // a hand-edited ratio at 0 has no log to compare
    Json zero = other;
    zero["scores"]["whole"]["two|test"][1][config]["crps"] = 0.0;
    std::ofstream(dir + "/zero.json") << zero.dump();
  }
  refuses(dir, "scripts/decision.lua models=m2.safetensors,m3.safetensors benchmarks=two arms=whole out=e.json "
          "against=zero.json", "against: zero.json: arm 'whole' on two|test, seed 1, " + config + ": crps is 0");
  std::ofstream(dir + "/not-results.json") << R"({"x": 1})";
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole out=e.json against=not-results.json",
          "against: not-results.json is not a results file of decision.lua");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole,ens+boxkox out=e.json",
          "arm 'ens+boxkox': unknown part 'boxkox'");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole,ens+picked out=e.json",
          "arm 'ens+picked': picked needs baselines to combine with");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole,ens+avg out=e.json",
          "arm 'ens+avg': avg averages the Box-Cox forecast with the plain one; give boxcox or checked");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole,ens+o2 out=e.json",
          "arm 'ens+o2': o2 sets the horizons a check scores; give checked or picked");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole,ens+checked+o0 out=e.json",
          "arm 'ens+checked+o0': o0 checks over no horizon; give o1 or more");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole,ens+checked+o2+o3 out=e.json",
          "arm 'ens+checked+o2+o3': give one oN");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=whole+ens out=e.json",
          "arm 'whole+ens': give exactly one of whole, c512, ens");
  refuses(dir, "scripts/decision.lua models=m0.safetensors benchmarks=two arms=ens reference=whole out=e.json",
          "reference 'whole' is not one of arms");
  refuses(dir, "scripts/decision.lua models=m5.safetensors benchmarks=two arms=whole out=e.json",
          "models: m5.safetensors is missing");
}

TEST_CASE("zero_shot.lua trains the classical16 recipe by default, Toto 2.0's on request, and refuses others") {
  const std::string dir = checkout("zero-shot");
  nile_benchmark(dir);
  const std::string small = " steps=2 batch=2 context=128 data=nile";
  const auto def = run(dir, "scripts/zero_shot.lua" + small);
  INFO(def.output);
  REQUIRE(def.status == 0);
  const Json c16 = Json::parse(test::read_text(dir + "/runs/zero_shot/config.json"));
  CHECK(c16["model"]["patch_size"] == 16);
  CHECK(c16["data"]["options"]["min_context"] == 64);
  const Json& families = c16["data"]["options"]["sources"][0]["options"]["families"];
  CHECK(families["ets"].get<double>() == Approx(0.2));
  CHECK(families["kernel_trend"].get<double>() == Approx(0.2));
  CHECK(families["arima"].get<double>() == Approx(0.1));
  CHECK(fs::exists(dir + "/runs/zero_shot/eval.csv"));
  // Scored as a context ensemble: the last 64 steps and the whole context.
  const Json scored = Json::parse(test::read_text(dir + "/runs/zero_shot/eval.json"));
  CHECK(scored["protocol"]["contexts"] == Json::array({64, 128}));
  CHECK(scored["protocol"]["box_cox"] == true);  // on by default, as the quickstart scores
  CHECK_THAT(def.output, Catch::Contains("averaged over the last 64, 128 steps: a context ensemble"));

  const auto toto = run(dir, "scripts/zero_shot.lua recipe=toto seed=1 name=toto short_context=0 box_cox=false" + small);
  INFO(toto.output);
  REQUIRE(toto.status == 0);
  const Json t = Json::parse(test::read_text(dir + "/runs/toto/config.json"));
  CHECK(t["model"]["patch_size"] == 32);
  CHECK(!t["data"]["options"]["sources"][0]["options"]["families"].contains("ets"));
  CHECK(t["model"]["seed"] == 1);
  CHECK(t["train"]["seed"] == 1);
  const Json toto_scored = Json::parse(test::read_text(dir + "/runs/toto/eval.json"));
  CHECK(toto_scored["protocol"]["contexts"] == Json::array({128}));
  CHECK(!toto_scored["protocol"].contains("box_cox"));  // box_cox=false: the values as they are
  refuses(dir, "scripts/zero_shot.lua box_cox=yes" + small, "scripts/zero_shot.lua: argument box_cox=yes: expected true or false");
  refuses(dir, "scripts/zero_shot.lua short_context=128" + small,
          "short_context must be a whole number from 0 to context - 1, got 128");
  refuses(dir, "scripts/zero_shot.lua short_context=some" + small, "argument short_context=some: \"some\" is not a whole number");
  refuses(dir, "scripts/zero_shot.lua recipe=classical" + small,
          "argument 'recipe' of this script must be one of classical16, classical16_full, toto, got the string \"classical\"");
  refuses(dir, "scripts/zero_shot.lua seed=-1" + small, "argument 'seed' of this script must be >= 0, got number -1");
  refuses(dir, "scripts/zero_shot.lua context=wide steps=2 data=nile", "argument context=wide: \"wide\" is not a whole number");
  refuses(dir, "scripts/zero_shot.lua steps=many data=nile", "argument steps=many: \"many\" is not a whole number");
  // A typo is refused with the argument it resembles, before any work (no run folder).
  refuses(dir, "scripts/zero_shot.lua stpes=2 name=typo data=nile",
          "scripts/zero_shot.lua: unknown argument 'stpes' (did you mean 'steps'?)");
}

TEST_CASE("quickstart.lua is zero_shot.lua's classical16_full recipe, shorter, scored as the same context ensemble") {
  const std::string dir = checkout("quickstart");
  nile_benchmark(dir);
  const auto quick = run(dir, "scripts/quickstart.lua steps=2 seed=1 data=nile");
  INFO(quick.output);
  REQUIRE(quick.status == 0);
  const Json q = Json::parse(test::read_text(dir + "/runs/quickstart/config.json"));
  CHECK(q["model"]["patch_size"] == 16);
  CHECK(q["model"]["seed"] == 1);
  CHECK(q["train"]["seed"] == 1);
  const Json& sources = q["data"]["options"]["sources"];
  CHECK(sources[0]["options"]["families"]["ets"].get<double>() == Approx(0.2));
  CHECK(sources[1]["name"] == "observability");
  CHECK(q["data"]["options"]["min_context"] == 0);  // every sample observed over its whole context
  const Json scored = Json::parse(test::read_text(dir + "/runs/quickstart/eval.json"));
  CHECK(scored["protocol"]["contexts"] == Json::array({64, 512}));
  CHECK(scored["protocol"]["box_cox"] == "checked");  // the defaults of every front end (inference_defaults.h)
  CHECK_THAT(quick.output, Catch::Contains("Box-Cox transform, its exponent by Guerrero's method"));
  CHECK_THAT(quick.output, Catch::Contains("best classical baseline"));

  // zero_shot.lua's recipe at the same seed and steps trains the same model, weight for weight.
  const auto zero = run(dir, "scripts/zero_shot.lua recipe=classical16_full steps=2 seed=1 data=nile");
  INFO(zero.output);
  REQUIRE(zero.status == 0);
  const auto a = orrery::load_safetensors(dir + "/runs/quickstart/model.safetensors");
  const auto b = orrery::load_safetensors(dir + "/runs/zero_shot/model.safetensors");
  REQUIRE(a.tensors.size() == b.tensors.size());
  for (const auto& [name, t] : a.tensors) {
    INFO(name);
    REQUIRE(b.find(name) != nullptr);
    CHECK(at::equal(t, *b.find(name)));
  }
  refuses(dir, "scripts/quickstart.lua seed=1.5 steps=2", "argument seed=1.5: \"1.5\" is not a whole number");
  refuses(dir, "scripts/quickstart.lua seed=inf steps=2", "argument seed=inf: \"inf\" is not a whole number");
  // A benchmark that is not there is refused before any training: no run folder is started.
  refuses(dir, "scripts/quickstart.lua name=typo data=nlie", "argument data=nlie: no such file or folder");
  refuses(dir, "scripts/zero_shot.lua name=typo data=nlie", "argument data=nlie: no such file or folder");
  CHECK(!fs::exists(dir + "/runs/typo"));
}

TEST_CASE("lr_transfer.lua resume= reads an earlier sweep's finished runs back and refuses another sweep's folder") {
  const std::string dir = checkout("lr-transfer-resume");
  const std::string cmd = "scripts/lr_transfer.lua params=sp widths=32 seeds=1 steps=3";
  const auto first = run(dir, cmd);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const std::string sweep = dir + "/runs/lr_transfer";
  const Json r = Json::parse(test::read_text(sweep + "/lr_transfer.json"));
  // One run is lost (as a killed process leaves it, before its summary): the resumed sweep trains it alone.
  std::string lost;
  for (const auto& e : fs::directory_iterator(sweep))
    if (fs::exists(e.path() / "summary.json")) lost = e.path().string();
  REQUIRE(!lost.empty());
  orrery::remove_tree(lost);
  const auto before = folders(sweep);
  const auto again = run(dir, cmd + " resume=runs/lr_transfer");
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK(folders(sweep).size() == before.size() + 1);  // the lost run, and nothing else
  CHECK(!fs::exists(dir + "/runs/lr_transfer-2"));
  const Json r2 = Json::parse(test::read_text(sweep + "/lr_transfer.json"));
  CHECK(r2["curves"] == r["curves"]);
  CHECK(r2["shift"] == r["shift"]);

  const auto other = run(dir, "scripts/lr_transfer.lua params=sp widths=32 seeds=1 steps=4 resume=runs/lr_transfer");
  CHECK(other.status == 1);
  CHECK_THAT(other.output, Catch::Contains("resume=runs/lr_transfer holds a sweep with other settings"));
  const auto none = run(dir, cmd + " resume=runs/nothing");
  CHECK(none.status == 1);
  CHECK_THAT(none.output, Catch::Contains("resume=runs/nothing: no lr_transfer.json there"));
}

TEST_CASE("parallel_runs starts the next run when any run ends, not when the oldest does") {
  // Two slots and three runs, the children a stub in place of orrery: "long" waits (up to a minute)
  // for "short2" to have run, which happens only if short1's slot goes to short2 while long still
  // holds its own. Waiting for the oldest child first would leave long waiting alone: its answer
  // then says so. No timing decides the outcome.
  const std::string dir = checkout("parallel-order");
  std::ofstream(dir + "/child.sh") << R"(#!/bin/sh
spec=${3#spec=}; result=${4#result=}
if grep -q '"long"' "$spec"; then
  i=0
  while [ ! -e short2.done ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
  if [ -e short2.done ]; then echo '{"ok": true, "final_loss": 1}' > "$result.tmp"
  else echo '{"ok": false, "error": "short2 never ran beside long"}' > "$result.tmp"; fi
else
  echo '{"ok": true, "final_loss": 0}' > "$result.tmp"
  grep -q '"short2"' "$spec" && touch short2.done
fi
mv "$result.tmp" "$result"
)";
  fs::permissions(dir + "/child.sh", fs::perms::owner_all);
  std::ofstream(dir + "/order.lua") << R"(
package.path = "scripts/?.lua;" .. package.path
local parallel = require("lib.parallel_runs")
orrery.program = function() return "./child.sh" end
local function run(name) return {model = {}, train = {name = name}} end
os.execute("mkdir -p runs")
for _, o in ipairs(parallel.train({run("long"), run("short1"), run("short2")}, 2, "runs")) do
  assert(o.ok, o.error)
end
print("all three answered")
)";
  const auto r = run(dir, "order.lua");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("all three answered"));
}

TEST_CASE("lr_transfer.lua span=1 trains every half-octave within an octave of the start first, and refuses other spans") {
  const std::string dir = checkout("lr-transfer-span");
  const std::string cmd = "scripts/lr_transfer.lua params=sp widths=32 seeds=1 steps=3 start=-9";
  const auto r = run(dir, cmd + " span=1");
  INFO(r.output);
  REQUIRE(r.status == 0);
  // The progress line of each rate, in the order trained: the start, its octave neighbours, then
  // the half-octaves between them, all before any octave step of the search.
  std::vector<std::string> order;
  for (size_t at = r.output.find("log2 lr"); at != std::string::npos; at = r.output.find("log2 lr", at + 1))
    order.push_back(r.output.substr(at + 8, 5));
  REQUIRE(order.size() >= 5);
  CHECK(std::vector<std::string>(order.begin(), order.begin() + 5) ==
        std::vector<std::string>{" -9.0", "-10.0", " -8.0", " -9.5", " -8.5"});
  const Json j = Json::parse(test::read_text(dir + "/runs/lr_transfer/lr_transfer.json"));
  std::set<double> rates;
  for (const auto& p : j["curves"]["sp"]["width 32"]["points"]) rates.insert(p["log2_lr"].get<double>());
  for (double x : {-10.0, -9.5, -9.0, -8.5, -8.0}) CHECK(rates.count(x) == 1);
  CHECK(j["span"] == 1);
  CHECK(!j["config"].contains("span"));  // which rates train first does not change the sweep: resume= accepts it

  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"-1", "argument 'span' of this script must be >= 0, got number -1"},
           {"0.3", "span must be a number of octaves in half-octave steps (0, 0.5, 1, ...), got 0.3"},
           {"9", "argument 'span' of this script must be <= 8, got number 9"},
           {"1e999", "argument span=1e999: \"1e999\" is not a finite number"},
           {"wide", "argument span=wide: \"wide\" is not a finite number"}}) {
    const auto b = run(dir, cmd + " span=" + bad);
    CHECK(b.status == 1);
    CHECK_THAT(b.output, Catch::Contains(message));
  }
}

TEST_CASE("lr_transfer.lua jobs=2 trains runs side by side with jobs=1's results, and refuses bad jobs and graph") {
  const std::string dir = checkout("lr-transfer-jobs");
  const std::string cmd = "scripts/lr_transfer.lua params=sp widths=32 seeds=2 steps=3";
  // One thread in both: a run's sums depend on how many threads share them.
  auto one_thread = [&](const std::string& args) {
    return test::run_command("cd '" + dir + "' && OMP_NUM_THREADS=1 " + test::orrery_cmd("run " + args));
  };
  const auto alone = one_thread(cmd);
  INFO(alone.output);
  REQUIRE(alone.status == 0);
  const auto side_by_side = one_thread(cmd + " jobs=2");
  INFO(side_by_side.output);
  REQUIRE(side_by_side.status == 0);
  const Json a = Json::parse(test::read_text(dir + "/runs/lr_transfer/lr_transfer.json"));
  const Json b = Json::parse(test::read_text(dir + "/runs/lr_transfer-1/lr_transfer.json"));
  CHECK(b["curves"] == a["curves"]);
  CHECK(b["shift"] == a["shift"]);
  CHECK(folders(dir + "/runs/lr_transfer-1") == folders(dir + "/runs/lr_transfer"));  // the same runs
  for (const auto& e : fs::directory_iterator(dir + "/runs/lr_transfer-1"))
    CHECK(!e.path().filename().string().starts_with(".run-"));  // each process's files are removed once read

  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {"0", "argument 'jobs' of this script must be >= 1, got number 0"},
           {"1.5", "argument jobs=1.5: \"1.5\" is not a whole number"},
           {"many", "argument jobs=many: \"many\" is not a whole number"}}) {
    const auto r = run(dir, cmd + " jobs=" + bad);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains(message));
  }
  const auto graph = run(dir, cmd + " graph=true");
  CHECK(graph.status == 1);
  CHECK_THAT(graph.output, Catch::Contains("graph=true records CUDA graphs: it needs device=cuda"));
  const auto graph_yes = run(dir, cmd + " graph=yes");
  CHECK(graph_yes.status == 1);
  CHECK_THAT(graph_yes.output, Catch::Contains("argument graph=yes: expected true or false"));

  // A process that stops without an answer is the caller's error, with its output; the run beside
  // it is stopped rather than left training.
  std::ofstream(dir + "/fail.lua") << R"(
package.path = "scripts/?.lua;" .. package.path
local parallel = require("lib.parallel_runs")
local bad = {model = {arch = {"no_such_architecture"}}, train = {name = "bad"}}
local long = {model = {arch = {"toto2", d_model = 16, num_layers = 1, num_heads = 1}},
              train = {data = "synthetic", steps = 100000, batch_size = 2, context_length = 64, quiet = true,
                       runs_dir = "runs", name = "long", val_batches = 0}}
local ok, err = pcall(parallel.train, {bad, long}, 2, ".")
assert(not ok, "an error")
print(err)
)";
  const auto failed = run(dir, "fail.lua");
  INFO(failed.output);
  CHECK(failed.status == 0);
  CHECK_THAT(failed.output, Catch::Contains("parallel_runs: run 1 (bad) stopped without an answer"));
  CHECK_THAT(failed.output, Catch::Contains("no_such_architecture"));
  // Stopped, not trained to the end (or stopped before it began, with no summary at all).
  if (fs::exists(dir + "/runs/long/summary.json"))
    CHECK(Json::parse(test::read_text(dir + "/runs/long/summary.json"))["steps"].get<int>() < 100000);
}

TEST_CASE("covariate_injection.lua scores every arm with and without its covariate, paired by task, and resumes") {
  const std::string dir = checkout("covariate-injection");
  const std::string cmd = "scripts/covariate_injection.lua steps=3 seeds=2 tasks=4 horizon=8 context=32 batch=4";
  const auto first = run(dir, cmd);
  INFO(first.output);
  REQUIRE(first.status == 0);
  const Json r = Json::parse(test::read_text(dir + "/runs/covariate_injection/covariate_injection.json"));
  REQUIRE(r["summary"].size() == 7);
  for (const char* arm : {"lag 0, known-future", "lag 1, known-future", "lag 8, known-future", "lag 8, past-only",
                          "noise covariate", "placebo (another task's)", "lag 12, past-only"}) {
    INFO(arm);
    const Json& s = r["summary"][arm];
    CHECK(s["change"].contains("verdict"));
    CHECK(s["crps_with"].get<double>() > 0);
    CHECK(s["crps_with"] != s["crps_without"]);  // the covariate reaches the forecast
  }
  REQUIRE(r["scores"].size() == 2);  // one entry per seed
  CHECK(r["scores"]["0"].size() == 7);
  CHECK(r["scores"]["0"][0].size() == 4);  // one per task
  CHECK_THAT(first.output, Catch::Contains("model: with / without - 1 (90% bootstrap)"));
  // The known-future arms are also scored through the in-context regression; where the target
  // is its covariate plus noise (lag 0) the fit takes nearly all of it, whatever the model.
  INFO("lag 0 through the regression: " << r["summary"]["lag 0, known-future"]["regression"].dump());
  CHECK(r["summary"]["lag 0, known-future"]["regression"]["change"]["verdict"] == "better");
  CHECK(r["summary"]["lag 0, known-future"]["regression"]["crps"].get<double>() <
        0.5 * r["summary"]["lag 0, known-future"]["crps_without"].get<double>());
  CHECK(!r["summary"]["lag 8, past-only"].contains("regression"));
  CHECK(fs::exists(dir + "/runs/covariate_injection/runs/s1/model.safetensors"));  // each seed's model, saved
  rerun_without_training(dir, cmd, "runs/covariate_injection/runs", "runs/covariate_injection/covariate_injection.json");
  // Bad arguments are refused with a message naming them.
  auto refused = [&](const std::string& args, const std::string& message) {
    const auto r = run(dir, "scripts/covariate_injection.lua " + args);
    INFO(args);
    CHECK(r.status == 1);
    CHECK_THAT(r.output, Catch::Contains(message));
  };
  refused("steps=abc", "argument steps=abc: \"abc\" is not a whole number");
  refused("variate_layers=3", "variate_layers must divide layers into groups of at least 2 (one along time), got 3 of 4");
  refused("layers=6 variate_layers=4", "got 4 of 6");
  refused("injection_lag=0", "injection_lag is for prior=injection");
  refused("prior=injection injection_tasks=0", "argument 'injection_tasks' of this script must be >= 1, got number 0");
  refused("prior=easy", "argument 'prior' of this script must be one of mixed, simple, injection, got the string \"easy\"");
  refused("max_effect=-2", "argument 'max_effect' of this script must be >= 0, got number -2");
  refused("max_effect=0", "max_effect must be above 0, got 0");
  refused("signs=negative", "argument 'signs' of this script must be one of positive, both, got the string \"negative\"");
  refused("variate_attention=both", "argument 'variate_attention' of this script must be one of patch, joint, got the string \"both\"");
  refused("prior=injection injection_noise=1", "injection_noise must be a share in [0, 1), got 1");
  refused("injection_noise=0.2", "injection_noise is for prior=injection");
  refused("against=missing.json", "against=missing.json: ");
  refused("covariate_lags=-1", "argument 'covariate_lags' of this script must be >= 0, got number -1");
  refused("covariate_match=yes", "argument covariate_match=yes: expected true or false");
  refused("variate_first=1", "argument variate_first=1: expected true or false");
  refused("covariate_match=true", "covariate_match=true reads how well a row matches once aligned by lag: give covariate_lags=K too");
  refused("prior=injection injection_plain=1", "injection_plain must be a share in [0, 1), got 1");
  refused("injection_plain=0.5", "injection_plain is for prior=injection");
  refused("prior=injection injection_hard=true", "injection_hard=true picks noise tasks' targets: give injection_noise too");
  refused("injection_noise=0.2 injection_hard=true", "injection_noise is for prior=injection");
  refused("prior=injection injection_noise=0.5 injection_hard=true injection_tasks=1",
          "injection_hard=true picks each noise task's target among the other paths: injection_tasks must be at least 2, got 1");
  refused("prior=injection max_lag=4", "max_lag shapes the mixed prior's covariate tasks; prior=injection fixes its own");
  // A tiny run into runs_dir `under`: the saved spec of its one model.
  auto tiny = [&](const std::string& args, const std::string& under) {
    const auto r = run(dir, "scripts/covariate_injection.lua steps=3 seeds=1 tasks=4 horizon=8 context=32 batch=4 " +
                                args + " runs_dir=" + under);
    INFO(r.output);
    REQUIRE(r.status == 0);
    return Json::parse(test::read_text(dir + "/" + under + "/covariate_injection/runs/s0/config.json"));
  };
  // The ceiling: trained on injection tasks of its own (lags 0 to twice the horizon, from other
  // paths), written as a long CSV with the covariate known over the horizon.
  const Json ceiling = tiny("prior=injection", "ceiling");
  const std::string tasks = test::read_text(dir + "/ceiling/covariate_injection/injection_tasks.csv");
  CHECK(tasks.rfind("id,time,y,x\n", 0) == 0);
  CHECK(std::count(tasks.begin(), tasks.end(), '\n') == 1 + 1024 * (2 * 32 + 2 * 8));
  CHECK(ceiling.dump().find("injection_tasks.csv") != std::string::npos);
  // The prior's covariate effects, as the options name them, reach the training data.
  const Json wide = tiny("max_effect=30 max_lag=20", "wide")["data"];
  CHECK(wide["options"]["max_effect"] == 30);
  CHECK(wide["describe"]["covariate_tasks"]["max_lag"] == 20);
  // Fewer tasks, all of lag 0; or of lags 0, 8 and 16 (a step of 8, to twice the horizon): each
  // task's y is its x that many steps before, plus noise of a tenth of x's spread. How many tasks
  // follow their covariate so.
  auto following = [&](const std::string& under, int tasks, const std::vector<int>& lags) {
    const std::string text = test::read_text(dir + "/" + under + "/covariate_injection/injection_tasks.csv");
    CHECK(std::count(text.begin(), text.end(), '\n') == 1 + tasks * (2 * 32 + 2 * 8));
    std::istringstream rows(text);
    std::string line;
    std::getline(rows, line);  // the header
    std::map<int, std::vector<std::pair<double, double>>> by_task;  // (y, x) rows
    while (std::getline(rows, line)) {
      int id, t;
      double y, x;
      REQUIRE(std::sscanf(line.c_str(), "%d,%d,%lf,%lf", &id, &t, &y, &x) == 4);
      by_task[id].emplace_back(y, x);
    }
    REQUIRE(by_task.size() == static_cast<size_t>(tasks));
    int n = 0;
    for (const auto& [id, r] : by_task) {  // y[t] - x[t - lag]: noise, its variance a hundredth of x's
      const size_t lag = static_cast<size_t>(lags[static_cast<size_t>(id - 1) % lags.size()]);
      double mean = 0, var = 0, gap = 0;
      for (const auto& [y, x] : r) mean += x / static_cast<double>(r.size());
      for (const auto& [y, x] : r) var += (x - mean) * (x - mean);
      for (size_t t = lag; t < r.size(); ++t) gap += (r[t].first - r[t - lag].second) * (r[t].first - r[t - lag].second);
      n += gap < 0.05 * var;
    }
    return n;
  };
  tiny("prior=injection injection_tasks=40 injection_lag=0", "lag0");
  CHECK(following("lag0", 40, {0}) == 40);
  tiny("prior=injection injection_tasks=40 injection_lag_step=8", "step8");
  CHECK(following("step8", 40, {0, 8, 16}) == 40);
  // Half of them, drawn at random, follow another path: their covariate is noise.
  tiny("prior=injection injection_tasks=40 injection_lag=0 injection_noise=0.5", "noisy");
  const int followers = following("noisy", 40, {0});
  CHECK((followers >= 10 && followers <= 30));
  // Two variate layers, opening their groups: the model says so in its saved spec; and a deeper
  // model with variate layers alternating.
  const std::string two = tiny("variate_layers=2 variate_first=true", "two").dump();
  CHECK(two.find("\"layer_group_size\":2") != std::string::npos);
  CHECK(two.find("\"variate_layer_first\":true") != std::string::npos);
  const std::string deep = tiny("layers=6 variate_layers=3", "deep").dump();
  CHECK(deep.find("\"num_layers\":6") != std::string::npos);
  CHECK(deep.find("\"layer_group_size\":2") != std::string::npos);
  // Variate layers that attend along time too.
  CHECK(tiny("variate_attention=joint", "joint").dump().find("\"variate_attention\":\"joint\"") != std::string::npos);
  // Known-future rows aligned by lag: part of the model.
  CHECK(tiny("covariate_lags=12", "lags").dump().find("\"covariate_lags\":12") != std::string::npos);
  // The known-future arms also through the regression over lags 0..8: it finds the lags of 1 and
  // 8 that the regression at lag 0 cannot see, and the past-only arm has none.
  tiny("regression_lags=8", "lagged");
  const Json lagged = Json::parse(test::read_text(dir + "/lagged/covariate_injection/covariate_injection.json"));
  CHECK(lagged["config"]["regression_lags"] == 8);
  for (const char* arm : {"lag 1, known-future", "lag 8, known-future"}) {
    INFO(arm << ": " << lagged["summary"][arm].dump());
    CHECK(lagged["summary"][arm]["lagged_regression"]["crps"].get<double>() <
          0.5 * lagged["summary"][arm]["crps_without"].get<double>());
  }
  CHECK(!lagged["summary"]["lag 8, past-only"].contains("lagged_regression"));
  CHECK(!r["summary"]["lag 1, known-future"].contains("lagged_regression"));  // not asked for
  refused("regression_lags=-3", "argument 'regression_lags' of this script must be >= 0, got number -3");
  // ... reading how well each row matches once aligned.
  CHECK(tiny("covariate_lags=12 covariate_match=true", "match").dump().find("\"covariate_match\":true") != std::string::npos);
  // Injection tasks mixed with their targets alone: a mixture of the tasks' CSV read with and
  // without its covariate column, weighted by the share.
  const Json plain = tiny("prior=injection injection_plain=0.25", "plain")["data"]["describe"]["sources"];
  INFO(plain.dump());
  REQUIRE(plain.size() == 2);
  CHECK(plain[0]["share"] == 0.75);
  CHECK(plain[0]["source"]["future_covariates"] == 1);
  CHECK(plain[0]["source"]["variates"] == 2);
  CHECK(plain[1]["share"] == 0.25);
  CHECK(plain[1]["source"]["future_covariates"] == 0);
  CHECK(plain[1]["source"]["variates"] == 1);
  // injection_hard=true: a noise task's target is the likeliest-looking of 8 other paths, so the
  // noise tasks' targets correlate with their covariates more than a path drawn at random does.
  // (A driver's target is its covariate at some lag up to 16, plus a tenth of its spread in noise.)
  auto noise_task_correlation = [&](const std::string& under) {
    std::map<int, std::pair<std::vector<double>, std::vector<double>>> rows;
    std::ifstream in(dir + "/" + under + "/covariate_injection/injection_tasks.csv");
    std::string line;
    std::getline(in, line);  // id,time,y,x
    while (std::getline(in, line)) {
      int id = 0, t = 0;
      double y = 0, x = 0;
      REQUIRE(std::sscanf(line.c_str(), "%d,%d,%lf,%lf", &id, &t, &y, &x) == 4);
      rows[id].first.push_back(y), rows[id].second.push_back(x);
    }
    const auto corr = [](const double* a, const double* b, size_t n) {
      double ma = 0, mb = 0, ab = 0, aa = 0, bb = 0;
      for (size_t t = 0; t < n; ++t) ma += a[t] / n, mb += b[t] / n;
      for (size_t t = 0; t < n; ++t) ab += (a[t] - ma) * (b[t] - mb), aa += (a[t] - ma) * (a[t] - ma), bb += (b[t] - mb) * (b[t] - mb);
      return std::fabs(ab) / std::sqrt(aa * bb);
    };
    double sum = 0;
    int noise = 0;
    for (const auto& [id, yx] : rows) {
      const auto& [y, x] = yx;
      double best = 0;  // the best lag's: a driver's is near 1
      for (size_t k = 0; k <= 16; ++k) best = std::max(best, corr(y.data() + k, x.data(), y.size() - k));
      if (best < 0.97) sum += corr(y.data(), x.data(), y.size()), ++noise;
    }
    REQUIRE(noise >= 16);  // half of 64 tasks, give or take
    return sum / noise;
  };
  tiny("prior=injection injection_noise=0.5 injection_tasks=64", "noise_random");
  tiny("prior=injection injection_noise=0.5 injection_tasks=64 injection_hard=true", "noise_hard");
  const double random_r = noise_task_correlation("noise_random"), hard_r = noise_task_correlation("noise_hard");
  INFO("noise tasks' mean |r| at lag 0: random " << random_r << ", hard " << hard_r);
  CHECK(hard_r > random_r + 0.1);

  // Paired against another run on the same tasks: per arm, how much further this run's ratio goes.
  const std::string other = "joint/covariate_injection/covariate_injection.json";
  const auto paired = run(dir, "scripts/covariate_injection.lua steps=3 seeds=1 tasks=4 horizon=8 context=32 batch=4 "
                               "runs_dir=against against=" + other);
  INFO(paired.output);
  CHECK(paired.status == 0);
  CHECK_THAT(paired.output, Catch::Contains("against " + other + " (1 seeds): this run's with / without over that run's"));
  const Json against = Json::parse(test::read_text(dir + "/against/covariate_injection/covariate_injection.json"))["against"];
  CHECK(against["file"] == other);
  CHECK(against["noise covariate"].contains("verdict"));
  // A run from before the last arm was added pairs on the arms it has.
  Json older = Json::parse(test::read_text(dir + "/" + other));
  older["scores"]["0"].erase(6);
  std::ofstream(dir + "/older.json") << older.dump();
  const auto with_older = run(dir, "scripts/covariate_injection.lua steps=3 seeds=1 tasks=4 horizon=8 context=32 batch=4 "
                                   "runs_dir=against against=older.json");
  INFO(with_older.output);
  CHECK(with_older.status == 0);
  CHECK_THAT(with_older.output, Catch::Contains("lag 12, past-only            (not in that run)"));
  const Json paired_older = Json::parse(test::read_text(dir + "/against/covariate_injection/covariate_injection.json"))["against"];
  CHECK(paired_older["placebo (another task's)"].contains("verdict"));
  CHECK(!paired_older.contains("lag 12, past-only"));
  const auto mismatched = run(dir, "scripts/covariate_injection.lua tasks=5 horizon=8 context=32 against=" + other);
  CHECK(mismatched.status == 1);
  CHECK_THAT(mismatched.output, Catch::Contains("against=" + other + " was scored with tasks=4, this run has 5: only runs "
                                                "on the same tasks pair"));
}

TEST_CASE("covariate_benchmark.lua pairs each forecaster with and without known-future covariates, window by window") {
  const std::string dir = checkout("covariate-benchmark");
  // ARIMA left out here: its order searches cost minutes under the sanitizers; test_readme runs
  // the documented default (with arima, arima/regression and arima/xreg) in the plain build.
  const auto r = run(dir, "scripts/covariate_benchmark.lua baselines=seasonal_naive,ets");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("ets/regression vs ets"));
  // The seat-belt file gains R's law column: 0 before February 1983, 1 from it.
  const std::string belts = test::read_text(dir + "/runs/covariate_benchmark/seatbelts.csv");
  CHECK(belts.rfind("time,DriversKilled,drivers,front,rear,kms,PetrolPrice,VanKilled,law\n", 0) == 0);
  CHECK(belts.find("\n1983,") != std::string::npos);
  CHECK(belts.find(",0\n1983.083333") != std::string::npos);  // January 1983: not yet
  const Json j = Json::parse(test::read_text(dir + "/runs/covariate_benchmark/covariate_benchmark.json"));
  // Three seat-belt targets, the ozone, two beavers, Freeny's revenue, the sales with their
  // leading indicator and the orange juice price, each on its test and validation windows.
  REQUIRE(j["windows"].size() == 37);
  for (const auto& w : j["windows"]) {
    CHECK(w["crps"].contains("ets"));
    CHECK(w["crps"].contains("ets/regression"));
  }
  CHECK(j["summary"]["ets/regression vs ets (all)"]["windows"] == 37);
  for (const char* set : {"beaver1", "beaver2", "freeny"})
    CHECK(j["summary"][std::string("ets/regression vs ets (") + set + ")"]["windows"] == 2);
  // 150 untimed steps scored as a yearly series: 3 test windows of 6 and 3 validation ones; 612
  // months: 6 test windows of 12 and 5 validation ones. Both enough for an interval.
  CHECK(j["summary"]["ets/regression vs ets (bjsales)"]["windows"] == 6);
  CHECK(j["summary"]["ets/regression vs ets (frozen_juice)"]["windows"] == 11);
  CHECK(j["summary"]["ets/regression vs ets (frozen_juice)"].contains("verdict"));
  CHECK(j["summary"]["ets/regression vs ets (all)"].contains("verdict"));
  CHECK(j["summary"]["seasonal_naive/regression vs seasonal_naive (seatbelts)"]["windows"] == 12);
  CHECK(!j["windows"][0]["crps"].contains("arima"));  // baselines= chose them
  // The regression over the covariates' lags 0..6 (the default) beside the one at lag 0.
  CHECK(j["windows"][0]["crps"].contains("ets/lagged-regression"));
  CHECK(j["summary"]["ets/lagged-regression vs ets/regression (bjsales)"]["windows"] == 6);
  CHECK(j["summary"]["ets/lagged-regression vs ets (all)"]["windows"] == 37);
  // The covariates read only where they helped on a set's validation windows, scored on its test
  // windows: recomputed from the JSON's own windows.
  {
    std::map<std::string, std::pair<double, int>> validation;  // set -> sum and count of log ratios
    for (const auto& w : j["windows"]) {
      const std::string key = w["window"];
      const std::string set = key.substr(0, key.find('/'));
      if (key.find("/validation/") == std::string::npos) continue;
      validation[set].first += std::log(w["crps"]["ets/regression"].get<double>() / w["crps"]["ets"].get<double>());
      validation[set].second += 1;
    }
    double always = 0, chosen = 0;
    int tests = 0, used = 0;
    for (const auto& w : j["windows"]) {
      const std::string key = w["window"];
      if (key.find("/test/") == std::string::npos) continue;
      const std::string set = key.substr(0, key.find('/'));
      const double r = std::log(w["crps"]["ets/regression"].get<double>() / w["crps"]["ets"].get<double>());
      const bool use = validation[set].second > 0 && validation[set].first < 0;
      CHECK(j["chosen"]["ets/regression vs ets"][set][0] == use);
      always += r, chosen += use ? r : 0, tests += 1, used += use;
    }
    REQUIRE(tests > 0);
    CHECK(used > 0);
    CHECK(used < tests);  // the regression helps on some sets' validation windows and not on others
    CHECK(j["summary"]["ets/regression vs ets (test, always)"]["windows"] == tests);
    CHECK(j["summary"]["ets/regression vs ets (test, always)"]["change"].get<double>() ==
          Approx(std::expm1(always / tests)).margin(1e-12));
    CHECK(j["summary"]["ets/regression vs ets (test, chosen)"]["change"].get<double>() ==
          Approx(std::expm1(chosen / tests)).margin(1e-12));
  }
  const auto bad = run(dir, "scripts/covariate_benchmark.lua regression_lags=-1 runs_dir=bad");
  CHECK(bad.status == 1);
  CHECK_THAT(bad.output, Catch::Contains("argument 'regression_lags' of this script must be >= 0, got number -1"));
  // sets= scores the named data sets only: the sales' 6 windows.
  const auto one = run(dir, "scripts/covariate_benchmark.lua sets=bjsales baselines=seasonal_naive runs_dir=one_set");
  INFO(one.output);
  REQUIRE(one.status == 0);
  CHECK(Json::parse(test::read_text(dir + "/one_set/covariate_benchmark/covariate_benchmark.json"))["windows"].size() == 6);
  // A name given twice is scored once; an empty list is refused.
  REQUIRE(run(dir, "scripts/covariate_benchmark.lua sets=bjsales,bjsales baselines=seasonal_naive runs_dir=twice").status == 0);
  CHECK(Json::parse(test::read_text(dir + "/twice/covariate_benchmark/covariate_benchmark.json"))["windows"].size() == 6);
  const auto empty = run(dir, "scripts/covariate_benchmark.lua sets=, runs_dir=bad");
  CHECK(empty.status == 1);
  CHECK_THAT(empty.output, Catch::Contains("argument sets=,: an empty item; expected names, comma-separated"));
  const auto unknown = run(dir, "scripts/covariate_benchmark.lua sets=bjsales,nile runs_dir=bad");
  CHECK(unknown.status == 1);
  CHECK_THAT(unknown.output, Catch::Contains("sets: unknown data set 'nile' (known: seatbelts, airquality, beaver1, beaver2, "
                                             "freeny, bjsales, frozen_juice, elecdaily, insurance, us_change; or r, fpp, "
                                             "all)"));
  // sets=fpp: the textbook's three, 2 + 2 daily windows of 30, 1 + 1 monthly of 18 (40 months),
  // 3 + 3 quarterly of 8; a suite named beside one of its own sets scores it once.
  const auto fpp = run(dir, "scripts/covariate_benchmark.lua sets=fpp,insurance baselines=seasonal_naive runs_dir=fpp");
  INFO(fpp.output);
  REQUIRE(fpp.status == 0);
  const Json jf = Json::parse(test::read_text(dir + "/fpp/covariate_benchmark/covariate_benchmark.json"));
  CHECK(jf["windows"].size() == 12);
  CHECK(jf["summary"]["seasonal_naive/regression vs seasonal_naive (us_change)"]["windows"] == 6);
  CHECK(jf["windows"][0]["window"].get<std::string>().rfind("elecdaily/test/", 0) == 0);

  // With a model that reads variate roles: with its covariates as rows, without, and through the regression.
  const std::string model = dir + "/roles.safetensors";
  std::ofstream(dir + "/make.lua") << "orrery.model{arch = {\"toto2\", d_model = 16, num_layers = 2, num_heads = 1, "
                                      "variate_roles = true}, patch_size = 16}:save(\"" << model << "\")\n";
  REQUIRE(run(dir, "make.lua").status == 0);
  const auto m = run(dir, "scripts/covariate_benchmark.lua model=" + model + " baselines=seasonal_naive runs_dir=with_model");
  INFO(m.output);
  REQUIRE(m.status == 0);
  const Json jm = Json::parse(test::read_text(dir + "/with_model/covariate_benchmark/covariate_benchmark.json"));
  CHECK(jm["summary"].contains("model vs model/no-covariates (all)"));
  CHECK(jm["summary"].contains("model/regression vs model/no-covariates (all)"));
  CHECK(jm["summary"].contains("model/lagged-regression vs model/no-covariates (all)"));
  CHECK(jm["windows"][0]["crps"].contains("model1/regression"));
  // Two paths (seeds of one recipe) are pooled window by window.
  const auto two = run(dir, "scripts/covariate_benchmark.lua model=" + model + "," + model +
                             " baselines=seasonal_naive regression_lags=0 runs_dir=two_models");
  INFO(two.output);
  REQUIRE(two.status == 0);
  const Json j2 = Json::parse(test::read_text(dir + "/two_models/covariate_benchmark/covariate_benchmark.json"));
  REQUIRE(j2["summary"].contains("model vs model/no-covariates (2 models) (all)"));
  CHECK(!j2["windows"][0]["crps"].contains("model1/lagged-regression"));  // regression_lags=0: lag 0 only
  // The same model twice: the pooled change is the one model's.
  CHECK(j2["summary"]["model vs model/no-covariates (2 models) (all)"]["change"].get<double>() ==
        Approx(jm["summary"]["model vs model/no-covariates (all)"]["change"].get<double>()).epsilon(1e-9));
}

TEST_CASE("static_benchmark.lua fine-tunes each data set with and without its static covariates and pairs them by window") {
  const std::string dir = checkout("static-benchmark");
  const std::string model = dir + "/base.safetensors";
  std::ofstream(dir + "/make.lua") << "orrery.model{arch = {\"toto2\", d_model = 16, num_layers = 2, num_heads = 1}, "
                                      "patch_size = 16}:save(\"" << model << "\")\n";
  REQUIRE(run(dir, "make.lua").status == 0);
  const auto r = run(dir, "scripts/static_benchmark.lua model=" + model +
                              " sets=prison,visnights seeds=2 steps=2 batch=4 context=32");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("prison: 32 series at Q, the last 8 steps of each held out (1 window(s) of 8); "
                                       "static covariates state=ACT, state=NSW, state=NT, state=QLD, state=SA, state=TAS, "
                                       "state=VIC, state=WA, gender=Female, gender=Male, legal=Remanded, legal=Sentenced"));
  CHECK_THAT(r.output, Catch::Contains("visnights: 20 series at Q"));
  CHECK_THAT(r.output, Catch::Contains("static covariates state=NSW, state=OTH, state=QLD, state=SAU, state=VIC, state=WAU, metro"));
  // The run with statics gains a vector for each; the one without is the pretrained model's shape.
  const std::string runs = dir + "/runs/static_benchmark/";
  const Json with = Json::parse(test::read_text(runs + "prison-seed1-statics/config.json"));
  const Json without = Json::parse(test::read_text(runs + "prison-seed1-plain/config.json"));
  CHECK(with["model"]["arch"]["options"]["static_covariates"].size() == 12);
  CHECK(!without["model"]["arch"]["options"].contains("static_covariates"));
  CHECK(with["train"]["seed"] == 1);
  CHECK(without["train"]["seed"] == 1);

  // Every test window of both data sets, each forecaster on it; the pairing is the mean over the
  // seeds of the log ratio, as the JSON's own windows give it.
  const Json j = Json::parse(test::read_text(runs + "static_benchmark.json"));
  REQUIRE(j["windows"].size() == 52);
  double sum = 0;
  for (const auto& w : j["windows"]) {
    for (const char* name : {"pretrained", "seed0/statics", "seed0/plain", "seed1/statics", "seed1/plain",
                             "seasonal_naive", "ets"})
      REQUIRE(w["crps"].contains(name));
    const auto log_crps = [&](const char* name) { return std::log(w["crps"][name].get<double>()); };
    sum += (log_crps("seed0/statics") + log_crps("seed1/statics")) / 2 - (log_crps("seed0/plain") + log_crps("seed1/plain")) / 2;
  }
  const Json& paired = j["summary"]["fine-tuned with statics vs without (all)"];
  CHECK(paired["windows"] == 52);
  CHECK(paired["change"].get<double>() == Approx(std::expm1(sum / 52)).margin(1e-12));
  CHECK(paired.contains("verdict"));
  CHECK(j["summary"]["fine-tuned with statics vs without (prison)"]["windows"] == 32);
  CHECK(j["summary"]["fine-tuned with statics vs ets (visnights)"]["windows"] == 20);
  CHECK(j["data_sets"]["visnights"]["static_covariates"].size() == 7);

  // select=true: each fine-tuning runs for the length finetune.lua would choose, and a third per
  // seed runs all of steps, paired against the chosen one.
  const auto chosen = run(dir, "scripts/static_benchmark.lua model=" + model +
                                   " sets=visnights seeds=1 steps=3 batch=4 context=32 select=true runs_dir=chosen");
  INFO(chosen.output);
  REQUIRE(chosen.status == 0);
  const Json c = Json::parse(test::read_text(dir + "/chosen/static_benchmark/static_benchmark.json"));
  CHECK(c["select"] == true);
  for (const char* arm : {"statics", "plain"}) {
    const int64_t n = c["data_sets"]["visnights"]["steps"]["seed0"][arm];
    CHECK((n == 0 || n == 1 || n == 3));
  }
  CHECK(Json::parse(test::read_text(dir + "/chosen/static_benchmark/visnights-seed0-plain-fixed/config.json"))["train"]["steps"] == 3);
  // The candidates train on all but the test window and the validation window before it (8 + 8 quarters).
  CHECK(Json::parse(test::read_text(dir + "/chosen/static_benchmark/visnights-seed0-plain-select-3/config.json"))
            ["data"]["options"]["exclude_last"] == 16);
  CHECK(c["windows"][0]["crps"].contains("seed0/fixed"));
  CHECK(c["summary"]["length chosen vs 3 steps, without statics (visnights)"]["windows"] == 20);

  refuses(dir, "scripts/static_benchmark.lua", "static_benchmark.lua: give model=PATH (see --help)");
  refuses(dir, "scripts/static_benchmark.lua model=" + model + " sets=prison,milk",
          "sets: unknown data set 'milk' (known: prison, visnights, employment; or all)");
  refuses(dir, "scripts/static_benchmark.lua model=" + model + " lr=3e-4x", "argument lr=3e-4x: \"3e-4x\" is not a finite number");
  refuses(dir, "scripts/static_benchmark.lua model=" + model + " lr=0", "lr must be above 0, got 0");
  refuses(dir, "scripts/static_benchmark.lua model=" + model + " seeds=0", "argument 'seeds' of this script must be >= 1, got number 0");
}

TEST_CASE("finetune.lua chooses how long to fine-tune on the validation windows before the test") {
  const std::string dir = checkout("finetune-select");
  {
    std::ofstream csv(dir + "/daily.csv");  // 8 daily series of 300 days: a weekly pattern on a level each
    csv << "time,a,b,c,d,e,f,g,h\n";
    for (int t = 0; t < 300; ++t) {
      csv << 86400 * t;
      for (int s = 0; s < 8; ++s) csv << "," << 10 * (s + 1) + (t % 7) * (s + 1) + (13 * t + 5 * s) % 4;
      csv << "\n";
    }
  }
  const std::string model = dir + "/base.safetensors";
  std::ofstream(dir + "/make.lua") << "orrery.model{arch = {\"toto2\", d_model = 16, num_layers = 2, num_heads = 1}, "
                                      "patch_size = 16}:save(\"" << model << "\")\n";
  REQUIRE(run(dir, "make.lua").status == 0);
  const std::string base = "scripts/finetune.lua model=" + model + " data=daily.csv timestamp_format=unix batch=4 context=32 ";

  // Four lengths (none, a ninth, a third, all of steps=27), each trained on everything before the
  // validation window; the choice the lowest validation CRPS among those that beat none window by
  // window (an interval below 0). An untrained model at lr 1e-2 on a clean weekly pattern gains.
  const auto r = run(dir, base + "steps=27 lr=1e-2");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("fine-tuning length, by CRPS on 1 validation window(s) of 30 a series before the test "
                                       "(against none, window by window): 0 steps"));
  const Json choice = Json::parse(test::read_text(dir + "/runs/finetune/selection.json"));
  CHECK(choice["excluded"] == 60);  // the test window and the validation window, 30 steps each
  REQUIRE(choice["tried"].size() == 4);
  int64_t best = -1;
  double lowest = 0;
  for (const auto& t : choice["tried"]) {
    if (t["steps"] != 0) {
      REQUIRE(t.contains("high"));  // 8 windows: enough for an interval
      CHECK((t["verdict"] == "better") == (t["high"].get<double>() < 0));
    }
    const bool eligible = t["steps"] == 0 || t["verdict"] == "better";
    if (eligible && (best < 0 || t["crps"].get<double>() < lowest)) best = t["steps"], lowest = t["crps"];
    if (t["steps"] == 0) continue;
    const std::string n = std::to_string(t["steps"].get<int64_t>());
    const Json config = Json::parse(test::read_text(dir + "/runs/finetune-select-" + n + "/config.json"));
    CHECK(config["train"]["steps"] == t["steps"]);
    CHECK(config["data"]["options"]["exclude_last"] == 60);
    CHECK(config["train"]["val_batches"] == 0);
  }
  CHECK(choice["tried"][1]["steps"] == 3);
  CHECK(choice["tried"][3]["steps"] == 27);
  CHECK(choice["steps"] == best);
  REQUIRE(best > 0);  // the chosen length, run on everything before the test window
  const Json config = Json::parse(test::read_text(dir + "/runs/finetune/config.json"));
  CHECK(config["train"]["steps"] == best);
  CHECK(config["data"]["options"]["exclude_last"] == 30);

  // Four series give four validation windows, too few for an interval: no length can show it
  // beats none, so none is run, and the tuned model, kept beside an earlier run of the name,
  // scores as the pretrained one does.
  {
    std::ofstream csv(dir + "/four.csv");
    csv << "time,a,b,c,d\n";
    for (int t = 0; t < 300; ++t) {
      csv << 86400 * t;
      for (int s = 0; s < 4; ++s) csv << "," << 10 * (s + 1) + (t % 7) * (s + 1) + (13 * t + 5 * s) % 4;
      csv << "\n";
    }
  }
  fs::create_directories(dir + "/runs/kept");
  std::ofstream(dir + "/runs/kept/marker") << "an earlier run\n";
  const auto still = run(dir, "scripts/finetune.lua model=" + model + " data=four.csv timestamp_format=unix batch=4 "
                              "context=32 steps=27 lr=1e-2 name=kept");
  INFO(still.output);
  REQUIRE(still.status == 0);
  CHECK_THAT(still.output, Catch::Contains("3 steps 0.") && Catch::Contains("(too few windows)") &&
                               Catch::Contains("-> 0\n"));
  CHECK_THAT(still.output, Catch::Contains("no length of fine-tuning beat the pretrained model on the validation windows"));
  CHECK(test::read_text(dir + "/runs/kept/marker") == "an earlier run\n");
  const Json kept = Json::parse(test::read_text(dir + "/runs/kept-1/selection.json"));
  CHECK(kept["steps"] == 0);
  for (const auto& t : kept["tried"]) CHECK((t["steps"] == 0 || t["verdict"] == "too few windows"));
  CHECK(fs::exists(dir + "/runs/kept-1/model.safetensors"));
  CHECK(!fs::exists(dir + "/runs/kept-1/config.json"));  // nothing was trained into it
  const Json eval = Json::parse(test::read_text(dir + "/runs/kept-1/eval.json"));
  std::map<std::string, double> crps;
  for (const auto& row : eval["summary"]) crps[row["model"]] = row["crps"];
  CHECK(crps.at("tuned") == crps.at("pretrained"));

  // 60 days: a test window of 30, but no room for a validation window of 30 before it.
  {
    std::ofstream csv(dir + "/short.csv");
    csv << "time,a,b\n";
    for (int t = 0; t < 60; ++t) csv << 86400 * t << "," << 10 + t % 7 << "," << 20 + (3 * t) % 5 << "\n";
  }
  const std::string short_run = "scripts/finetune.lua model=" + model + " data=short.csv timestamp_format=unix batch=4 "
                                "context=32 steps=2";
  refuses(dir, short_run, "no validation window to choose the fine-tuning's length on: give select=false");
  refuses(dir, base + "select=maybe", "argument select=maybe: expected true or false");
  refuses(dir, base + "select=false validation_windows=2", "validation_windows needs select=true");
  refuses(dir, base + "validation_windows=0", "argument 'validation_windows' of this script must be >= 1, got number 0");
  refuses(dir, base + "validation_windows=1e40", "argument validation_windows=1e40: \"1e40\" is not a whole number");
  refuses(dir, base + "select=", "argument select=: no value; expected true or false");
  refuses(dir, base + "lr=1e999", "argument lr=1e999: \"1e999\" is not a finite number");
  refuses(dir, base + "steps=0", "argument 'steps' of this script must be >= 1, got number 0");
  refuses(dir, base + "lr=fast", "argument lr=fast: \"fast\" is not a finite number");
  refuses(dir, base + "stpes=2", "scripts/finetune.lua: unknown argument 'stpes' (did you mean 'steps'?)");
}

namespace {

// A corpus of numbered paragraphs: the number says which document a row's text came from (a
// document cropped at a row's end may lose its number's last digits, hence "says" after it).
std::string numbered_corpus(int documents) {
  std::string corpus;
  for (int d = 0; d < documents; ++d)
    corpus += "Paragraph " + std::to_string(d) + " says the " + (d % 2 ? "river" : "mountain") + " is " +
              std::string(d % 3 ? "old" : "young") + ".\n\n";
  return corpus;
}

}  // namespace

TEST_CASE("data:held_out draws the held-out documents only; lib/ngram.lua's models are distributions") {
  const std::string dir = checkout("ngram");
  std::ofstream(dir + "/c.txt") << numbered_corpus(400);
  std::ofstream(dir + "/probe.lua") << R"(
package.path = "scripts/?.lua;" .. package.path
local ngram = require("lib.ngram")
local data = orrery.data{"text", files = "c.txt", vocab_size = 300}
local held = data:held_out()
local function numbers(source)
  local seen, count = {}, 0
  for seed = 0, 19 do
    for _, row in ipairs(source:sample(8, 32, seed)) do
      for n in source:decode(row[1]):gmatch("Paragraph (%d+) says") do
        if not seen[n] then seen[n], count = true, count + 1 end
      end
    end
  end
  return seen, count
end
local train, n_train = numbers(data)
local val, n_val = numbers(held)
local shared = 0
for n in pairs(val) do if train[n] then shared = shared + 1 end end
print(string.format("documents: train %d held out %d shared %d of %d", n_train, n_val, shared,
                    held:describe().validation_documents))

-- Every context's next-byte distribution sums to 1, seen or not.
local bytes = ngram.bytes(4)
bytes.train_text("abracadabra, abracadabra")
for _, ctx in ipairs{"", "a", "abr", "cad", "zzz", "ab\0"} do
  local total = 0
  for b = 0, 255 do
    local s = ctx .. string.char(b)
    total = total + 2 ^ -bytes.bits_text(s, #s, #s)
  end
  print(string.format("sum after %q %.12f", ctx, total))
end
-- Unigram: add-one over a vocabulary of 10 after counts {1: 2, 2: 1}.
local uni = ngram.unigram(10)
uni.train({{{1, 1, 2}}})
print(string.format("unigram %.12f %.12f", uni.bits(1), -math.log(3 / 13, 2)))
-- Scored: targets after the first position with bytes; BOS (id 0) has none.
local codec = {bos = 0, text = {[0] = "", [1] = "ab", [2] = "c"}}
local s = ngram.score({{{0, 1, 2, 0, 2, 1}}}, codec, uni, bytes)
local expect = uni.bits(1) * 2 + uni.bits(2) * 2
print(string.format("scored bytes %d unigram %.12f %.12f", s.bytes, s.unigram_bits, expect))
print(string.format("bytes model %.12f %.12f", s.bytes_bits,
                    bytes.bits_text("abc", 1, 3) + bytes.bits_text("cab", 1, 3)))
)";
  const auto r = run(dir, "probe.lua");
  INFO(r.output);
  REQUIRE(r.status == 0);
  int train = 0, held = 0, shared = 0, total = 0;
  REQUIRE(std::sscanf(r.output.c_str() + r.output.find("documents:"), "documents: train %d held out %d shared %d of %d",
                      &train, &held, &shared, &total) == 4);
  CHECK(shared == 0);
  CHECK(held > 0);
  CHECK(held <= total);
  CHECK(train > 100);
  for (const char* ctx : {"\"\"", "\"a\"", "\"abr\"", "\"cad\"", "\"zzz\"", "\"ab\\0\""}) {
    const auto at = r.output.find(std::string("sum after ") + ctx);
    REQUIRE(at != std::string::npos);
    CHECK(std::stod(r.output.substr(r.output.find(' ', at + 10 + std::strlen(ctx)))) == Approx(1.0).epsilon(1e-12));
  }
  double a = 0, b = 0;
  REQUIRE(std::sscanf(r.output.c_str() + r.output.find("unigram "), "unigram %lf %lf", &a, &b) == 2);
  CHECK(a == Approx(b).epsilon(1e-12));
  int n = 0;
  REQUIRE(std::sscanf(r.output.c_str() + r.output.find("scored"), "scored bytes %d unigram %lf %lf", &n, &a, &b) == 3);
  CHECK(n == 6);  // ab, c after the first BOS; c, ab after the second
  CHECK(a == Approx(b).epsilon(1e-12));
  REQUIRE(std::sscanf(r.output.c_str() + r.output.find("bytes model"), "bytes model %lf %lf", &a, &b) == 2);
  CHECK(a == Approx(b).epsilon(1e-12));
}

TEST_CASE("nanogpt.lua trains the nanochat way, scores two baselines on the held-out rows, samples, and reloads") {
  const std::string dir = checkout("nanogpt");
  std::ofstream(dir + "/c.txt") << numbered_corpus(300);
  const auto r = run(dir, "scripts/nanogpt.lua files=c.txt vocab=300 width=32 depth=2 heads=2 context=32 batch=4 "
                          "steps=6 val_batches=2 samples=2 sample_steps=5 prompt=Paragraph");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK_THAT(r.output, Catch::Contains("validation bits per byte: 8 held-out rows of 32 tokens"));
  const Json j = Json::parse(test::read_text(dir + "/runs/nanogpt/nanogpt.json"));
  for (const char* k : {"gpt", "unigram", "bytes_5gram"}) {
    INFO(k);
    CHECK(std::isfinite(j["bits_per_byte"][k].get<double>()));
    CHECK(j["bits_per_byte"][k].get<double>() > 0);
  }
  // Paired on the same rows: each difference is gpt's figure minus the baseline's, inside its interval.
  for (const char* k : {"unigram", "bytes_5gram"}) {
    INFO(k);
    const Json& d = j["gpt_minus"][k];
    CHECK(d["difference"].get<double>() ==
          Approx(j["bits_per_byte"]["gpt"].get<double>() - j["bits_per_byte"][k].get<double>()).epsilon(1e-9));
    CHECK(d["low"].get<double>() <= d["difference"].get<double>() + 1e-12);
    CHECK(d["high"].get<double>() >= d["difference"].get<double>() - 1e-12);
  }
  CHECK(j["train_tokens"] == 6 * 4 * 32);
  REQUIRE(j["samples"].size() == 2);
  CHECK(j["samples"][0].get<std::string>().rfind("Paragraph", 0) == 0);
  // nanochat's groups: the unembedding, the embedding, the value embeddings and the two kinds of
  // scalars to AdamW on the learning-rate schedule alone, the rest (the matrices) to NorMuon.
  const Json routing = Json::parse(test::read_text(dir + "/runs/nanogpt/config.json"))["routing"];
  INFO(routing.dump());
  REQUIRE(routing.size() == 6);
  CHECK(routing[0]["parameters"] == 32 * 300);  // lm_head.unembed
  CHECK(routing[1]["parameters"] == 300 * 32);  // wte
  for (int g = 0; g < 5; ++g) {
    CHECK(routing[g]["optimizer"]["name"] == "adamw");
    CHECK(routing[g]["tensors"] == 1);
    CHECK(routing[g]["schedules"] == Json::array({"lr"}));
  }
  CHECK(routing[0]["optimizer"]["options"]["lr"].get<double>() == Approx(0.008 / std::sqrt(32.0 / 768)));
  CHECK(routing[5]["optimizer"]["name"] == "normuon");
  CHECK(routing[5]["optimizer"]["options"]["normalise_axis"] == "longer");
  CHECK(routing[5]["schedules"] == Json::array({"lr", "momentum", "weight_decay"}));
  CHECK(fs::exists(dir + "/runs/nanogpt/tokenizer.json"));

  // The run loads again and generates, as in `orrery repl`.
  std::ofstream(dir + "/again.lua") << R"(
local m = orrery.load("runs/nanogpt")
local d = orrery.data{"text", files = "c.txt", tokenizer = "runs/nanogpt/tokenizer.json"}
print("again: " .. d:decode(m:generate{values = d:encode("Paragraph"), steps = 5, seed = 1}))
)";
  const auto again = run(dir, "again.lua");
  INFO(again.output);
  REQUIRE(again.status == 0);
  CHECK_THAT(again.output, Catch::Contains("again: "));

  const auto few = run(dir, "scripts/nanogpt.lua files=c.txt val_batches=1");
  CHECK(few.status != 0);
  CHECK_THAT(few.output, Catch::Contains("argument 'val_batches' of this script must be >= 2, got number 1"));
  const auto missing = run(dir, "scripts/nanogpt.lua files=nowhere.txt");
  CHECK(missing.status != 0);
  CHECK_THAT(missing.output, Catch::Contains("no corpus at 'nowhere.txt'") && Catch::Contains("bible -l1000"));
}

TEST_CASE("lr_transfer.lua and coord_check.lua arch=gpt sweep nanochat's GPT on a text corpus") {
  const std::string dir = checkout("gpt-sweeps");
  std::ofstream(dir + "/c.txt") << numbered_corpus(300);
  const auto lr = run(dir, "scripts/lr_transfer.lua arch=gpt files=c.txt vocab=300 params=sp,umup widths=32,64 "
                           "seeds=1 steps=2 val_batches=1");
  INFO(lr.output);
  REQUIRE(lr.status == 0);
  const Json r = Json::parse(test::read_text(dir + "/runs/lr_transfer/lr_transfer.json"));
  CHECK(r["config"]["arch"] == "gpt");
  CHECK(r["config"]["vocab"] == 300);
  CHECK_THAT(r["config"]["metric"].get<std::string>(), Catch::Contains("rows of tokens"));
  CHECK(r["curves"].contains("sp"));
  CHECK(r["curves"].contains("umup"));
  // Every run trained the GPT on the text, with the sweep's one tokenizer.
  int runs = 0;
  for (const auto& e : fs::directory_iterator(dir + "/runs/lr_transfer")) {
    if (!fs::exists(e.path() / "config.json")) continue;
    const Json c = Json::parse(test::read_text((e.path() / "config.json").string()));
    CHECK(c["model"]["arch"]["name"] == "gpt");
    CHECK(c["data"]["options"]["tokenizer"] == "runs/lr_transfer/tokenizer.json");
    ++runs;
  }
  CHECK(runs >= 6);  // two widths, two parametrisations, at least a start and its neighbours... of one
  const auto coord = run(dir, "scripts/coord_check.lua arch=gpt files=c.txt vocab=300 widths=32,64 seeds=1 steps=1");
  INFO(coord.output);
  REQUIRE(coord.status == 0);
  const Json c = Json::parse(test::read_text(dir + "/runs/coord_check/coord_check.json"));
  CHECK(c["params"]["umup"]["layers"].size() > 10);
  const auto depth = run(dir, "scripts/coord_check.lua arch=gpt files=c.txt vocab=300 depths=2,4 width=32 seeds=1 "
                              "steps=1 runs_dir=depth");
  INFO(depth.output);
  REQUIRE(depth.status == 0);
  refuses(dir, "scripts/coord_check.lua arch=gpt files=missing.txt", "arch=gpt: no corpus at 'missing.txt'");
  refuses(dir, "scripts/coord_check.lua arch=lstm",
          "argument 'arch' of this script must be one of toto2, gpt, got the string \"lstm\"");

  // head_dim=D: width / D heads of D channels at every width, kept in the sweep's config.
  const auto fixed = run(dir, "scripts/lr_transfer.lua arch=gpt files=c.txt vocab=300 head_dim=16 params=umup "
                              "widths=32,64 seeds=1 steps=1 val_batches=1 runs_dir=heads");
  INFO(fixed.output);
  REQUIRE(fixed.status == 0);
  CHECK(Json::parse(test::read_text(dir + "/heads/lr_transfer/lr_transfer.json"))["config"]["head_dim"] == 16);
  std::set<int> heads;
  for (const auto& e : fs::directory_iterator(dir + "/heads/lr_transfer")) {
    if (!fs::exists(e.path() / "config.json")) continue;
    const Json a = Json::parse(test::read_text((e.path() / "config.json").string()))["model"]["arch"]["options"];
    CHECK(a["num_heads"].get<int>() * 16 == a["d_model"].get<int>());
    heads.insert(a["num_heads"].get<int>());
  }
  CHECK(heads == std::set<int>{2, 4});
  // Before anything trains: the last width is checked as the first is.
  refuses(dir, "scripts/lr_transfer.lua arch=gpt files=c.txt vocab=300 head_dim=16 widths=32,40 runs_dir=bad",
          "head_dim=16 does not divide width 40");
  for (const auto& sweep : fs::directory_iterator(dir + "/bad"))
    if (sweep.is_directory())
      for (const auto& e : fs::directory_iterator(sweep.path())) CHECK_FALSE(fs::exists(e.path() / "config.json"));
  refuses(dir, "scripts/coord_check.lua arch=gpt files=c.txt vocab=300 head_dim=3 widths=33", "head_dim must be even");
  refuses(dir, "scripts/coord_check.lua arch=gpt files=c.txt head_dim=wide",
          "argument head_dim=wide: \"wide\" is not a whole number");
}
