// The live dashboard as a person sees it: `orrery ui --screenshot` under a private Xvfb, the
// PNG read back and checked pixel by pixel against where the plots say their data lies.
#include <catch2/catch.hpp>

#include <signal.h>
#include <stb_image.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <set>

#include "plot/theme.h"
#include "runs/run_watcher.h"
#include "ui_fixtures.h"
#include "views/views.h"

using orrery::Json;

namespace {

// An X server of our own for the test's lifetime (Xvfb picks a free display number).
class Xvfb {
 public:
  Xvfb() {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_ = fork();
    if (pid_ == 0) {
      close(fds[0]);
      const std::string fd = std::to_string(fds[1]);
      execlp("Xvfb", "Xvfb", "-displayfd", fd.c_str(), "-screen", "0", "1600x1000x24", "-nolisten", "tcp",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char ch;
    while (read(fds[0], &ch, 1) == 1 && ch != '\n') line += ch;
    close(fds[0]);
    INFO("Xvfb did not start (is the xvfb package installed?)");
    REQUIRE(!line.empty());
    display_ = ":" + line;
  }
  ~Xvfb() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  const std::string& display() const { return display_; }

 private:
  pid_t pid_ = -1;
  std::string display_;
};

Xvfb& xvfb() {
  static Xvfb server;
  return server;
}

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  explicit Image(const std::string& path) {
    int n = 0;
    unsigned char* p = stbi_load(path.c_str(), &w, &h, &n, 3);
    REQUIRE(p != nullptr);
    rgb.assign(p, p + static_cast<size_t>(w) * h * 3);
    stbi_image_free(p);
  }
  std::array<int, 3> at(int x, int y) const {
    if (x < 0 || y < 0 || x >= w || y >= h) FAIL("pixel " << x << "," << y << " outside the " << w << "x" << h << " image");
    const size_t i = (static_cast<size_t>(y) * w + x) * 3;
    return {rgb[i], rgb[i + 1], rgb[i + 2]};
  }
  double luminance(int x, int y) const {
    auto c = at(x, y);
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  }
};

int run(const std::string& args) {
  const std::string cmd = "DISPLAY=" + xvfb().display() + " " ORRERY_BIN " " + args;
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The frame of the plot whose id contains `id`.
Json frame(const Json& layout, const std::string& id) {
  for (const auto& f : layout["frames"])
    if (f["id"].get<std::string>().find(id) != std::string::npos) return f;
  FAIL("no plot '" << id << "' in the layout");
  return {};
}

std::pair<int, int> pixel(const Json& f, double x, double y) {
  auto frac = [](const Json& a, double v) {
    const bool lg = a["log"];
    const double lo = a["lo"], hi = a["hi"];
    return lg ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
  };
  const auto& r = f["area"];
  const double x0 = r[0], y0 = r[1], x1 = r[2], y1 = r[3];
  return {static_cast<int>(std::lround(x0 + frac(f["x"], x) * (x1 - x0))),
          static_cast<int>(std::lround(y1 - frac(f["y"], y) * (y1 - y0)))};
}

// Whether a pixel within `radius` of (x, y) has colour c (within a small tolerance).
bool colour_near(const Image& img, std::pair<int, int> p, const Json& c, int radius = 2) {
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx) {
      auto v = img.at(p.first + dx, p.second + dy);
      if (std::abs(v[0] - c[0].get<int>()) + std::abs(v[1] - c[1].get<int>()) + std::abs(v[2] - c[2].get<int>()) < 40)
        return true;
    }
  return false;
}

}  // namespace

TEST_CASE("the loss view is not blank and puts known curves on their pixels") {
  auto root = test::fresh_dir("loss");
  // Two flat losses: smoothing leaves a constant as it is, so the curves are exact.
  test::write_run(root / "high", test::run_config("sp", 64, 1e-3), 1000, 10, [](int) { return 0.5; });
  test::write_run(root / "low", test::run_config("umup", 64, 1.0), 1000, 10, [](int) { return 0.25; });
  const std::string png = (root / "loss.png").string(), layout_path = (root / "loss.json").string();
  REQUIRE(run("ui " + root.string() + " --screenshot " + png + " --layout " + layout_path + " --size 1400x800") == 0);
  Image img(png);
  CHECK(img.w == 1400);
  CHECK(img.h == 800);
  std::set<int> colours;
  for (int y = 0; y < img.h; y += 3)
    for (int x = 0; x < img.w; x += 3) {
      auto c = img.at(x, y);
      colours.insert((c[0] << 16) | (c[1] << 8) | c[2]);
    }
  CHECK(colours.size() > 100);  // text, curves, grid: far from a blank frame

  std::ifstream lf(layout_path);
  const Json layout = Json::parse(lf);
  const Json f = frame(layout, "loss");
  const Json& colors = layout["colors"];
  for (double step : {200.0, 500.0, 800.0}) {
    INFO("step " << step);
    CHECK(colour_near(img, pixel(f, step, 0.5), colors["high"]));
    CHECK(colour_near(img, pixel(f, step, 0.25), colors["low"]));
    CHECK_FALSE(colour_near(img, pixel(f, step, 0.35), colors["high"]));
    CHECK_FALSE(colour_near(img, pixel(f, step, 0.35), colors["low"]));
  }
  orrery::remove_tree(root);
}

TEST_CASE("a quantile fan's bands nest: each inner band is brighter than the one around it") {
  auto root = test::fresh_dir("fan");
  test::write_run(root / "r", test::run_config("sp", 64, 1e-3), 100, 10, [](int s) { return 1.0 / s; });
  test::write_text(root / "r" / "forecasts.jsonl", test::flat_fan_event(100, 64, 64).dump() + "\n");
  const std::string png = (root / "fan.png").string(), layout_path = (root / "fan.json").string();
  REQUIRE(run("ui " + root.string() + " --view forecasts --screenshot " + png + " --layout " + layout_path) == 0);
  Image img(png);
  std::ifstream lf(layout_path);
  const Json f = frame(Json::parse(lf), "val/0");
  // Quantile i sits at i - 4; between levels the pixel is inside 0, 1, 2, 3 or 4 bands.
  for (double t : {30.0, 50.0}) {
    std::vector<double> lum;
    for (double v : {-4.5, -3.5, -2.5, -1.5, -0.6}) {
      auto [x, y] = pixel(f, t, v);
      lum.push_back(img.luminance(x, y));
    }
    INFO("luminance from outside in: " << lum[0] << " " << lum[1] << " " << lum[2] << " " << lum[3] << " " << lum[4]);
    for (size_t i = 1; i < lum.size(); ++i) CHECK(lum[i] > lum[i - 1] + 3);
    // The fan is symmetric about the median.
    CHECK(std::abs(img.luminance(pixel(f, t, 2.5).first, pixel(f, t, 2.5).second) - lum[2]) < 3);
  }
  orrery::remove_tree(root);
}

TEST_CASE("the LR-transfer view has a panel per parametrisation") {
  auto root = test::fresh_dir("lr");
  for (const char* param : {"sp", "umup"})
    for (int w : {64, 128})
      for (double x : {-3.0, -2.0, -1.0})
        test::write_run(root / (std::string(param) + "-w" + std::to_string(w) + "-" + std::to_string(int(x))),
                        test::run_config(param, w, std::exp2(x)), 50, 25, [&](int) { return 1 + (x + 2) * (x + 2); });
  const std::string png = (root / "lr.png").string(), layout_path = (root / "lr.json").string();
  REQUIRE(run("ui " + root.string() + " --view lr --screenshot " + png + " --layout " + layout_path) == 0);
  std::ifstream lf(layout_path);
  const Json layout = Json::parse(lf);
  const Json sp = frame(layout, "sp  (adamw)"), umup = frame(layout, "umup  (adamw)");
  CHECK(sp["area"][2].get<double>() < umup["area"][0].get<double>());  // side by side
  CHECK(sp["x"]["lo"].get<double>() < -3);
  CHECK(sp["x"]["hi"].get<double>() > -1);
  orrery::remove_tree(root);
}

TEST_CASE("the Evaluation tab puts each model's dot in its colour at its ratio") {
  auto root = test::fresh_dir("eval");
  const std::vector<std::string> datasets = {"air_passengers", "co2", "nottem", "uk_gas", "sunspot_month"};
  // Each model far from the others in every row, so no dot hides another.
  test::write_text(root / "eval" / "eval.json",
                   test::eval_json({"quickstart", "naive", "theta"}, datasets,
                                   [](size_t k, size_t d) { return std::exp2(2.0 * k - 2) * (1 + 0.05 * d); }).dump());
  test::write_text(root / "eval-1" / "eval.json",
                   test::eval_json({"big"}, datasets, [](size_t, size_t d) { return 0.1 * (1 + 0.05 * d); }).dump());
  const std::string png = (root / "eval.png").string(), layout_path = (root / "eval.json").string();
  REQUIRE(run("ui " + root.string() + " --view eval --screenshot " + png + " --layout " + layout_path) == 0);
  Image img(png);
  std::ifstream lf(layout_path);
  const Json f = frame(Json::parse(lf), "CRPS ratio to seasonal naive");
  // The colours the view gives the models, from the same files.
  orrery::ui::RunWatcher w(root.string());
  w.poll();
  const auto table = orrery::ui::merge_evaluations(w.snapshot()->runs);
  REQUIRE(table.models.size() == 4);
  std::set<int> distinct;
  for (size_t k = 0; k < table.models.size(); ++k) {
    const auto c = table.models[k].color;
    const Json colour = {c.r, c.g, c.b};
    distinct.insert((c.r << 16) | (c.g << 8) | c.b);
    for (size_t row = 0; row <= table.rows.size(); ++row) {
      const double ratio = row < table.rows.size() ? table.rows[row].cells[k].crps_ratio : table.models[k].summary.crps;
      INFO(table.models[k].label << " in row " << row << " at " << ratio);
      CHECK(colour_near(img, pixel(f, ratio, orrery::ui::eval_dot_y(table, row, k)), colour));
      // Nor a little to the right, still inside the plot: a dot is where its ratio says.
      if (ratio * 1.6 < f["x"]["hi"].get<double>())
        CHECK_FALSE(colour_near(img, pixel(f, ratio * 1.6, orrery::ui::eval_dot_y(table, row, k)), colour));
    }
  }
  CHECK(distinct.size() == 4);
  orrery::remove_tree(root);
}

TEST_CASE("the Search tab puts each complete trial at its value, the pruned at their last report") {
  auto root = test::fresh_dir("search");
  // Eight trials, the objective falling with x; trial 6 pruned at 4.0, trial 7 failed.
  orrery::Json trials = orrery::Json::array();
  for (int i = 0; i < 8; ++i) {
    const double x = 0.1 * (i + 1);
    orrery::Json t = {{"number", i}, {"state", i == 6 ? "pruned" : i == 7 ? "failed" : "complete"},
                      {"value", i < 6 ? orrery::Json(10 - 8 * x) : orrery::Json(nullptr)}, {"lost", false},
                      {"params", {{"x", x}}}, {"intermediate", i == 6 ? orrery::Json{{1, 4.0}} : orrery::Json::array()}};
    trials.push_back(t);
  }
  test::write_text(root / "study" / "study.json",
                   orrery::Json{{"name", "toy"}, {"direction", "minimize"}, {"best", 5}, {"trials", trials},
                                {"space", {{{"name", "x"}, {"kind", "real"}, {"low", 0.0}, {"high", 1.0}}}}}.dump());
  const std::string png = (root / "search.png").string(), layout_path = (root / "layout.json").string();
  REQUIRE(run("ui " + root.string() + " --view search --screenshot " + png + " --layout " + layout_path) == 0);
  Image img(png);
  std::ifstream lf(layout_path);
  const Json f = frame(Json::parse(lf), "toy: 8 trials (6 complete, 1 pruned, 1 failed, 0 running)");
  const auto fan = orrery::plot::theme().fan, muted = orrery::plot::theme().muted;
  for (int i = 0; i < 6; ++i) {
    INFO("trial " << i);
    CHECK(colour_near(img, pixel(f, i, 10 - 0.8 * (i + 1)), {fan.r, fan.g, fan.b}));
  }
  CHECK(colour_near(img, pixel(f, 6, 4.0), {muted.r, muted.g, muted.b}));
  CHECK_FALSE(colour_near(img, pixel(f, 7, 4.0), {fan.r, fan.g, fan.b}));  // a failed trial has no point
  orrery::remove_tree(root);
}

TEST_CASE("orrery ui runs a script beside the window and shows its run") {
  auto root = test::fresh_dir("script");
  test::write_text(root / "t.lua", R"(
    local m = orrery.model{arch = {"mlp"}, head = "point"}
    orrery.train{model = m, steps = 20, batch_size = 4, context_length = 64, quiet = true,
                 log_every = 5, name = args.name, runs_dir = args.runs})");
  const std::string runs = (root / "runs").string(), png = (root / "s.png").string();
  REQUIRE(run("ui " + (root / "t.lua").string() + " name=demo runs=" + runs + " --runs " + runs +
              " --screenshot " + png + " --layout " + (root / "s.json").string()) == 0);
  CHECK(std::filesystem::exists(root / "runs" / "demo" / "summary.json"));
  std::ifstream lf(root / "s.json");
  CHECK(Json::parse(lf)["colors"].contains("demo"));
  orrery::remove_tree(root);
}

TEST_CASE("hovering the loss plot draws a rule and a read-out at the mouse, nowhere else") {
  auto root = test::fresh_dir("hover");
  test::write_run(root / "r", test::run_config("sp", 64, 1e-3), 1000, 10, [](int s) { return 1.0 / std::sqrt(s); });
  const std::string plain = (root / "plain.png").string(), hover = (root / "hover.png").string();
  const std::string layout_path = (root / "l.json").string();
  REQUIRE(run("ui " + root.string() + " --screenshot " + plain + " --layout " + layout_path) == 0);
  std::ifstream lf(layout_path);
  const Json f = frame(Json::parse(lf), "loss");
  const auto [mx, my] = pixel(f, 500, 0.1);  // the middle of the run, below the curve
  REQUIRE(run("ui " + root.string() + " --screenshot " + hover + " --hover " + std::to_string(mx) + "," +
              std::to_string(my)) == 0);
  Image a(plain), b(hover);
  REQUIRE((a.w == b.w && a.h == b.h));
  int changed = 0, far = 0;
  for (int y = 0; y < a.h; ++y)
    for (int x = 0; x < a.w; ++x)
      if (a.at(x, y) != b.at(x, y)) {
        ++changed;
        // The rule spans the plot's height at the mouse's column, with a dot (radius 4) where it
        // meets the curve; the tooltip sits beside the mouse.
        const bool on_rule = std::abs(x - mx) <= 5;
        const bool by_tooltip = std::abs(x - mx) < 500 && std::abs(y - my) < 120;
        far += !(on_rule || by_tooltip);
      }
  CHECK(changed > 500);  // a tooltip with text
  CHECK(far == 0);
  orrery::remove_tree(root);
}

TEST_CASE("Lua opens the dashboard and writes the plots") {
  auto root = test::fresh_dir("lua");
  test::write_run(root / "runs" / "r", test::run_config("sp", 64, 1e-3), 100, 10, [](int s) { return 1.0 / s; });
  const std::string runs = (root / "runs").string(), png = (root / "lua.png").string();
  test::write_text(root / "t.lua", "local files = orrery.plot('" + runs + "/r')\n"
                   "assert(#files == 2 and files[1]:match('loss.svg$'), #files)\n"
                   "orrery.ui{runs_dir = '" + runs + "', view = 'loss', screenshot = '" + png + "'}\n");
  REQUIRE(run("run " + (root / "t.lua").string()) == 0);
  CHECK(std::filesystem::exists(png));
  CHECK(std::filesystem::exists(root / "runs" / "r" / "plots" / "loss.svg"));
  orrery::remove_tree(root);
}

TEST_CASE("orrery ui explains what is wrong") {
  auto root = test::fresh_dir("errors");
  const std::string out = (root / "err.txt").string();
  auto run_err = [&](const std::string& args, const std::string& env = "") {
    const std::string cmd = env + " " ORRERY_BIN " " + args + " 2>" + out;
    std::system(cmd.c_str());
    std::ifstream f(out);
    return std::string(std::istreambuf_iterator<char>(f), {});
  };
  CHECK_THAT(run_err("ui " + root.string() + " --screenshot x.png", "env -u DISPLAY"), Catch::Contains("Xvfb") && Catch::Contains("orrery plot"));
  CHECK_THAT(run_err("ui /no/such/runs"), Catch::Contains("/no/such/runs"));
  CHECK_THAT(run_err("ui " + root.string() + " --view fans"), Catch::Contains("--view"));
  CHECK_THAT(run_err("ui " + root.string() + " --after"), Catch::Contains("--after needs a value"));
  CHECK_THAT(run_err("plot " + root.string()), Catch::Contains("no runs"));
  CHECK_THAT(run_err("ui " + root.string() + " --hover 10,10"), Catch::Contains("need --screenshot"));
  test::write_text(root / "u.lua", "orrery.ui('" + root.string() + "')\n");
  CHECK_THAT(run_err("run " + (root / "u.lua").string(), "env -u DISPLAY"), Catch::Contains("orrery.plot"));
  orrery::remove_tree(root);
}

// The Evaluation tab's drill-down (--select) and orrery plot of an evaluation folder: a data set's
// windows, the model's fan beside the baseline's on the same context and actual values.
TEST_CASE("the Evaluation tab drills down to a data set's windows, the model's fan beside ETS's") {
  auto root = test::fresh_dir("eval-windows");
  test::write_text(root / "eval" / "eval.json",
                   test::eval_json({"mine", "ets", "seasonal_naive"}, {"a", "b"}, [](size_t k, size_t) { return 1.0 + k; }).dump());
  // One window each: a flat history at 10, actual values at 20, the model's fan around 50 and ETS's
  // around 10 (levels 0.1 .. 0.9, one unit apart).
  std::string lines = Json{{"orrery_eval_forecasts", 1}, {"split", "test"}, {"levels", {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}},
                           {"forecasters", {"mine", "ets", "seasonal_naive"}}, {"normaliser", "seasonal_naive"}, {"windows", 2}}
                          .dump() + "\n";
  auto fan = [](double centre) {
    Json q = Json::array();
    for (int l = 0; l < 9; ++l) q.push_back(std::vector<double>(12, centre + 2.0 * (l - 4)));
    return q;
  };
  for (const char* d : {"a", "b"})
    lines += Json{{"dataset", d}, {"frequency", "M"}, {"term", "short"}, {"series", std::string(d) + "/0"}, {"start", 24},
                  {"season", 12}, {"history", std::vector<double>(24, 10.0)}, {"actual", std::vector<double>(12, 20.0)},
                  {"forecasts", {{"mine", fan(50)}, {"ets", fan(10)}, {"seasonal_naive", fan(10)}}},
                  {"scores", {{"mine", {3.0, 2.5}}, {"ets", {1.0, 0.5}}, {"seasonal_naive", {1.0, 0.5}}}}}
                 .dump() + "\n";
  test::write_text(root / "eval" / "eval_forecasts.jsonl", lines);
  const std::string png = (root / "b.png").string(), layout_path = (root / "b.json").string();
  REQUIRE(run("ui " + root.string() + " --view eval --select b --screenshot " + png + " --layout " + layout_path) == 0);
  Image img(png);
  std::ifstream lf(layout_path);
  const Json layout = Json::parse(lf);
  const Json mine = frame(layout, "mine: MASE 3, CRPS 2.5"), ets = frame(layout, "ets: MASE 1, CRPS 0.5");
  // Each fan lies where its quantiles say, brighter than the empty plot beside it.
  CHECK(img.luminance(pixel(mine, 6, 50).first, pixel(mine, 6, 50).second) >
        img.luminance(pixel(mine, 6, 35).first, pixel(mine, 6, 35).second) + 10);
  CHECK(img.luminance(pixel(ets, 6, 10).first, pixel(ets, 6, 10).second) >
        img.luminance(pixel(ets, 6, 3).first, pixel(ets, 6, 3).second) + 10);
  // A data set no forecasts file holds is said, naming those there are; the window still opens.
  const std::string out = (root / "warning.txt").string();
  CHECK(run("ui " + root.string() + " --view eval --select nile --screenshot " + (root / "n.png").string() + " 2> " + out) == 0);
  CHECK(test::read_text(out).find("--select nile: no data set of that name in the evaluations' forecasts; they hold a, b") !=
        std::string::npos);
  // orrery plot draws the same windows as SVG files.
  REQUIRE(run("plot " + (root / "eval").string() + " --out " + (root / "plots").string()) == 0);
  CHECK(test::read_text((root / "plots" / "windows-b-M-short.svg").string()).find("mine: MASE 3, CRPS 2.5") != std::string::npos);
  // A damaged forecasts file is named with its line, in the window and on standard error, never
  // mistaken for none.
  const std::string good = test::read_text((root / "eval" / "eval_forecasts.jsonl").string());
  test::write_text(root / "eval" / "eval_forecasts.jsonl", good.substr(0, good.find('\n') + 1) + "{garbage\n");
  CHECK(run("ui " + root.string() + " --view eval --select b --screenshot " + (root / "g.png").string() + " 2> " + out) == 0);
  CHECK_THAT(test::read_text(out), Catch::Contains("eval_forecasts.jsonl:2: not JSON") &&
                                       !Catch::Contains("no run shown has an eval_forecasts.jsonl"));
  // A header and no window: orrery plot says it drew no windows from it.
  test::write_text(root / "eval" / "eval_forecasts.jsonl", good.substr(0, good.find('\n') + 1));
  CHECK(run("plot " + (root / "eval").string() + " --out " + (root / "plots4").string() + " 2> " + out) == 0);
  CHECK_THAT(test::read_text(out), Catch::Contains("holds no window, so no windows-*.svg is drawn from it"));
  // A window whose fan has fewer rows than the header's levels would draw a wrong fan: refused.
  std::string three = good;
  const auto fan_at = three.find("[[42");
  REQUIRE(fan_at != std::string::npos);
  three.erase(fan_at + 1, three.find("],[", fan_at) - fan_at + 1);  // drop the model's first quantile row
  test::write_text(root / "eval" / "eval_forecasts.jsonl", three);
  CHECK(run("plot " + (root / "eval").string() + " --out " + (root / "plots3").string() + " 2> " + out) != 0);
  CHECK_THAT(test::read_text(out), Catch::Contains("\"mine\" has 8 quantile rows for the header's 9 levels"));
  // A forecasts file of another version is refused, naming both versions.
  test::write_text(root / "eval" / "eval_forecasts.jsonl", "{\"orrery_eval_forecasts\": 7}\n");
  CHECK(run("plot " + (root / "eval").string() + " --out " + (root / "plots2").string() + " 2> " + out) != 0);
  CHECK(test::read_text(out).find("is a forecasts file of version 7, this orrery reads version 1") != std::string::npos);
  orrery::remove_tree(root);
}

// The Forecasts tab's CSV forecast (orrery ui --model --input): the numbers of orrery forecast,
// drawn where they lie, the baseline's fan beside on the same value axis; bad input said in the
// window and on exit.
TEST_CASE("the Forecasts tab forecasts a CSV with a model, beside a baseline, as orrery forecast does") {
  auto root = test::fresh_dir("csv-forecast");
  std::filesystem::create_directories(root / "tiny");
  test::write_text(root / "make.lua", "orrery.model{arch = {'toto2', d_model = 16, num_layers = 1, num_heads = 2}, seed = 3}"
                                      ":save('" + (root / "tiny" / "model.safetensors").string() + "')\n");
  REQUIRE(run("run " + (root / "make.lua").string()) == 0);
  std::string csv = "time,sales,price\n";
  for (int t = 0; t < 90; ++t)
    csv += std::to_string(2000 + t / 12.0) + "," + std::to_string(40 + 0.3 * t + 6 * std::sin(t * 0.5236)) + "," +
           std::to_string(t % 5) + "\n";
  test::write_text(root / "in.csv", csv);
  const std::string model = (root / "tiny").string(), input = (root / "in.csv").string();
  const std::string kLabel = "tiny: sales, context 64,512 (ensemble), Box-Cox averaged where checked (season 1)";
  const std::string png = (root / "f.png").string(), layout_path = (root / "f.json").string(),
                    prefix = (root / "export").string();
  REQUIRE(run("ui " + root.string() + " --model " + model + " --input " + input + " --column sales --horizon 12 "
              "--baseline naive --export " + prefix + " --screenshot " + png + " --layout " + layout_path) == 0);
  // The export holds what orrery forecast prints for the same request, to the byte: both forecast
  // with every front end's defaults (inference_defaults.h).
  const std::string cli = (root / "cli.csv").string();
  REQUIRE(run("forecast --model " + model + " --input " + input + " --target sales --horizon 12 --out " + cli) == 0);
  CHECK(test::read_text(prefix + ".csv") == test::read_text(cli));
  CHECK(test::read_text(prefix + ".svg").find(kLabel) != std::string::npos);
  Image exported(prefix + ".png");
  CHECK(exported.w > 400);
  // Each median lies where its numbers say, in the fan's colour; both panels share one value axis.
  Image img(png);
  std::ifstream lf(layout_path);
  const Json layout = Json::parse(lf);
  const Json mine = frame(layout, kLabel), naive = frame(layout, "naive (season 1)");
  CHECK(mine["y"]["lo"] == naive["y"]["lo"]);
  CHECK(mine["y"]["hi"] == naive["y"]["hi"]);
  const auto fan = orrery::plot::theme().fan;
  const Json fan_rgb = {fan.r, fan.g, fan.b};
  std::vector<std::string> lines;
  {
    std::istringstream in(test::read_text(cli));
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  for (int h : {2, 6, 10}) {
    std::istringstream cells(lines[static_cast<size_t>(h)]);  // step, time, q0.1 .. q0.9
    std::string cell;
    for (int k = 0; k < 7; ++k) std::getline(cells, cell, ',');
    const double median = std::stod(cell);
    INFO("step " << h << ", median " << median);
    CHECK(colour_near(img, pixel(mine, h - 1, median), fan_rgb));
  }
  // Naive's median is the last value at every step.
  const double last = 40 + 0.3 * 89 + 6 * std::sin(89 * 0.5236);
  CHECK(colour_near(img, pixel(naive, 5, last), fan_rgb));

  // Another tab first: the screenshot does not wait for a forecast no one draws.
  REQUIRE(run("ui " + root.string() + " --model " + model + " --input " + input + " --view loss --screenshot " +
              (root / "loss.png").string()) == 0);
  // Bad input: said in the window (the screenshot is still written) and on exit, naming the input.
  const std::string err = (root / "err.txt").string();
  auto fails = [&](const std::string& args) {
    std::filesystem::remove(root / "e.png");
    const int status = run("ui " + root.string() + " " + args + " --screenshot " + (root / "e.png").string() + " 2> " + err);
    CHECK(std::filesystem::exists(root / "e.png"));
    return status == 1 ? test::read_text(err) : "exit status " + std::to_string(status);
  };
  CHECK_THAT(fails("--model " + model + " --input " + input + " --column revenue"),
             Catch::Contains("no column \"revenue\" (named by --column)") && Catch::Contains("sales, price"));
  CHECK_THAT(fails("--model " + model + " --input " + input + " --horizon 20000"),
             Catch::Contains("the dashboard draws horizons up to 10000 steps"));
  CHECK_THAT(fails("--model " + model + " --input " + input + " --horizon 0"), Catch::Contains("--horizon must be at least 1"));
  std::filesystem::create_directories(root / "empty");
  CHECK_THAT(fails("--model " + (root / "empty").string() + " --input " + input), Catch::Contains("holds no model"));
  CHECK_THAT(fails("--model " + model + " --input " + (root / "none.csv").string()), Catch::Contains("none.csv"));
  // Options that cannot be right are refused before a window opens.
  CHECK(run("ui " + root.string() + " --export x 2> " + err) == 1);
  CHECK_THAT(test::read_text(err), Catch::Contains("--export writes a CSV forecast"));
  CHECK(run("ui " + root.string() + " --model " + model + " --input " + input + " --baseline prophet 2> " + err) == 1);
  CHECK_THAT(test::read_text(err), Catch::Contains("--baseline must be none or one of"));
  CHECK(run("ui " + root.string() + " --model " + model + " --input " + input + " --season 0 2> " + err) == 1);
  CHECK_THAT(test::read_text(err), Catch::Contains("--season must be at least 1 step"));
  CHECK(run("ui " + root.string() + " --model " + model + " --input " + input + " --export x --view eval 2> " + err) == 1);
  CHECK_THAT(test::read_text(err), Catch::Contains("--export writes the Forecasts tab's view"));
  CHECK(run("ui " + root.string() + " --model " + model + " --input " + input + " --export '' 2> " + err) == 1);
  CHECK_THAT(test::read_text(err), Catch::Contains("--export needs a value, got an empty one"));
  orrery::remove_tree(root);
}
