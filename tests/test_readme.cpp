// Every command and Lua example in README.md, the reference pages of docs/ and the reports of
// docs/results/ runs, so none can rot. Each line of a fenced `sh` block (once, where pages repeat
// one) and each fenced `lua` block is exercised here, in page order, in a scratch folder laid out
// like a checkout (build/bin/orrery, scripts/, assets/). The long ones run with fewer steps, and
// the dashboard under xvfb-run; the table below says what runs in place of what. A command this
// table does not know, an entry no page has any more, or a page of docs/ this test does not read
// fails.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "support.h"

namespace fs = std::filesystem;

namespace {

struct Exercise {
  std::string readme;   // the command as the README writes it (its comment stripped)
  std::string instead;  // what runs in its place; empty = the command itself
  std::string expect;   // text its output holds, or "file:PATH" that it writes
};

const std::string kQuick = "build/bin/orrery run scripts/quickstart.lua";
const std::string kXvfb = "xvfb-run -a -s '-screen 0 1280x800x24' ";
const std::string kCMake = "'" ORRERY_CMAKE "'";
const std::string kGenesis = "bible -l1000 \"gen1:1-gen50:26\" > genesis.txt && ";  // a small corpus

const std::vector<Exercise> kExercises = {
    // `make run` is setup + build + the quickstart; the quickstart runs here with fewer steps
    // (`make test` is what CI runs, and this test is part of it; `make check` a subset of it).
    {"make run", kQuick + " steps=40", "best classical baseline"},
    {"make test", "", ""},
    {"make check", "", ""},
    {kQuick + " --help", "", "steps=2400"},
    {kQuick + " steps=500 name=short", kQuick + " steps=20 name=short", "Run directory: runs/short"},
    {kQuick + " seed=1 name=seed1", kQuick + " seed=1 steps=20 name=seed1", "Run directory: runs/seed1"},
    // docs/plugins.md: a plugin of one's own, from an install of this build to a trained model.
    {"make install PREFIX=$HOME/orrery", kCMake + " --install '" ORRERY_BUILD_DIR "' --prefix orrery-install",
     "file:orrery-install/lib/cmake/Orrery/OrreryConfig.cmake"},
    {"$HOME/orrery/bin/orrery new plugin optimizer signum", "orrery-install/bin/orrery new plugin optimizer signum",
     "wrote signum"},
    {"cmake -S signum -B signum/build -DCMAKE_PREFIX_PATH=$HOME/orrery",
     kCMake + " -S signum -B signum/build -G Ninja -DCMAKE_MAKE_PROGRAM='" ORRERY_NINJA "' -DCMAKE_PREFIX_PATH=$PWD/orrery-install",
     "Build files have been written"},
    {"cmake --build signum/build", kCMake + " --build signum/build", "file:signum/build/optim_signum.so"},
    {"ORRERY_PLUGIN_PATH=$PWD/signum/build $HOME/orrery/bin/orrery plugins",
     "ORRERY_PLUGIN_PATH=$PWD/signum/build orrery-install/bin/orrery plugins", "signum/build/optim_signum.so"},
    {"ORRERY_PLUGIN_PATH=$PWD/signum/build $HOME/orrery/bin/orrery run signum/signum.lua steps=300",
     "ORRERY_PLUGIN_PATH=$PWD/signum/build orrery-install/bin/orrery run signum/signum.lua steps=3", "signum     loss"},
    // docs/plugins.md: a released layout in, fine-tuned, and out again (a random-weights stand-in).
    {"build/bin/orrery run toto2_standin.lua", "", "file:toto2-standin/config.json"},
    {"build/bin/orrery run scripts/finetune.lua model=toto2-standin data=assets/data/airquality.csv export=airquality-toto2",
     "build/bin/orrery run scripts/finetune.lua model=toto2-standin data=assets/data/airquality.csv export=airquality-toto2 "
     "steps=4 batch=4 context=128",
     "exported the tuned model to airquality-toto2"},
    {".venv/bin/python -c \"from toto2 import Toto2Model; print(Toto2Model.from_pretrained('airquality-toto2').config)\"",
     "'" ORRERY_SOURCE_DIR "/.venv/bin/python' -c \"from toto2 import Toto2Model; "
     "print(Toto2Model.from_pretrained('airquality-toto2').config)\"",
     "Toto2ModelConfig(patch_size=32, d_model=256"},
    // The README's first experiment, which the sandbox holds as my_experiment.lua (its Lua block).
    {"build/bin/orrery run my_experiment.lua --help", "", "training steps of each run"},
    {"bash .ci/run", "", ""},  // CI runs it itself, from a clean clone
    {"build/bin/orrery ui my_experiment.lua steps=100",
     kXvfb + "build/bin/orrery ui my_experiment.lua steps=3 --screenshot first.png", "file:first.png"},
    {"build/bin/orrery plugins", "", "toto2"},
    {"build/bin/orrery plugins --json", "", "\"checkpoint_format\": \"Hugging Face Toto 2.0\""},
    {"build/bin/orrery run scripts/coord_check.lua widths=64,128 seeds=1",
     "build/bin/orrery run scripts/coord_check.lua widths=64,128 seeds=1 steps=1", "coord_check.json"},
    {"build/bin/orrery repl", "echo 'print(orrery.version)' | build/bin/orrery repl", "0.1.0"},
    {"build/bin/orrery forecast --model runs/quickstart --input assets/data/co2.csv --horizon 24 --out fc.csv", "",
     "file:fc.csv"},
    {"build/bin/orrery forecast --model runs/quickstart --input assets/data/co2.csv --horizon 24 --precision bf16 --out fc16.csv",
     "", "file:fc16.csv"},
    // tests/headless_configure.sh configures and checks a headless build (ctest: headless_configure).
    {"make build EXTRA=-DORRERY_UI=OFF BUILD=build-headless", "", ""},
    {"build/bin/orrery bench forecast --preset toto2-4m --context 4096 --horizon 1024 --batch 8",
     "build/bin/orrery bench forecast --preset toto2-4m --context 4096 --horizon 1024 --batch 8 --repeats 2 --warmup 1",
     "median"},
    {"build/bin/orrery run scripts/coord_check.lua",
     "build/bin/orrery run scripts/coord_check.lua widths=32,64 seeds=1 steps=1", "coord_check.json"},
    {"build/bin/orrery run scripts/lr_transfer.lua",
     "build/bin/orrery run scripts/lr_transfer.lua params=sp widths=32 seeds=1 steps=4", "lr_transfer.json"},
    // docs/results/lr_transfer: the first width sweep, scored by the training loss as it was then.
    {"build/bin/orrery run scripts/lr_transfer.lua widths=64,128,256,512 seeds=2 objective=train",
     "build/bin/orrery run scripts/lr_transfer.lua params=sp widths=32,64 seeds=1 steps=2 objective=train",
     "lr_transfer.json"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon widths=32,64 seeds=2 steps=2",
     "umup/spectral      optimum moves"},
    // The GPU sweep runs here on the CPU, shortened: the arguments are the README's.
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon widths=64,128,256,512 steps=1000 device=cuda",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon widths=32,64 seeds=1 steps=2 device=cpu",
     "umup/toto2         optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon depths=2,4,8 widths=128 alphas=0.5",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon depths=1,2 widths=32 alphas=0.5 seeds=1 steps=2",
     "from depth 1 to 2"},
    {"build/bin/orrery run scripts/proxy_search.lua",
     "build/bin/orrery run scripts/proxy_search.lua trials=2 steps=6 final_seeds=2", "tuned configuration:"},
    {"build/bin/orrery run scripts/scaling.lua recipe=runs/proxy_search/proxy_search.json",
     "build/bin/orrery run scripts/scaling.lua recipe=runs/proxy_search/proxy_search.json shapes=16x1,32x1,48x1 "
     "points_per_param=2 bootstrap=10 val_batches=1",
     "L(N, D) = E + A N^-alpha + B D^-beta"},
    // docs/training.md: depth
    {"build/bin/orrery run scripts/coord_check.lua depths=2,4,8,16,32 width=128",
     "build/bin/orrery run scripts/coord_check.lua depths=1,2 width=32 seeds=1 steps=1", "max/min across depths"},
    {"build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5,1 depths=2,4,8,16 widths=128",
     "build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5,1 depths=1,2 widths=32 seeds=1 steps=2",
     "umup/a1            optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5,1 depths=2,4,8,16 widths=128",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5,1 depths=1,2 widths=32 "
     "seeds=1 steps=2",
     "umup/spectral/a1   optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=1 depths=2,4,8,16 widths=128 steps=1000 start=-2",
     "build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=1 depths=1,2 widths=32 seeds=1 steps=2 start=-2",
     "umup/a1            optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=1 depths=2,4,8,16 widths=128 "
     "steps=1000 start=-5",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=1 depths=1,2 widths=32 "
     "seeds=1 steps=2 start=-5",
     "umup/spectral/a1   optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5 depths=2,16 widths=128 steps=1000 start=-2",
     "build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5 depths=1,2 widths=32 seeds=1 steps=2 start=-2",
     "umup/a0.5          optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5 depths=2,4,8 widths=128 steps=1000 start=-2",
     "build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5 depths=1,2,4 widths=32 seeds=1 steps=2 start=-2",
     "umup/a0.5          optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5 depths=2,4 widths=128 "
     "steps=1000 start=-5",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5 depths=1,2 widths=32 "
     "seeds=1 steps=2 start=-5",
     "umup/spectral/a0.5 optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5 depths=8 base_depth=2 "
     "widths=128 steps=1000 start=-5",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=1 depths=2 base_depth=1 "
     "widths=32 seeds=1 steps=2 start=-5",
     "normuon, 2 layers from base depth 1, 2 steps"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=1 depths=16 base_depth=2 "
     "widths=128 steps=1000 start=-7 span=1 jobs=15",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=1 depths=2 base_depth=1 "
     "widths=32 seeds=1 steps=2 start=-7 span=1 jobs=2",
     "normuon, 2 layers from base depth 1, 2 steps"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5 depths=16 base_depth=2 "
     "widths=128 steps=1000 start=-5 span=1 jobs=15",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5 depths=2 base_depth=1 "
     "widths=32 seeds=1 steps=2 start=-5 span=0.5 jobs=2",
     "written runs/lr_transfer"},
    {"build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5,1 shape=128x2,256x4,512x8",
     "build/bin/orrery run scripts/lr_transfer.lua params=umup alphas=0.5,1 shape=32x1,64x2 seeds=1 steps=2",
     "from shape 32x1 to 64x2"},
    {"build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5,1 shape=128x2,256x4,512x8 jobs=2",
     "build/bin/orrery run scripts/lr_transfer.lua optimizer=normuon rules=spectral alphas=0.5,1 shape=32x1,64x2 seeds=1 "
     "steps=2 jobs=2",
     "from shape 32x1 to 64x2"},
    {"build/bin/orrery run scripts/coord_check.lua optimizer=normuon params=umup",
     "build/bin/orrery run scripts/coord_check.lua optimizer=normuon params=umup widths=32,64 seeds=1 steps=1",
     "change since step 0"},
    {"build/bin/orrery run scripts/optimizer_duel.lua",
     "build/bin/orrery run scripts/optimizer_duel.lua steps=6 seeds=1 width=32", "optimizer_duel"},
    {"build/bin/orrery ui", kXvfb + "build/bin/orrery ui --screenshot ui.png", "file:ui.png"},
    {"build/bin/orrery ui scripts/lr_transfer.lua widths=64,128",
     kXvfb + "build/bin/orrery ui scripts/lr_transfer.lua widths=64,128 params=sp seeds=1 steps=4 --screenshot live.png",
     "file:live.png"},
    {"build/bin/orrery ui runs --view lr --screenshot lr.png", kXvfb + "build/bin/orrery ui runs --view lr --screenshot lr.png",
     "file:lr.png"},
    {"build/bin/orrery plot runs/quickstart --out plots", "", "windows-austres-Q-short.svg"},
    // docs/dashboard.md: the quickstart's evaluation, drilled down to austres' windows.
    {"build/bin/orrery ui runs --view eval --select austres",
     kXvfb + "build/bin/orrery ui runs --view eval --select austres --screenshot austres.png", "file:austres.png"},
    // docs/dashboard.md: a CSV forecast in the Forecasts tab, with its export.
    {"build/bin/orrery ui runs --model runs/quickstart --input assets/data/air_passengers.csv --horizon 24 --season 12",
     kXvfb + "build/bin/orrery ui runs --model runs/quickstart --input assets/data/air_passengers.csv --horizon 24 "
     "--season 12 --screenshot air.png", "file:air.png"},
    {"xvfb-run -a build/bin/orrery ui runs --model runs/quickstart --input assets/data/nile.csv --horizon 10 --export nile "
     "--screenshot nile_ui.png", "", "file:nile.csv"},
    {"build/bin/orrery run scripts/quickstart.lua --resume name=long checkpoint_every=200",
     kQuick + " --resume name=long checkpoint_every=10 steps=20", "Run directory: runs/long"},
    // CI runs these two itself (.ci/run); here they would rebuild everything twice.
    {"make sanitize", "", ""},
    {"make fuzz", "", ""},
    {"build/bin/orrery bench data", "build/bin/orrery bench data --batches 2 --workers 1,2", "2 workers: a batch every"},
    // The sandbox has no .venv: the reference comparison runs in test_cli instead.
    {"build/bin/orrery bench train --preset toto2-4m --batch 8 --context 512 --reference \".venv/bin/python "
     "tests/reference/bench_train_reference.py\"",
     "build/bin/orrery bench train --preset toto2-4m --batch 2 --context 128 --repeats 2 --warmup 1", "MFU: "},
    {"build/bin/orrery eval --model runs/quickstart --baselines ets",
     "build/bin/orrery eval --model runs/quickstart --baselines ets --data nile",
     "each window keeps it only where it forecast the window's own last horizon better"},
    {"build/bin/orrery eval --model runs/quickstart --context 512 --no-box-cox",
     "build/bin/orrery eval --model runs/quickstart --context 512 --no-box-cox --data nile", "geometric mean"},
    {"build/bin/orrery eval --model runs/quickstart --context 64,512 --no-box-cox --baselines ets",
     "build/bin/orrery eval --model runs/quickstart --context 64,512 --no-box-cox --baselines ets --data nile",
     "averaged over the last 64, 512 steps: a context ensemble"},
    {"build/bin/orrery eval --model runs/quickstart --context 64,512 --box-cox --no-box-cox-average --baselines ets",
     "build/bin/orrery eval --model runs/quickstart --context 64,512 --box-cox --no-box-cox-average --baselines ets --data nile",
     "Box-Cox transform, its exponent by Guerrero's method, mapped back)"},
    {"build/bin/orrery eval --model runs/quickstart --baselines ets,theta --combine ets,theta",
     "build/bin/orrery eval --model runs/quickstart --baselines ets,theta --combine ets,theta --data nile",
     "quickstart+ets+theta"},
    {"build/bin/orrery eval --model runs/quickstart --baselines ets --combine ets,theta --combine-check",
     "build/bin/orrery eval --model runs/quickstart --baselines ets --combine ets,theta --combine-check --data nile",
     "quickstart+ets+theta/checked"},
    // docs/performance.md: the bench beside a real run of the same shape.
    {"build/bin/orrery bench train --preset toto2-4m --batch 8 --context 512 --repeats 30",
     "build/bin/orrery bench train --preset toto2-4m --batch 2 --context 128 --repeats 2 --warmup 1",
     "patch masking, host checks"},
    {"build/bin/orrery run scripts/step_time.lua preset=toto2-4m batch=8 context=512 steps=200",
     "build/bin/orrery run scripts/step_time.lua preset=toto2-4m batch=2 context=128 steps=30",
     "real run: toto2-4m, batch 2 x 128 steps, 1 data worker(s): median "},
    {"build/bin/orrery bench train --preset toto2-4m --batch 8 --context 512 --nproc 2",
     "build/bin/orrery bench train --preset toto2-4m --batch 2 --context 128 --repeats 2 --warmup 1 --nproc 2",
     "scaling efficiency: "},
    {"build/bin/orrery launch -n 2 scripts/quickstart.lua steps=600 name=dp",
     "build/bin/orrery launch -n 2 scripts/quickstart.lua steps=20 name=dp", "best classical baseline"},
    // torchrun from the checkout's .venv (the sandbox has none); its agent serves the store.
    {".venv/bin/torchrun --nproc-per-node 2 --no-python build/bin/orrery run scripts/quickstart.lua steps=600 name=dp-torchrun",
     "'" ORRERY_SOURCE_DIR "/.venv/bin/torchrun' --nproc-per-node 2 --no-python build/bin/orrery run "
     "scripts/quickstart.lua steps=20 name=dp-torchrun",
     "best classical baseline"},
    // docs/evaluation.md: the decision benchmark, with the two fast baselines.
    {"build/bin/orrery eval --data assets/decision --baselines naive,seasonal_naive --out runs/decision-baselines", "",
     "us_employment"},
    {"build/bin/orrery eval --baselines theta,ets --data assets/data/airquality.csv --out runs/aq-eval", "",
     "file:runs/aq-eval/eval.csv"},
    {"build/bin/orrery eval --baselines ets --split validation --validation-windows 20",
     "build/bin/orrery eval --baselines ets --split validation --validation-windows 20 --data nile",
     "up to 20 rolling origins before each series' test windows"},
    {"build/bin/orrery eval --baselines theta --data '{\"name\": \"csv\", \"options\": {\"files\": "
     "\"assets/data/uk_lung_deaths.csv\", \"timestamp_format\": \"year\"}}'",
     "", "uk_lung_deaths/M/short"},
    {"build/bin/orrery ui runs --view eval --screenshot eval.png",
     kXvfb + "build/bin/orrery ui runs --view eval --screenshot eval.png", "file:eval.png"},
    {"build/bin/orrery run scripts/zero_shot.lua", "build/bin/orrery run scripts/zero_shot.lua steps=4 batch=4",
     "Results: runs/zero_shot"},
    // The GPU run on the CPU, shortened: a released size for two steps.
    {"build/bin/orrery run scripts/zero_shot.lua device=cuda preset=toto2-4m",
     "build/bin/orrery run scripts/zero_shot.lua device=cpu preset=toto2-4m steps=2 batch=2 name=zs4m", "Results: runs/zs4m"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+context64,classical16+ensemble64 "
     "steps=16000",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+ensemble64 seed=0 seeds=1 steps=3 "
     "batch=2 context=128",
     "seed 0 done: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=default,state_space,ets,arima,kernel_trend,short,augmented",
     "build/bin/orrery run scripts/prior_ablation.lua arms=default,ets seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=default,classical,obs20,patch16,averaged",
     "build/bin/orrery run scripts/prior_ablation.lua arms=default,averaged seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16 steps=6000",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16 seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=default,classical16,averaged,early",
     "build/bin/orrery run scripts/prior_ablation.lua arms=default,early seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+early,classical16+obs20,"
     "classical80+patch16,classical+patch8",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+early,classical+patch8 seeds=1 steps=3 "
     "batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+persistent,classical16+steep,"
     "classical16+window8,classical16+window4,classical16+context64",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+persistent+steep,classical16+window4,"
     "classical16+context64 seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+context64,classical16+context128,"
     "classical16+context128x3,classical16+full,classical16+full+context64",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+context128x3,classical16+full,"
     "classical16+full+context64 seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+context64,classical16+full,"
     "classical16+full+context64 steps=6000",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+full+context64 seeds=1 steps=3 batch=2 "
     "context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+context64,classical16+ensemble64,"
     "classical16+full,classical16+full+context64,classical16+full+ensemble64 steps=6000",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16,classical16+ensemble64,classical16+full+ensemble64 "
     "seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=default+full+obs0,classical16+ensemble64,"
     "classical16+full+ensemble64,classical16+full+obs0+ensemble64,default,classical16,classical16+full,"
     "classical16+full+obs0 steps=2400",
     "build/bin/orrery run scripts/prior_ablation.lua arms=default+full+obs0,classical16+full+obs0+ensemble64 seeds=1 "
     "steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+ensemble64,classical16+full+ensemble64+steps45 "
     "steps=2400",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+ensemble64,classical16+full+ensemble64+steps45 "
     "seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+ensemble64,classical16+full+ensemble64+boxcox "
     "steps=2400",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+ensemble64,classical16+full+ensemble64+boxcox "
     "seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16+ensemble64,classical16+ensemble64+boxcox steps=6000",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16+ensemble64,classical16+ensemble64+boxcox seeds=1 "
     "steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/sign_average.lua arms=augmented,kernel_trend,short",
     "build/bin/orrery run scripts/sign_average.lua arms=ets seeds=1",
     "results: runs/prior_ablation/sign_average.json"},
    // docs/results/decision: the quickstart's three seeds under each inference arm on both benchmarks.
    {"for s in 0 1 2; do build/bin/orrery run scripts/quickstart.lua seed=$s name=quickstart-s$s; done",
     "for s in 0 1 2; do build/bin/orrery run scripts/quickstart.lua seed=$s steps=3 name=quickstart-s$s "
     "data=assets/data/airquality.csv; done",
     "Run directory: runs/quickstart-s2"},
    {"build/bin/orrery run scripts/decision.lua splits=test reference=ens arms=whole,ens,ens+boxcox,ens+checked",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=test reference=ens "
     "arms=whole,ens,ens+boxcox,ens+checked",
     "results: runs/decision.json"},
    {"build/bin/orrery run scripts/decision.lua",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv,assets/data/beaver1.csv "
     "arms=whole,ens+checked,ens+ets+theta",
     "results: runs/decision.json"},
    {"build/bin/orrery run scripts/decision.lua splits=test reference=ens arms=ens,ens+checked,ens+ets+theta,"
     "ens+ets+theta+median",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=test reference=ens "
     "arms=ens,ens+checked,ens+ets+theta,ens+ets+theta+median",
     "results: runs/decision.json"},
    {"for split in validation test; do build/bin/orrery run scripts/decision.lua splits=$split reference=ens+checked "
     "arms=ens+checked,ens+ets+theta,ens+checked+ets+theta+picked,ens+checked+ets+theta+median+picked "
     "out=runs/decision-picked-$split.json; done",
     "for split in validation test; do build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv "
     "splits=$split reference=ens+checked arms=ens+checked,ens+ets+theta,ens+checked+ets+theta+picked,"
     "ens+checked+ets+theta+median+picked out=runs/decision-picked-$split.json; done",
     "results: runs/decision-picked-test.json"},
    {"build/bin/orrery run scripts/decision.lua splits=validation reference=ens+checked arms=ens,ens+checked,"
     "ens+checked+o3,ens+checked+ets+theta+picked,ens+checked+ets+theta+picked+o3,ens+checked+ets+theta+picked+o6 "
     "out=runs/decision-origins-validation.json",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=validation "
     "reference=ens+checked arms=ens,ens+checked,ens+checked+o3,ens+checked+ets+theta+picked,"
     "ens+checked+ets+theta+picked+o3,ens+checked+ets+theta+picked+o6 out=runs/decision-origins-validation.json",
     "results: runs/decision-origins-validation.json"},
    {"build/bin/orrery run scripts/decision.lua benchmarks=assets/data splits=test reference=ens+checked "
     "arms=ens,ens+checked,ens+checked+ets+theta+picked,ens+checked+ets+theta+picked+o6 "
     "out=runs/decision-origins-test.json",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=test "
     "reference=ens+checked arms=ens,ens+checked,ens+checked+ets+theta+picked,ens+checked+ets+theta+picked+o6 "
     "out=runs/decision-origins-test.json",
     "results: runs/decision-origins-test.json"},
    {"build/bin/orrery run scripts/decision.lua splits=validation reference=ens arms=ens,ens+checked,ens+boxcox,"
     "ens+boxcox+avg,ens+checked+avg out=runs/decision-avg-validation.json",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=validation reference=ens "
     "arms=ens,ens+checked,ens+boxcox,ens+boxcox+avg,ens+checked+avg out=runs/decision-avg-validation.json",
     "results: runs/decision-avg-validation.json"},
    {"build/bin/orrery run scripts/decision.lua splits=test reference=ens arms=ens,ens+boxcox,ens+checked,"
     "ens+boxcox+avg,ens+checked+avg out=runs/decision-avg-test.json",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=test reference=ens "
     "arms=ens,ens+boxcox,ens+checked,ens+boxcox+avg,ens+checked+avg out=runs/decision-avg-test.json",
     "results: runs/decision-avg-test.json"},
    {"build/bin/orrery run scripts/decision.lua splits=validation reference=ens+checked+avg arms=ens+checked+avg,"
     "ens+checked+avg+ets+theta+picked out=runs/decision-avg-combo-validation.json",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=validation "
     "reference=ens+checked+avg arms=ens+checked+avg,ens+checked+avg+ets+theta+picked "
     "out=runs/decision-avg-combo-validation.json",
     "results: runs/decision-avg-combo-validation.json"},
    {"build/bin/orrery run scripts/decision.lua splits=test reference=ens+checked+avg arms=ens+checked+avg,"
     "ens+checked+avg+ets+theta+picked out=runs/decision-avg-combo-test.json",
     "build/bin/orrery run scripts/decision.lua benchmarks=assets/data/airquality.csv splits=test "
     "reference=ens+checked+avg arms=ens+checked+avg,ens+checked+avg+ets+theta+picked "
     "out=runs/decision-avg-combo-test.json",
     "results: runs/decision-avg-combo-test.json"},
    // The trend_breaks prior: one seed a recipe at toy size, scored against the quickstart's models.
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+breaks seeds=3 steps=2400",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+breaks seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+breaks30 seeds=3 steps=2400",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+breaks30 seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/decision.lua arms=ens+checked reference=ens+checked out=runs/decision-quickstart.json",
     "build/bin/orrery run scripts/decision.lua models=runs/quickstart-s0 benchmarks=assets/data/airquality.csv "
     "arms=ens+checked reference=ens+checked out=runs/decision-quickstart.json",
     "results: runs/decision-quickstart.json"},
    {"for arm in breaks breaks30; do build/bin/orrery run scripts/decision.lua models=runs/prior_ablation/runs/"
     "classical16+full+$arm-s0,runs/prior_ablation/runs/classical16+full+$arm-s1,runs/prior_ablation/runs/"
     "classical16+full+$arm-s2 arms=ens+checked reference=ens+checked out=runs/decision-$arm.json "
     "against=runs/decision-quickstart.json; done",
     "for arm in breaks breaks30; do build/bin/orrery run scripts/decision.lua models=runs/prior_ablation/runs/"
     "classical16+full+$arm-s0 benchmarks=assets/data/airquality.csv arms=ens+checked reference=ens+checked "
     "out=runs/decision-$arm.json against=runs/decision-quickstart.json; done",
     "against runs/decision-quickstart.json: score"},
    // Longer masked spans (span16): one seed at toy size, scored against the quickstart's models.
    {"build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+span16 seeds=3 steps=2400",
     "build/bin/orrery run scripts/prior_ablation.lua arms=classical16+full+span16 seeds=1 steps=3 batch=2 context=128",
     "results: runs/prior_ablation/prior_ablation.json"},
    {"build/bin/orrery run scripts/decision.lua arms=ens+checked+avg reference=ens+checked+avg "
     "out=runs/decision-quickstart-avg.json",
     "build/bin/orrery run scripts/decision.lua models=runs/quickstart-s0 benchmarks=assets/data/airquality.csv "
     "arms=ens+checked+avg reference=ens+checked+avg out=runs/decision-quickstart-avg.json",
     "results: runs/decision-quickstart-avg.json"},
    {"build/bin/orrery run scripts/decision.lua models=runs/prior_ablation/runs/classical16+full+span16-s0,"
     "runs/prior_ablation/runs/classical16+full+span16-s1,runs/prior_ablation/runs/classical16+full+span16-s2 "
     "arms=ens+checked+avg reference=ens+checked+avg out=runs/decision-span16.json "
     "against=runs/decision-quickstart-avg.json",
     "build/bin/orrery run scripts/decision.lua models=runs/prior_ablation/runs/classical16+full+span16-s0 "
     "benchmarks=assets/data/airquality.csv arms=ens+checked+avg reference=ens+checked+avg "
     "out=runs/decision-span16.json against=runs/decision-quickstart-avg.json",
     "against runs/decision-quickstart-avg.json: score"},
    // docs/covariates.md: the seat-belt data split at 1983, and a forecast of drivers with covariates
    // (the page's model is trained by its Lua block, which runs after the commands: an untrained one here).
    {"head -n 169 assets/data/seatbelts.csv > seatbelts_history.csv", "", "file:seatbelts_history.csv"},
    {"(head -n 1 assets/data/seatbelts.csv; sed -n 170,181p assets/data/seatbelts.csv) > seatbelts_1983.csv", "",
     "file:seatbelts_1983.csv"},
    {"build/bin/orrery forecast --model runs/covariates --input seatbelts_history.csv --target drivers "
     "--past-covariates front,rear --future-covariates PetrolPrice,kms --future seatbelts_1983.csv --horizon 12 "
     "--out drivers_1983.csv",
     "mkdir -p runs/covariates && echo 'orrery.model{arch = {\"toto2\", d_model = 16, num_layers = 2, num_heads = 1, "
     "variate_roles = true}, patch_size = 16}:save(\"runs/covariates/model.safetensors\")' > covariate_model.lua && "
     "build/bin/orrery run covariate_model.lua && build/bin/orrery forecast --model runs/covariates --input "
     "seatbelts_history.csv --target drivers --past-covariates front,rear --future-covariates PetrolPrice,kms "
     "--future seatbelts_1983.csv --horizon 12 --out drivers_1983.csv",
     "file:drivers_1983.csv"},
    {"build/bin/orrery forecast --model runs/covariates --input seatbelts_history.csv --target drivers "
     "--future-covariates PetrolPrice,kms --future seatbelts_1983.csv --horizon 12 --regression "
     "--out drivers_1983_regression.csv",
     "", "file:drivers_1983_regression.csv"},
    {"build/bin/orrery forecast --model runs/covariates --input seatbelts_history.csv --target drivers "
     "--future-covariates PetrolPrice,kms --future seatbelts_1983.csv --horizon 12 --regression --regression-lags 12 "
     "--out drivers_1983_lagged.csv",
     "", "file:drivers_1983_lagged.csv"},
    // docs/covariates.md: the static benchmark, one seed of two steps on each data set.
    {"build/bin/orrery run scripts/static_benchmark.lua model=runs/quickstart",
     "build/bin/orrery run scripts/static_benchmark.lua model=runs/quickstart seeds=1 steps=2 batch=4",
     "results: runs/static_benchmark/static_benchmark.json"},
    {"build/bin/orrery run scripts/static_benchmark.lua model=runs/quickstart select=true",
     "build/bin/orrery run scripts/static_benchmark.lua model=runs/quickstart select=true sets=visnights seeds=1 steps=3 "
     "batch=4",
     "length chosen vs 3 steps, without statics"},
    {"build/bin/orrery run scripts/covariate_injection.lua",
     "build/bin/orrery run scripts/covariate_injection.lua steps=3 seeds=1 tasks=4 horizon=8 context=32 batch=4",
     "results: runs/covariate_injection/covariate_injection.json"},
    // The default baselines, ARIMA three ways, on two of the seven series (all seven take minutes).
    {"build/bin/orrery run scripts/covariate_benchmark.lua",
     "build/bin/orrery run scripts/covariate_benchmark.lua sets=freeny,bjsales", "arima/xreg vs arima"},
    {"build/bin/orrery run scripts/covariate_benchmark.lua sets=fpp", "", "arima/xreg vs arima"},
    {"build/bin/orrery run scripts/covariate_benchmark.lua model=runs/covariate_injection/runs/s0,"
     "runs/covariate_injection/runs/s1,runs/covariate_injection/runs/s2",
     "build/bin/orrery run scripts/covariate_benchmark.lua model=runs/covariate_injection/runs/s0 sets=freeny,bjsales",  // one seed trained here
     "model/regression vs model/no-covariates"},
    {"build/bin/orrery run scripts/finetune.lua model=runs/quickstart data=assets/data/airquality.csv",
     "build/bin/orrery run scripts/finetune.lua model=runs/quickstart data=assets/data/airquality.csv steps=4",
     "fine-tuning moved MASE"},
    {"bible -l1000 \"gen1:1-rev22:21\" > kjv.txt", "", "file:kjv.txt"},  // docs/language.md's corpus
    // scripts/nanogpt.lua and the sweeps on language, on Genesis (200 kB) at a toy size.
    {"build/bin/orrery run scripts/nanogpt.lua",
     kGenesis + "build/bin/orrery run scripts/nanogpt.lua files=genesis.txt vocab=400 width=32 depth=2 heads=2 "
     "context=64 batch=4 steps=3 val_batches=2 samples=1 sample_steps=4",
     "validation bits per byte"},
    {"build/bin/orrery bench generate", "build/bin/orrery bench generate --steps 8 --repeats 1 --warmup 0",
     "KV cache / recomputed"},
    // The toy nanogpt run above validated (and drew a sample) after each of its 3 steps.
    {"build/bin/orrery ui runs/nanogpt --view samples --screenshot samples.png",
     kXvfb + "build/bin/orrery ui runs/nanogpt --view samples --screenshot samples.png", "file:samples.png"},
    // The sweeps on language, on Genesis at a toy size; the arguments that matter are the README's.
    {"build/bin/orrery run scripts/coord_check.lua arch=gpt vocab=512 widths=32,64,128,256 seeds=1",
     kGenesis + "build/bin/orrery run scripts/coord_check.lua arch=gpt files=genesis.txt vocab=300 widths=32,64 seeds=1 steps=1",
     "coord_check.json"},
    {"build/bin/orrery run scripts/lr_transfer.lua arch=gpt vocab=512 optimizer=adamw params=sp,umup widths=32,64,128",
     kGenesis + "build/bin/orrery run scripts/lr_transfer.lua arch=gpt files=genesis.txt vocab=300 optimizer=adamw "
                "params=sp,umup widths=32 seeds=1 steps=2 val_batches=1",
     "umup               optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua arch=gpt vocab=512 optimizer=normuon params=sp,umup rules=spectral widths=32,64,128",
     kGenesis + "build/bin/orrery run scripts/lr_transfer.lua arch=gpt files=genesis.txt vocab=300 optimizer=normuon "
                "params=sp,umup rules=spectral widths=32 seeds=1 steps=2 val_batches=1",
     "umup/spectral      optimum moves"},
    {"build/bin/orrery run scripts/lr_transfer.lua arch=gpt vocab=512 head_dim=16 optimizer=adamw params=umup widths=32,64,128",
     kGenesis + "build/bin/orrery run scripts/lr_transfer.lua arch=gpt files=genesis.txt vocab=300 head_dim=16 "
                "optimizer=adamw params=umup widths=32 seeds=1 steps=2 val_batches=1",
     "lr_transfer.json"},
    {"build/bin/orrery run scripts/lr_transfer.lua arch=gpt vocab=512 head_dim=16 optimizer=normuon params=umup rules=spectral widths=32,64,128",
     kGenesis + "build/bin/orrery run scripts/lr_transfer.lua arch=gpt files=genesis.txt vocab=300 head_dim=16 "
                "optimizer=normuon params=umup rules=spectral widths=32 seeds=1 steps=2 val_batches=1",
     "lr_transfer.json"},
};

// Lua blocks: on each page, every block holding `from` runs with `to` in its place (shorter
// training); each entry must apply to at least one block.
struct LuaEdit {
  std::string page, from, to;
};
const std::vector<LuaEdit> kLuaEdits = {
    {"README.md", "{\"steps\", \"int\", 300,", "{\"steps\", \"int\", 3,"},
    {"docs/training.md", "steps = 500", "steps = 20"},
    {"docs/training.md", "steps = 400", "steps = 6"},
    {"docs/training.md", "warmup = 300", "warmup = 3"},
    {"docs/training.md", "steps = 300", "steps = 5"},
    {"docs/data.md", "steps = 300", "steps = 5"},
    {"docs/covariates.md", "steps = 300", "steps = 5"},
    {"docs/covariates.md", "steps = 200", "steps = 3"},
    {"docs/language.md", "steps = 300", "steps = 3"},
};

// The pages whose examples run here, in this order (a later command may use what an earlier one
// wrote); every report of docs/results/ follows them. docs/lua.md's examples run in
// tests/test_docs.cpp.
const std::vector<std::string> kPages = {
    "README.md",           "docs/training.md",  "docs/data.md",        "docs/evaluation.md",
    "docs/checkpoints.md", "docs/distributed.md", "docs/gpu.md",       "docs/dashboard.md",
    "docs/plugins.md",     "docs/search.md",    "docs/covariates.md",  "docs/language.md",
    "docs/performance.md", "docs/testing.md",   "docs/errors.md",      "docs/errors-data.md"};

// kPages and then every report, docs/results/*/README.md and the log, in name order; a page of
// docs/ that is neither listed nor lua.md fails.
std::vector<std::string> pages() {
  std::vector<std::string> out = kPages;
  for (const auto& e : fs::directory_iterator(std::string(ORRERY_SOURCE_DIR) + "/docs")) {
    const std::string page = "docs/" + e.path().filename().string();
    if (e.path().extension() != ".md" || page == "docs/lua.md") continue;
    INFO("a page of docs/ whose commands no test runs: add it to kPages in tests/test_readme.cpp");
    CHECK(std::find(out.begin(), out.end(), page) != out.end());
  }
  std::vector<std::string> reports;
  for (const auto& e : fs::directory_iterator(std::string(ORRERY_SOURCE_DIR) + "/docs/results"))
    if (e.is_directory() && fs::exists(e.path() / "README.md"))
      reports.push_back("docs/results/" + e.path().filename().string() + "/README.md");
  std::sort(reports.begin(), reports.end());
  out.insert(out.end(), reports.begin(), reports.end());
  out.push_back("docs/results/README.md");
  return out;
}

struct LuaBlock {
  std::string page, code;
};
struct Readme {
  std::vector<std::string> commands;  // sh lines, comments stripped, each once
  std::vector<LuaBlock> lua;          // lua blocks
  std::vector<LuaBlock> python;       // python blocks, run with the checkout's .venv after the commands
};

Readme parse_readme() {
  Readme r;
  for (const auto& page : pages()) {
    std::ifstream in(std::string(ORRERY_SOURCE_DIR) + "/" + page);
    INFO(page);
    REQUIRE(in.good());
    std::string line, block, kind;
    bool inside = false;
    while (std::getline(in, line)) {
      if (line.rfind("```", 0) == 0) {
        if (!inside) {
          inside = true, kind = line.substr(3), block.clear();
        } else {
          inside = false;
          if (kind == "lua") r.lua.push_back({page, block});
          if (kind == "python") r.python.push_back({page, block});
        }
        continue;
      }
      if (!inside) continue;
      block += line + "\n";
      if (kind != "sh") continue;
      std::string cmd = std::regex_replace(line, std::regex("\\s+#.*$"), "");
      cmd = std::regex_replace(cmd, std::regex("\\s+$"), "");
      if (!cmd.empty() && std::find(r.commands.begin(), r.commands.end(), cmd) == r.commands.end())
        r.commands.push_back(cmd);
    }
  }
  return r;
}

// A Lua block that names its file on its first line ("-- my_experiment.lua: ...") is that file,
// which the page's commands run: the sandbox holds it before any command.
std::string named_file(const std::string& code) {
  std::smatch m;
  const std::string first = code.substr(0, code.find('\n'));
  return std::regex_match(first, m, std::regex("-- ([A-Za-z0-9_]+\\.lua):.*")) ? m[1].str() : "";
}

// The block with the page's edits applied, counting each edit that applied.
std::string edited(const LuaBlock& b, std::vector<int>& used) {
  std::string code = b.code;
  for (size_t i = 0; i < kLuaEdits.size(); ++i) {
    const auto& e = kLuaEdits[i];
    if (e.page != b.page) continue;
    for (size_t at = code.find(e.from); at != std::string::npos; at = code.find(e.from, at + e.to.size()))
      code.replace(at, e.from.size(), e.to), ++used[i];
  }
  return code;
}

// Scripts that score on the bundled benchmark (25 data sets: half a minute a model and split)
// score here on a one-series one, the Nile in nile/, but for `make run`'s quickstart, which
// scores on the whole; so do the reduced `orrery eval` commands, with --data nile.
bool scores_on_benchmark(const std::string& run) {
  for (const char* script : {"scripts/quickstart.lua", "scripts/zero_shot.lua", "scripts/prior_ablation.lua",
                             "scripts/sign_average.lua", "scripts/proxy_search.lua"})
    if (run.find(script) != std::string::npos) return run.find(" data=") == std::string::npos;
  return false;
}

// A checkout-like folder: build/bin/orrery, scripts and assets, and the one-series benchmark
// nile/, with nothing else in it.
std::string sandbox() {
  const std::string dir = test::temp_dir("readme");
  fs::create_directory(dir + "/nile");
  fs::copy_file(std::string(ORRERY_SOURCE_DIR) + "/assets/data/nile.csv", dir + "/nile/nile.csv");
  std::ofstream(dir + "/nile/manifest.json")
      << R"({"datasets": [{"name": "nile", "file": "nile.csv", "frequency": "A", "series": 1, "length": 100}]})";
  fs::create_directories(dir + "/build/bin");
  fs::create_symlink(ORRERY_BIN, dir + "/build/bin/orrery");
  fs::create_directory_symlink(std::string(ORRERY_SOURCE_DIR) + "/scripts", dir + "/scripts");
  fs::create_directory_symlink(std::string(ORRERY_SOURCE_DIR) + "/assets", dir + "/assets");
  return dir;
}

}  // namespace

TEST_CASE("README.md, docs/ and docs/results/: every command and Lua example runs") {
  const Readme readme = parse_readme();
  REQUIRE(readme.commands.size() >= 10);
  for (const auto& e : kExercises) {
    INFO("the table names a command the README no longer has: " << e.readme);
    CHECK(std::find(readme.commands.begin(), readme.commands.end(), e.readme) != readme.commands.end());
  }
  // make run is the quickstart, exactly; make test is what CI runs.
  const std::string makefile = test::read_text(std::string(ORRERY_SOURCE_DIR) + "/Makefile");
  CHECK(makefile.find("$(BUILD)/bin/orrery run scripts/quickstart.lua\n") != std::string::npos);
  for (const char* ci : {"make test", "make sanitize", "make fuzz"})
    CHECK(test::read_text(std::string(ORRERY_SOURCE_DIR) + "/.ci/run").find(ci) != std::string::npos);

  const std::string dir = sandbox();
  std::vector<int> used(kLuaEdits.size(), 0);
  for (const auto& b : readme.lua)
    if (const std::string file = named_file(b.code); !file.empty()) std::ofstream(dir + "/" + file) << edited(b, used);
  for (const auto& cmd : readme.commands) {
    INFO("README command: " << cmd);
    auto it = std::find_if(kExercises.begin(), kExercises.end(), [&](const Exercise& e) { return e.readme == cmd; });
    REQUIRE(it != kExercises.end());  // a new README command: add it to kExercises
    if (it->expect.empty()) continue;
    std::string run = it->instead.empty() ? cmd : it->instead;
    if (it->readme != "make run" && scores_on_benchmark(run)) run += " data=nile";
    const auto start = std::chrono::steady_clock::now();
    auto r = test::run_command("cd '" + dir + "' && " + run);
    // Each command's time, so that the test's cost (the longest of make test) can be read off a log.
    std::printf("[readme] %6.1f s  %s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                run.c_str());
    INFO("ran: " << run << "\n" << r.output);
    CHECK(r.status == 0);
    if (it->expect.rfind("file:", 0) == 0) {
      const std::string file = dir + "/" + it->expect.substr(5);
      CHECK(fs::exists(file));
      CHECK((fs::exists(file) && fs::file_size(file) > 0));
    } else {
      CHECK(r.output.find(it->expect) != std::string::npos);
    }
  }
  // The README's forecast: 24 rows of quantiles from the quickstart's run folder.
  std::ifstream fc(dir + "/fc.csv");
  int rows = 0;
  for (std::string line; std::getline(fc, line);) ++rows;
  CHECK(rows == 1 + 24);

  // Python blocks (what a user runs on an export) after the commands that wrote their inputs.
  for (size_t i = 0; i < readme.python.size(); ++i) {
    const std::string path = dir + "/example" + std::to_string(i + 1) + ".py";
    std::ofstream(path) << readme.python[i].code;
    auto r = test::run_command("cd '" + dir + "' && '" ORRERY_SOURCE_DIR "/.venv/bin/python' " + path);
    INFO(readme.python[i].page << ", Python block " << i + 1 << ":\n" << readme.python[i].code << "\n" << r.output);
    CHECK(r.status == 0);
  }
  for (size_t i = 0; i < readme.lua.size(); ++i) {
    const LuaBlock& b = readme.lua[i];
    if (!named_file(b.code).empty()) continue;  // a page's own command runs it
    const std::string code = edited(b, used);
    const std::string path = dir + "/example" + std::to_string(i + 1) + ".lua";
    std::ofstream(path) << code;
    auto r = test::run_command("cd '" + dir + "' && build/bin/orrery run " + path);
    INFO(b.page << ", Lua block " << i + 1 << ":\n" << code << "\n" << r.output);
    CHECK(r.status == 0);
  }
  for (size_t i = 0; i < kLuaEdits.size(); ++i) {
    INFO("no Lua block of " << kLuaEdits[i].page << " holds " << kLuaEdits[i].from);
    CHECK(used[i] > 0);
  }
}
