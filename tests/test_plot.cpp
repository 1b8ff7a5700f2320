// The dashboard's data side and plots, without a display: axes, run files, the watcher that
// tails them, the LR-transfer grouping and the SVG report.
#include <catch2/catch.hpp>

#include <cmath>

#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "plot/axis.h"
#include "plot/plot.h"
#include "plot/svg_canvas.h"
#include "runs/run_watcher.h"
#include "ui_fixtures.h"
#include "views/svg_report.h"
#include "views/views.h"

using namespace orrery;
using orrery::ui::kNaN;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST_CASE("linear ticks are 1-2-5 steps inside the range") {
  plot::Axis a{0.0, 1000.0};
  auto t = plot::ticks(a, 5);
  REQUIRE(t.size() == 6);
  CHECK(t[1].value == 200);
  CHECK(t[5].label == "1000");
  a = {-0.013, 0.021};
  for (const auto& tk : plot::ticks(a)) CHECK((tk.value >= a.lo && tk.value <= a.hi));
  CHECK(plot::ticks(a).size() >= 3);
}

TEST_CASE("log ticks mark decades, and fall back to plain steps inside one") {
  plot::Axis a{1e-4, 1.0, true};
  std::vector<std::string> labels;
  for (const auto& t : plot::ticks(a)) if (t.major) labels.push_back(t.label);
  CHECK(labels == std::vector<std::string>{"1e-4", "0.001", "0.01", "0.1", "1"});
  plot::Axis narrow{0.188, 0.232, true};
  std::vector<double> v;
  for (const auto& t : plot::ticks(narrow)) v.push_back(t.value);
  CHECK(v.size() >= 3);  // 0.19, 0.2, 0.21, ...
  CHECK(v.front() == Approx(0.19));
}

TEST_CASE("numbers are labelled compactly") {
  CHECK(plot::format_number(0) == "0");
  CHECK(plot::format_number(0.25) == "0.25");
  CHECK(plot::format_number(1500) == "1500");
  CHECK(plot::format_number(20000) == "20k");
  CHECK(plot::format_number(1e-5) == "1e-5");
  CHECK(plot::format_number(2.5e-4) == "2.5e-4");
}

TEST_CASE("a range pads its data and maps values to pixels") {
  plot::Range r;
  r.add_all(std::vector<double>{2, 4, NAN, 6});
  plot::Axis a = r.axis("y", 0.0);
  CHECK(a.lo == 2);
  CHECK(a.hi == 6);
  plot::PlotFrame f{"p", {100, 50, 300, 250}, {0.0, 10.0}, a};
  CHECK(f.to_pixel(5, 4).x == Approx(200));
  CHECK(f.to_pixel(5, 4).y == Approx(150));
  CHECK(f.x_at(150) == Approx(2.5));
  plot::Range lg(true);
  lg.add(-1), lg.add(0), lg.add(0.1), lg.add(10);  // a log range ignores values it cannot show
  plot::Axis la = lg.axis("", 0.0);
  CHECK(la.lo == Approx(0.1));
  CHECK(la.fraction(1.0) == Approx(0.5));
}

TEST_CASE("a range of extreme values maps to finite pixels: 1e-40s keep their spread, 1e308s do not overflow") {
  plot::Range tiny;
  tiny.add_all(std::vector<double>{1e-40, 3e-40, 2e-40});
  const plot::Axis t = tiny.axis("", 0.0);
  CHECK(t.lo == Approx(1e-40).epsilon(1e-9));
  CHECK(t.hi == Approx(3e-40).epsilon(1e-9));
  const plot::PlotFrame ft{"p", {0, 0, 100, 100}, {0.0, 1.0}, t};
  CHECK(ft.to_pixel(0, 2e-40).y == Approx(50));
  plot::Range huge;
  huge.add_all(std::vector<double>{-1e308, 1e308, 0});
  const plot::Axis h = huge.axis("", 0.04);
  CHECK(std::isfinite(h.hi - h.lo));
  const plot::PlotFrame fh{"p", {0, 0, 100, 100}, {0.0, 1.0}, h};
  CHECK(std::isfinite(fh.to_pixel(0, 1e308).y));
  CHECK(fh.to_pixel(0, 0).y == Approx(50));
  for (double v : {1e308, -1e308}) {  // every value beyond the reach: still an axis, lo below hi
    plot::Range far;
    far.add(v), far.add(v * 0.99);
    const plot::Axis a = far.axis("", 0.04);
    CHECK(a.lo < a.hi);
    CHECK(std::isfinite(a.hi - a.lo));
  }
  plot::Range one;
  one.add(7e-40);
  const plot::Axis o = one.axis("", 0.0);
  CHECK(o.lo < 7e-40);
  CHECK(o.hi > 7e-40);
  CHECK(o.hi - o.lo < 1e-39);
}

TEST_CASE("smoothing is a debiased moving average") {
  const std::vector<double> y = {1, 1, 1, 3};
  auto s = ui::smooth(y, 0.5);
  CHECK(s[0] == 1);  // debiased: the first point is not pulled towards zero
  CHECK(s[2] == Approx(1));
  CHECK(s[3] == Approx((0.4375 + 1.5) / 0.9375));
  CHECK(ui::smooth(y, 0.0) == y);
}

TEST_CASE("fans nest the symmetric level pairs, outermost first") {
  const std::vector<double> nine = {.1, .2, .3, .4, .5, .6, .7, .8, .9};
  auto p = ui::band_pairs(nine);
  REQUIRE(p.size() == 4);
  CHECK(p[0] == std::pair<size_t, size_t>{0, 8});
  CHECK(p[3] == std::pair<size_t, size_t>{3, 5});
  CHECK(ui::band_pairs(std::vector<double>{0.5}).empty());
}

TEST_CASE("run files fold into a Run") {
  ui::Run r;
  ui::apply_config(r, test::run_config("umup", 256, 0.5));
  CHECK(r.param == "umup");
  CHECK(r.width == 256);
  CHECK(r.lr == 0.5);
  CHECK(r.planned_steps == 1000);
  CHECK(r.world_size == 1);  // runs from before data parallelism have no world_size
  orrery::Json two = test::run_config("umup", 256, 0.5);
  two["world_size"] = 2;
  ui::Run parallel;
  ui::apply_config(parallel, two);
  CHECK(parallel.world_size == 2);
  ui::apply_metrics_event(r, {{"event", "train"}, {"step", 10}, {"loss", 0.5}, {"lr", 0.1},
                              {"update_rms", {{"normuon:hidden", 0.01}, {"adamw:rest", 0.02}}}});
  ui::apply_metrics_event(r, {{"event", "val"}, {"step", 10}, {"loss", 0.6}});
  ui::apply_metrics_event(r, {{"event", "mystery"}});
  ui::apply_metrics_event(r, {{"event", "skip"}, {"step", 11}, {"reason", "loss"}});
  ui::apply_metrics_event(r, {{"event", "spike"}, {"step", 12}, {"loss", 9.0}, {"median", 0.5}});
  CHECK(r.skipped == std::vector<double>{11});
  CHECK(r.spikes.x == std::vector<double>{12});
  CHECK(r.spikes.last() == 9.0);
  CHECK(r.step == 10);
  CHECK(r.val_loss.last() == 0.6);
  CHECK(r.update_rms.size() == 2);
  CHECK(r.status(0) == ui::RunStatus::running);
  CHECK(r.status(1e9) == ui::RunStatus::stale);
  ui::apply_summary(r, {{"final_loss", 0.4}});
  CHECK(r.status(1e9) == ui::RunStatus::done);
  CHECK(r.latest_loss() == 0.4);
  ui::apply_summary(r, {{"error", "training stopped at step 12: 10 steps in a row had a non-finite loss"}});
  CHECK(r.status(0) == ui::RunStatus::failed);
  // A routed optimizer: the first group's rate is the run's.
  Json c = test::run_config("sp", 64, 1);
  c["optimizer"] = Json::array({{{"name", "normuon"}, {"options", {{"lr", 0.02}}}}, {{"name", "adamw"}, {"options", {{"lr", 0.001}}}}});
  ui::apply_config(r, c);
  CHECK(r.optimizer == "normuon+adamw");
  CHECK(r.lr == 0.02);
}

TEST_CASE("the watcher tails growing files, half-written lines and replaced files") {
  auto root = test::fresh_dir("watch");
  auto dir = root / "exp" / "a";
  test::write_text(dir / "config.json", test::run_config("sp", 64, 1e-3).dump());
  test::write_text(dir / "metrics.jsonl", R"({"event":"train","step":1,"loss":1.0})" "\n" R"({"event":"train","st)");
  ui::RunWatcher w(root.string());
  CHECK(w.poll());
  auto ws = w.snapshot();
  REQUIRE(ws->runs.size() == 1);
  CHECK(ws->runs[0]->name == "exp/a");
  CHECK(ws->runs[0]->train_loss.y.size() == 1);
  CHECK_FALSE(w.poll());  // nothing new
  const auto before = w.snapshot();
  test::write_text(dir / "metrics.jsonl", R"(ep":2,"loss":0.5})" "\n" "not json\n", true);
  CHECK(w.poll());
  ws = w.snapshot();
  CHECK(ws->runs[0]->train_loss.y == std::vector<double>{1.0, 0.5});
  CHECK(ws->runs[0]->bad_lines == 1);
  CHECK(before->runs[0]->train_loss.y.size() == 1);  // a published snapshot never changes
  test::write_text(dir / "forecasts.jsonl", test::flat_fan_event(2, 8, 16).dump() + "\n");
  test::write_text(dir / "summary.json", Json{{"final_loss", 0.5}}.dump());
  CHECK(w.poll());
  ws = w.snapshot();
  CHECK(ws->runs[0]->finished);
  REQUIRE(ws->runs[0]->forecasts.size() == 1);
  CHECK(ws->runs[0]->forecasts[0]->series[0].quantiles.size() == 9);
  test::write_text(dir / "metrics.jsonl", R"({"event":"train","step":1,"loss":2.0})" "\n");  // replaced
  w.poll();
  CHECK(w.snapshot()->runs[0]->train_loss.y == std::vector<double>{2.0});
  orrery::remove_tree(dir);
  CHECK(w.poll());
  CHECK(w.snapshot()->runs.empty());
  orrery::remove_tree(root);
}

TEST_CASE("the watcher survives odd folders: wrong types, nothing readable yet, a replaced file, a lost summary") {
  auto root = test::fresh_dir("odd");
  // Valid JSON with the wrong types everywhere.
  test::write_text(root / "typed" / "config.json", R"({"model": 3, "optimizer": [1, "x"], "train": {"steps": "many"}})");
  test::write_text(root / "typed" / "metrics.jsonl", R"({"event":"train","step":1,"loss":"low","update_rms":[1]})" "\n"
                                                    R"({"event":"train","step":2,"loss":0.5})" "\n");
  test::write_text(root / "typed" / "forecasts.jsonl", R"({"event":"forecast","series":[1, {"name": 2}]})" "\n");
  test::write_text(root / "typed" / "summary.json", R"({"final_loss": "done", "interrupted": "no"})");
  test::write_text(root / "coord" / "coord_check.json", R"({"params": {"sp": {"layers": [1]}}})");
  // A run folder copied half-way: an empty config and no metrics yet.
  test::write_text(root / "half" / "config.json", "");
  std::filesystem::create_symlink(root / "nowhere", root / "dangling");
  ui::RunWatcher w(root.string());
  REQUIRE_NOTHROW(w.poll());
  auto ws = w.snapshot();
  std::vector<std::string> names;
  for (const auto& r : ws->runs) names.push_back(r->name);
  CHECK(names == std::vector<std::string>{"typed"});  // "half" waits until something is readable
  CHECK(ws->runs[0]->train_loss.y.size() == 2);
  CHECK(ws->runs[0]->train_loss.y[1] == 0.5);
  CHECK(ws->runs[0]->bad_lines >= 1);  // the forecast line whose series are not objects
  test::write_text(root / "half" / "config.json", test::run_config("sp", 64, 1e-3).dump());
  w.poll();
  CHECK(w.snapshot()->runs.size() == 2);

  // A file replaced by a longer one is read again from its start, not from the old offset.
  auto dir = root / "grown";
  test::write_text(dir / "metrics.jsonl", R"({"event":"train","step":1,"loss":1.0})" "\n");
  w.poll();
  std::filesystem::remove(dir / "metrics.jsonl");
  test::write_text(dir / "metrics.jsonl", R"({"event":"train","step":1,"loss":3.0})" "\n" R"({"event":"train","step":2,"loss":2.0})" "\n");
  w.poll();
  for (const auto& r : w.snapshot()->runs)
    if (r->name == "grown") CHECK(r->train_loss.y == std::vector<double>{3.0, 2.0});
  // A summary that disappears makes the run unfinished again.
  test::write_text(dir / "summary.json", Json{{"final_loss", 2.0}}.dump());
  w.poll();
  std::filesystem::remove(dir / "summary.json");
  w.poll();
  for (const auto& r : w.snapshot()->runs)
    if (r->name == "grown") CHECK_FALSE(r->finished);
  orrery::remove_tree(root);
}

TEST_CASE("polls from the caller and the watcher's thread may overlap") {
  auto root = test::fresh_dir("overlap");
  for (int i = 0; i < 20; ++i)
    test::write_run(root / ("r" + std::to_string(i)), test::run_config("sp", 64, 1e-3), 100, 1, [](int s) { return 1.0 / s; });
  ui::RunWatcher w(root.string());
  w.start(0.0);
  for (int i = 0; i < 50; ++i) {
    test::write_text(root / "r0" / "metrics.jsonl", R"({"event":"train","step":1000,"loss":0.1})" "\n", true);
    w.poll();
  }
  w.stop();
  w.poll();
  CHECK(w.snapshot()->runs.size() == 20);
  CHECK(w.snapshot()->runs[0]->train_loss.y.size() == 150);
  orrery::remove_tree(root);
}

TEST_CASE("the watcher's thread publishes what other writers append") {
  auto root = test::fresh_dir("thread");
  ui::RunWatcher w(root.string());
  std::atomic<int> changes{0};
  w.start(0.02, [&] { ++changes; });
  test::write_run(root / "r", test::run_config("sp", 64, 1e-3), 100, 10, [](int s) { return 1.0 / s; });
  auto complete = [&] {
    auto ws = w.snapshot();
    return ws->runs.size() == 1 && ws->runs[0]->finished && ws->runs[0]->train_loss.x.size() == 10;
  };
  for (int i = 0; i < 1000 && !complete(); ++i) usleep(10000);  // up to 10 s on a loaded machine
  w.stop();
  REQUIRE(w.snapshot()->runs.size() == 1);
  INFO("finished " << w.snapshot()->runs[0]->finished << ", bad lines " << w.snapshot()->runs[0]->bad_lines);
  CHECK(w.snapshot()->runs[0]->train_loss.x.size() == 10);
  CHECK(changes > 0);
  orrery::remove_tree(root);
}

TEST_CASE("a sweep groups into panels and curves with their optimum") {
  std::vector<std::shared_ptr<const ui::Run>> runs;
  auto add = [&](const std::string& param, int width, double log2_lr, double loss, bool finished = true) {
    auto r = std::make_shared<ui::Run>();
    ui::apply_config(*r, test::run_config(param, width, std::exp2(log2_lr)));
    r->train_loss.add(100, loss);
    if (finished) ui::apply_summary(*r, {{"final_loss", loss}});
    runs.push_back(r);
  };
  for (double x : {-3.0, -2.0, -1.0, 0.0, 1.0})
    for (int seed = 0; seed < 2; ++seed) add("umup", 64, x, 1 + 0.1 * (x + 0.5) * (x + 0.5) + 0.01 * seed);
  add("umup", 128, -1, 0.9, false);
  add("umup", 128, 0, 0.8);
  add("sp", 64, -9, NAN);  // diverged
  add("sp", 64, -10, 1.2);
  auto panels = ui::group_sweep(runs);
  REQUIRE(panels.size() == 2);
  const auto& umup = panels[1];
  CHECK(umup.param == "umup");
  REQUIRE(umup.curves.size() == 2);
  const auto& c64 = umup.curves[0];
  CHECK(c64.points.size() == 5);
  CHECK(c64.points[0].losses.size() == 2);
  CHECK(c64.points[0].loss == Approx(1 + 0.1 * 6.25 + 0.005));
  CHECK(c64.best_log2_lr == -1);
  CHECK(c64.fitted_log2_lr == Approx(-0.5).margin(1e-6));  // the parabola's vertex
  CHECK(umup.curves[1].points[0].running == 1);
  CHECK(panels[0].curves[0].points[1].diverged == 1);
  // Lone runs at one rate only show when nothing sweeps.
  runs.clear();
  add("sp", 64, -9, 0.3);
  CHECK(ui::group_sweep(runs).size() == 1);
}

TEST_CASE("a sweep's variants, depths and seeds: each seed's optimum and the optimum's move") {
  // Two Muon-family rules of one parametrisation are two panels; curves by depth at one width;
  // seed s has its own optimum at x = s / 4 - 1 at depth 2 and x = s / 4 at depth 8.
  std::vector<std::shared_ptr<const ui::Run>> runs;
  for (const std::string rule : {"toto2", "spectral"})
    for (int depth : {2, 8})
      for (double x : {-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0})
        for (int seed = 0; seed < 3; ++seed) {
          Json c = test::run_config("umup", 128, std::exp2(x), "normuon");
          c["model"]["param"]["options"] = {{"muon_rule", rule}};
          c["model"]["depth"] = depth;
          c["train"]["seed"] = seed;
          auto r = std::make_shared<ui::Run>();
          ui::apply_config(*r, c);
          const double centre = seed / 4.0 - (depth == 2 ? 1.0 : 0.0) + (rule == "spectral" ? -0.5 : 0.0);
          ui::apply_summary(*r, {{"final_loss", 1 + 0.1 * (x - centre) * (x - centre)}});
          runs.push_back(r);
        }
  auto panels = ui::group_sweep(runs);
  REQUIRE(panels.size() == 2);
  CHECK(panels[0].param == "umup muon_rule=spectral");
  CHECK(panels[1].param == "umup muon_rule=toto2");
  for (const auto& panel : panels) {
    INFO(panel.param);
    REQUIRE(panel.curves.size() == 2);
    CHECK(panel.curves[0].depth == 2);
    CHECK(panel.curves[1].depth == 8);
    REQUIRE(panel.curves[0].seed_optima.size() == 3);
    const double offset = panel.param.find("spectral") != std::string::npos ? -0.5 : 0.0;
    CHECK(panel.curves[0].seed_optima.at(2) == Approx(-0.5 + offset).margin(1e-6));
    CHECK(panel.shift.along_depth);
    CHECK(panel.shift.from == 2);
    CHECK(panel.shift.to == 8);
    CHECK(panel.shift.octaves == Approx(1.0).margin(1e-6));
    CHECK(panel.shift.seeds_lo == Approx(1.0).margin(1e-6));
    CHECK(panel.shift.seeds_hi == Approx(1.0).margin(1e-6));
  }
  plot::SvgCanvas canvas(900, 400, plot::Color{});
  ui::draw_lr_transfer(canvas, {0, 0, 900, 400}, panels);
  const std::string svg = canvas.str();
  CHECK(svg.find("depth 8") != std::string::npos);
  CHECK(svg.find("moves +1.00 octave, depth 2 to 8 (seeds +1.00..+1.00)") != std::string::npos);
}

TEST_CASE("the loss view marks skipped steps and loss spikes") {
  auto run = std::make_shared<ui::Run>();
  ui::Run& r = *run;
  r.name = "faulty";
  for (int step = 1; step <= 40; ++step) {
    if (step == 20) {
      ui::apply_metrics_event(r, {{"event", "skip"}, {"step", step}, {"reason", "loss"}});
      continue;
    }
    ui::apply_metrics_event(r, {{"event", "train"}, {"step", step}, {"loss", step == 30 ? 50.0 : 1.0 / step}});
    if (step == 30) ui::apply_metrics_event(r, {{"event", "spike"}, {"step", step}, {"loss", 50.0}, {"median", 0.05}});
  }
  const std::vector<ui::StyledRun> runs = {{run, plot::Color{200, 30, 30, 255}}};
  plot::SvgCanvas c(800, 500, plot::Color{});
  ui::draw_loss_view(c, {0, 0, 800, 500}, runs, ui::LossViewOptions{});
  const std::string svg = c.str();
  CHECK(svg.find("skipped step") != std::string::npos);
  CHECK(svg.find("loss spike") != std::string::npos);
  auto clean = std::make_shared<ui::Run>(r);
  clean->skipped.clear(), clean->spikes = {};
  plot::SvgCanvas c2(800, 500, plot::Color{});
  const std::vector<ui::StyledRun> clean_runs = {{clean, plot::Color{200, 30, 30, 255}}};
  ui::draw_loss_view(c2, {0, 0, 800, 500}, clean_runs, ui::LossViewOptions{});
  CHECK(c2.str().find("loss spike") == std::string::npos);
  CHECK(c2.str().size() < svg.size());
}

TEST_CASE("a text run: bits per byte in a strip of their own, its samples wrapped in a view") {
  auto run = std::make_shared<ui::Run>();
  ui::Run& r = *run;
  r.name = "gpt";
  for (int step = 25; step <= 100; step += 25) {
    ui::apply_metrics_event(r, {{"event", "train"}, {"step", step}, {"loss", 4.0 - step / 50.0}});
    ui::apply_metrics_event(r, {{"event", "val"}, {"step", step}, {"loss", 3.5}, {"bits_per_unit", 2.5 - step / 100.0},
                                {"unit", "byte"}});
    ui::apply_metrics_event(r, {{"event", "sample"}, {"step", step}, {"prompt", "In the beginning"},
                                {"text", " God created step" + std::to_string(step)}});
  }
  ui::apply_metrics_event(r, {{"event", "sample"}, {"step", 101}, {"prompt", 3}});  // no text: ignored
  CHECK(r.val_bits.y == std::vector<double>{2.25, 2.0, 1.75, 1.5});
  CHECK(r.val_unit == "byte");
  REQUIRE(r.samples.size() == 4);
  CHECK(r.samples.back().step == 100);
  CHECK(r.samples.back().text == " God created step100");

  const std::vector<ui::StyledRun> runs = {{run, plot::Color{200, 30, 30, 255}}};
  plot::SvgCanvas c(800, 500, plot::Color{});
  const auto frames = ui::draw_loss_view(c, {0, 0, 800, 500}, runs, ui::LossViewOptions{});
  REQUIRE(frames.size() == 3);  // loss, learning rate, bits per byte
  CHECK(c.str().find("validation bits per byte") != std::string::npos);
  CHECK(frames[2].area.y0 > frames[0].area.y1);  // between the loss and the learning rate
  CHECK(frames[2].area.y1 < frames[1].area.y0);
  auto series = std::make_shared<ui::Run>(r);
  series->val_bits = {}, series->samples.clear();
  const std::vector<ui::StyledRun> plain = {{series, plot::Color{200, 30, 30, 255}}};
  plot::SvgCanvas c2(800, 500, plot::Color{});
  CHECK(ui::draw_loss_view(c2, {0, 0, 800, 500}, plain, ui::LossViewOptions{}).size() == 2);

  // Wrapping: pieces in order cover the text but its newlines, each within the width, broken
  // after a space where one fits and never inside a character.
  plot::SvgCanvas m(800, 500, plot::Color{});
  const std::string text = "And God said, Let there be light: and there was light.\n\nAnd God saw the light, "
                           "that it was good: \xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9";
  const float width = m.text_size("And God said, Let").x;
  const auto lines = ui::wrap_text(m, text, width);
  std::string joined;
  size_t at = 0;
  for (const auto& l : lines) {
    REQUIRE(l.begin >= at);
    CHECK(text.substr(at, l.begin - at).find_first_not_of('\n') == std::string::npos);  // only newlines skipped
    const std::string piece = text.substr(l.begin, l.end - l.begin);
    CHECK(m.text_size(piece).x <= width);
    CHECK((piece.empty() || (static_cast<unsigned char>(piece[0]) & 0xC0) != 0x80));  // starts a character
    joined += piece, at = l.end;
  }
  CHECK(at == text.size());
  std::string without_newlines = text;
  std::erase(without_newlines, '\n');
  CHECK(joined == without_newlines);
  CHECK(text.substr(lines[0].begin, lines[0].end - lines[0].begin) == "And God said, ");
  CHECK(std::count_if(lines.begin(), lines.end(), [](const auto& l) { return l.begin == l.end; }) == 1);  // the blank line

  plot::SvgCanvas sc(800, 300, plot::Color{});
  const float h = ui::draw_samples(sc, {0, 0, 800, 300}, runs);
  const std::string svg = sc.str();
  CHECK(h > 4 * 14);
  CHECK(svg.find("step100") < svg.find("step25"));  // newest first
  CHECK(svg.find("In the beginning") != std::string::npos);
  plot::SvgCanvas none(800, 300, plot::Color{});
  ui::draw_samples(none, {0, 0, 800, 300}, plain);
  CHECK(none.str().find("no samples") != std::string::npos);
}

TEST_CASE("plots draw known data where the axes say, and SVG files hold it") {
  plot::SvgCanvas c(400, 300, plot::Color{});
  plot::drawn_frames().clear();
  plot::Plot p(c, {0, 0, 400, 300}, "t", plot::Axis{0.0, 10.0}, plot::Axis{0.0, 1.0});
  const std::vector<double> x = {0, 5, 10}, y = {0, 1, 0.5};
  p.line(x, y, plot::Color{255, 0, 0, 255});
  REQUIRE(plot::drawn_frames().size() == 1);
  const plot::Vec2 mid = p.to_pixel(5, 1);
  char expect[32];
  std::snprintf(expect, sizeof expect, "%.1f,%.1f", mid.x, mid.y);
  const std::string svg = c.str();
  CHECK(svg.find(expect) != std::string::npos);
  CHECK(svg.find("#ff0000") != std::string::npos);
  CHECK(count(svg, "<clipPath") == 1);
  // A long series is decimated to at most a few points per pixel column.
  std::vector<double> lx(100000), ly(100000);
  for (size_t i = 0; i < lx.size(); ++i) lx[i] = i * 1e-4, ly[i] = std::sin(i * 1e-3) * 0.5 + 0.5;
  plot::SvgCanvas c2(400, 300, plot::Color{});
  plot::Plot p2(c2, {0, 0, 400, 300}, "", plot::Axis{0.0, 10.0}, plot::Axis{0.0, 1.0});
  p2.line(lx, ly, plot::Color{0, 0, 255, 255});
  CHECK(count(c2.str(), ",") < 4 * 400 + 200);
}

TEST_CASE("a forecast's covariate rows are strips under it on its time axis, past-only ones ending at the start") {
  Json event = test::flat_fan_event(10, 4, 8);
  Json& series = event["series"][0];
  series["covariates"] = Json::array();
  series["covariates"].push_back({{"role", "known-future"}, {"history", std::vector<double>(8, 1.0)},
                                  {"future", std::vector<double>{2, 3, 4, 5}}});
  series["covariates"].push_back({{"role", "past-only"}, {"history", std::vector<double>(8, 7.0)},
                                  {"future", std::vector<double>{9, 9, 9, 9}}});  // never drawn: not read
  series["covariates"].push_back(3);  // not an object: skipped
  for (int k = 0; k < 3; ++k) series["covariates"].push_back({{"role", "past-only"}, {"history", {0.0, 1.0}}});
  const auto snap = ui::parse_forecast_event(event);
  REQUIRE(snap);
  const auto& rows = snap->series[0].covariates;
  REQUIRE(rows.size() == 5);
  CHECK(rows[0].known_future);
  CHECK(rows[0].future == std::vector<double>{2, 3, 4, 5});
  CHECK(!rows[1].known_future);
  CHECK(rows[1].future.empty());

  plot::SvgCanvas c(600, 600, plot::Color{});
  plot::drawn_frames().clear();
  const plot::PlotFrame target = ui::draw_forecast(c, {0, 0, 600, 600}, *snap, 0, "val/0");
  const auto& frames = plot::drawn_frames();
  REQUIRE(frames.size() == 4);  // the target and three strips
  CHECK(frames[1].id == "covariate 1: known future");
  CHECK(frames[2].id == "covariate 2: past only");
  CHECK(frames[3].id == "covariate 3: past only (+2 more not shown)");
  for (size_t k = 1; k < frames.size(); ++k) {
    CHECK(frames[k].area.y0 >= target.area.y1);  // under the target
    CHECK(frames[k].to_pixel(0, 0).x == Approx(target.to_pixel(0, 0).x));  // one time axis
    CHECK(frames[k].to_pixel(-8, 0).x == Approx(target.to_pixel(-8, 0).x));
  }
  CHECK(target.area.h() > 2 * frames[1].area.h());
  const std::string svg = c.str();
  // The known-future row's horizon values are drawn; the past-only row's (9s) are not.
  char at_future[32], at_hidden[32];
  std::snprintf(at_future, sizeof at_future, "%.1f,%.1f", frames[1].to_pixel(3, 5).x, frames[1].to_pixel(3, 5).y);
  std::snprintf(at_hidden, sizeof at_hidden, "%.1f,%.1f", frames[2].to_pixel(3, 9).x, frames[2].to_pixel(3, 9).y);
  CHECK(svg.find(at_future) != std::string::npos);
  CHECK(svg.find(at_hidden) == std::string::npos);
  // Static covariates follow the series' name in its title; one that is not a number is skipped.
  Json with_statics = test::flat_fan_event(10, 4, 8);
  with_statics["series"][0]["statics"] = {{"size", 400}, {"urban", 1}, {"note", "x"}};
  const auto statics_snap = ui::parse_forecast_event(with_statics);
  REQUIRE(statics_snap);
  REQUIRE(statics_snap->series[0].statics.size() == 2);
  plot::drawn_frames().clear();
  ui::draw_forecast(c, {0, 0, 600, 600}, *statics_snap, 0, "val/0");
  REQUIRE(!plot::drawn_frames().empty());
  CHECK(plot::drawn_frames()[0].id == "val/0 (size 400, urban 1)");
  // A categorical one's 0/1 values read as its category.
  with_statics["series"][0]["statics"] = {{"size", 400}, {"format=mall", 0}, {"format=street", 1}};
  plot::drawn_frames().clear();
  ui::draw_forecast(c, {0, 0, 600, 600}, *ui::parse_forecast_event(with_statics), 0, "val/0");
  REQUIRE(!plot::drawn_frames().empty());
  CHECK(plot::drawn_frames()[0].id == "val/0 (format=street, size 400)");
  // A hand-edited or foreign file: a role of another type, a history that is not a list.
  Json odd = test::flat_fan_event(10, 4, 8);
  odd["series"][0]["covariates"] = Json::array({Json{{"role", 7}, {"history", "none"}, {"future", {1e-40, nullptr, "x"}}}});
  const auto odd_snap = ui::parse_forecast_event(odd);
  REQUIRE(odd_snap);
  REQUIRE(odd_snap->series[0].covariates.size() == 1);
  CHECK(!odd_snap->series[0].covariates[0].known_future);  // past-only: its future is not read
  CHECK(odd_snap->series[0].covariates[0].history.empty());
  CHECK(odd_snap->series[0].covariates[0].future.empty());
  // A small cell (the "all series" grid) has no room for strips: the target alone.
  plot::drawn_frames().clear();
  ui::draw_forecast(c, {0, 0, 300, 160}, *snap, 0, "val/0");
  REQUIRE(plot::drawn_frames().size() == 1);
  CHECK(plot::drawn_frames()[0].area.h() > 0);
  // Without covariates the target takes the whole area, as before.
  plot::drawn_frames().clear();
  const auto plain = ui::parse_forecast_event(test::flat_fan_event(10, 4, 8));
  ui::draw_forecast(c, {0, 0, 600, 600}, *plain, 0, "val/0");
  CHECK(plot::drawn_frames().size() == 1);
}

TEST_CASE("orrery plot's report writes the views it has data for") {
  auto root = test::fresh_dir("report");
  for (int w : {64, 128})
    for (double x : {-10.0, -9.0, -8.0})
      test::write_run(root / ("sp-w" + std::to_string(w) + "-lr" + std::to_string(int(x))),
                      test::run_config("sp", w, std::exp2(x)), 100, 25, [&](int s) { return 0.3 + 0.01 * (x + 9) * (x + 9); });
  test::write_text(root / "sp-w64-lr-9" / "forecasts.jsonl", test::flat_fan_event(100, 16, 32).dump() + "\n");
  ui::RunWatcher w(root.string());
  w.poll();
  auto files = ui::write_svg_report(*w.snapshot(), (root / "plots").string());
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(std::filesystem::path(f).filename().string());
  CHECK(names == std::vector<std::string>{"loss.svg", "forecasts.svg", "lr_transfer.svg", "optimizer.svg"});
  const std::string fan = slurp(root / "plots" / "forecasts.svg");
  CHECK(count(fan, "<polygon") == 4);  // 10-90, 20-80, 30-70, 40-60
  CHECK(slurp(root / "plots" / "lr_transfer.svg").find("width 128") != std::string::npos);
  CHECK_THROWS_WITH(ui::write_svg_report(*w.snapshot(), "/proc/no/such/dir"), Catch::Contains("/proc/no/such/dir"));
  orrery::remove_tree(root);
}

TEST_CASE("eval.json makes an evaluation: in a run's folder or a folder of its own, never half-written") {
  auto root = test::fresh_dir("evalfile");
  const Json eval = test::eval_json({"quickstart", "theta"}, {"co2", "nile"}, [](size_t k, size_t d) { return 0.5 + k + d; });
  // A copy broken off half-way: nothing readable yet, so no run.
  const std::string text = eval.dump();
  test::write_text(root / "eval" / "eval.json", text.substr(0, text.size() / 2));
  ui::RunWatcher w(root.string());
  w.poll();
  CHECK(w.snapshot()->runs.empty());
  test::write_text(root / "eval" / "eval.json", text);
  CHECK(w.poll());
  REQUIRE(w.snapshot()->runs.size() == 1);
  auto run = w.snapshot()->runs[0];
  CHECK(run->name == "eval");
  REQUIRE(run->eval);
  CHECK(run->status(1e12) == ui::RunStatus::done);  // eval.json is written whole at the end
  CHECK(run->eval->configurations.size() == 2);
  REQUIRE(run->eval->results.size() == 4);
  CHECK(run->eval->results[1].model == "theta");
  CHECK(run->eval->results[1].scores.crps_ratio == 1.5);
  CHECK(run->eval->summary[0].crps == Approx(std::sqrt(0.5 * 1.5)));
  // Beside a training run's files; nulls (NaN in the file) stay NaN; removing it drops it.
  test::write_run(root / "r", test::run_config("sp", 64, 1e-3), 100, 10, [](int s) { return 1.0 / s; });
  Json with_null = eval;
  with_null["rows"][0]["mase_ratio"] = nullptr;
  with_null["rows"][1]["model"] = 3;  // the wrong type: that row alone is skipped
  test::write_text(root / "r" / "eval.json", with_null.dump());
  w.poll();
  REQUIRE(w.snapshot()->runs.size() == 2);
  run = w.snapshot()->runs[1];
  REQUIRE(run->eval);
  CHECK(run->eval->results.size() == 3);
  CHECK(std::isnan(run->eval->results[0].scores.mase_ratio));
  CHECK(run->status(1e12) == ui::RunStatus::done);  // by its summary
  std::filesystem::remove(root / "r" / "eval.json");
  CHECK(w.poll());
  CHECK_FALSE(w.snapshot()->runs[1]->eval);
  // A root that is itself an evaluation folder, as `orrery plot runs/eval` watches it.
  ui::RunWatcher single((root / "eval").string());
  single.poll();
  REQUIRE(single.snapshot()->runs.size() == 1);
  CHECK(single.snapshot()->runs[0]->eval);
  orrery::remove_tree(root);
}

TEST_CASE("the evaluation view: a row per configuration, a dot per model, the rule at 1, a legend of geometric means") {
  auto root = test::fresh_dir("evalview");
  const std::vector<std::string> datasets = {"air_passengers", "co2", "nottem", "uk_gas"};
  // Two runs that both evaluated a model called "quickstart": each gets its run's name.
  test::write_text(root / "eval" / "eval.json",
                   test::eval_json({"quickstart", "naive", "seasonal_naive", "theta", "ets"}, datasets,
                                   [](size_t k, size_t d) { return k == 2 ? 1.0 : 0.4 + 0.3 * k + 0.05 * d; }).dump());
  test::write_text(root / "eval-1" / "eval.json",
                   test::eval_json({"quickstart", "big"}, datasets, [](size_t k, size_t d) { return 0.2 + 0.1 * k + 0.01 * d; }).dump());
  ui::RunWatcher w(root.string());
  w.poll();
  const auto table = ui::merge_evaluations(w.snapshot()->runs);
  REQUIRE(table.models.size() == 7);
  REQUIRE(table.rows.size() == 4);
  CHECK(table.rows[1].label == "co2/M/short");
  // Orrery models first; a shared name is prefixed, keeps its colour and changes its marker.
  CHECK(table.models[0].label == "eval: quickstart");
  CHECK(table.models[1].label == "eval-1: quickstart");
  CHECK(table.models[2].label == "big");
  CHECK(table.models[3].label == "naive");
  CHECK(table.models[0].color.r == table.models[1].color.r);
  CHECK(table.models[0].marker != table.models[1].marker);
  CHECK_FALSE(table.models[0].baseline);
  CHECK(table.models[4].baseline);
  CHECK(table.models[3].color.r != table.models[2].color.r);

  plot::SvgCanvas c(1200, 700, plot::Color{});
  plot::drawn_frames().clear();
  const auto frames = ui::draw_eval_view(c, {0, 0, 1200, 700}, table, ui::EvalViewOptions{});
  REQUIRE(frames.size() == 1);
  const std::string svg = c.str();
  for (const auto& d : datasets) CHECK(svg.find(">" + d + "/M/short</text>") != std::string::npos);
  CHECK(svg.find(">geometric mean</text>") != std::string::npos);
  for (const auto& m : table.models) {
    INFO(m.label);
    CHECK(svg.find(">" + m.label + "</text>") != std::string::npos);
    char mean[32];
    std::snprintf(mean, sizeof mean, ">%.3f</text>", m.summary.crps);
    CHECK(svg.find(mean) != std::string::npos);
  }
  // The reference: a dashed rule from the top to the bottom of the data area at x = 1.
  const plot::PlotFrame& f = frames[0];
  CHECK(f.x.log);
  char rule[64];
  std::snprintf(rule, sizeof rule, "points=\"%.1f,%.1f %.1f,%.1f ", f.to_pixel(1, 0).x, f.area.y0, f.to_pixel(1, 0).x, f.area.y1);
  bool dashed_rule = false;  // the grid line of the tick at 1 lies there too, solid
  for (size_t at = svg.find(rule); at != std::string::npos; at = svg.find(rule, at + 1)) {
    const size_t start = svg.rfind('\n', at) + 1;
    dashed_rule |= svg.substr(start, at - start).find("stroke-dasharray=\"6 4\"") != std::string::npos;
  }
  CHECK(dashed_rule);
  // A dot where big's CRPS ratio on co2 says, and the hover finds it there.
  CHECK(table.rows[1].cells[2].crps_ratio == Approx(0.31));
  const plot::Vec2 dot = f.to_pixel(table.rows[1].cells[2].crps_ratio, ui::eval_dot_y(table, 1, 2));
  const auto hit = ui::eval_hit(table, f, dot, ui::EvalMetric::crps);
  REQUIRE(hit);
  CHECK(hit->row == 1);
  CHECK(hit->model == 2);
  char circle[64];
  std::snprintf(circle, sizeof circle, "cx=\"%.1f\" cy=\"%.1f\"", dot.x, dot.y);
  CHECK(svg.find(circle) != std::string::npos);
  // The geometric-mean row follows the last configuration, set apart.
  CHECK(ui::eval_dot_y(table, 4, 0) < ui::eval_dot_y(table, 3, 6) - 0.8);

  ui::EvalViewOptions mase;
  mase.metric = ui::EvalMetric::mase;
  plot::SvgCanvas m(1200, 700, plot::Color{});
  ui::draw_eval_view(m, {0, 0, 1200, 700}, table, mase);
  CHECK(m.str().find("MASE ratio to seasonal naive") != std::string::npos);

  // orrery plot writes it as eval.svg; with no evaluation the view says how to make one.
  const auto files = ui::write_svg_report(*w.snapshot(), (root / "plots").string());
  REQUIRE(files.size() == 1);
  CHECK(std::filesystem::path(files[0]).filename() == "eval.svg");
  plot::SvgCanvas none(600, 300, plot::Color{});
  ui::draw_eval_view(none, {0, 0, 600, 300}, ui::EvalTable{}, ui::EvalViewOptions{});
  CHECK(none.str().find("orrery eval") != std::string::npos);
  orrery::remove_tree(root);
}

namespace {

// A study.json as orrery.search writes it: x drives the objective, y and c do not.
Json study_json(int n) {
  Json space = Json::array({{{"name", "x"}, {"kind", "real"}, {"low", 0.0}, {"high", 1.0}, {"log", false}},
                            {{"name", "y"}, {"kind", "real"}, {"low", 1e-3}, {"high", 1.0}, {"log", true}},
                            {{"name", "c"}, {"kind", "categorical"}, {"choices", {"a", "b"}}},
                            {{"name", "mix"}, {"kind", "simplex"}, {"parts", {"p", "q"}}, {"caps", {1.0, 1.0}}}});
  Json trials = Json::array();
  for (int i = 0; i < n; ++i) {
    const double x = std::fmod(i * 0.618034, 1.0), y = std::exp(-6.9 * std::fmod(i * 0.41421, 1.0));
    const std::string state = i == n - 1 ? "running" : i == n - 2 ? "pruned" : i == n - 3 ? "failed" : "complete";
    Json t = {{"number", i}, {"state", state}, {"lost", false},
              {"params", {{"x", x}, {"y", y}, {"c", i % 2 ? "b" : "a"}, {"mix", {{"p", 0.25}, {"q", 0.75}}}}},
              {"intermediate", Json::array()}};
    t["value"] = state == "complete" ? Json(10 * x) : Json(nullptr);
    if (state == "pruned" || state == "running") t["intermediate"] = {{1, 4.5}, {2, 4.0}};
    trials.push_back(t);
  }
  return {{"name", "toy"}, {"direction", "minimize"}, {"space", space}, {"trials", trials}, {"best", nullptr}};
}

}  // namespace

TEST_CASE("a study.json becomes a study: dimensions (a simplex's parts), states, the best so far, importance") {
  const ui::SearchStudy s = ui::parse_study(study_json(24), "studies/toy");
  REQUIRE(s.dims.size() == 5);
  CHECK(s.dims[1].log);
  CHECK(s.dims[2].categorical);
  CHECK(s.dims[3].name == "mix.p");
  REQUIRE(s.trials.size() == 24);
  CHECK(s.trials[1].values[2] == 1.0);  // "b" is choice 1
  CHECK(s.trials[0].values[3] == 0.25);
  CHECK(s.trials[5].texts[0] == "0.09017");  // 4 significant digits in the table
  // Pruned and running trials are drawn at their last report, failed ones not at all.
  CHECK(ui::study_trial_y(s.trials[22]) == 4.0);
  CHECK(ui::study_trial_y(s.trials[23]) == 4.0);
  CHECK(std::isnan(ui::study_trial_y(s.trials[21])));
  const auto best = ui::best_so_far(s);
  for (size_t i = 1; i < best.size(); ++i) CHECK(best[i] <= best[i - 1]);
  CHECK(best[0] == 0.0);  // trial 0 has x = 0
  // The objective is 10x: x explains all of its variance, y and the choice little.
  const auto share = ui::main_effect_importance(s);
  CHECK(share[0] > 0.9);
  CHECK(share[1] < 0.35);
  CHECK(share[2] < 0.1);
  CHECK(share[3] == 0.0);  // never varies
  CHECK(std::isnan(ui::main_effect_importance(ui::parse_study(study_json(5), "few"))[0]));  // 2 complete
  CHECK_THROWS(ui::parse_study(Json{{"trials", 3}}, "bad"));
}

TEST_CASE("the watcher finds studies and scaling studies; the report draws them") {
  auto root = test::fresh_dir("studies");
  test::write_text(root / "proxy" / "arch" / "study.json", study_json(12).dump());
  test::write_text(root / "proxy" / "mix" / "study.json", "{\"trials\": [");  // half-written: skipped
  Json points = Json::array(), boot = Json::array();
  const double E = 0.2, A = 3, alpha = 0.3;
  int k = 0;
  for (double n : {1e4, 3e4, 1e5, 3e5}) {
    for (int b : {25, 50, 100})
      points.push_back({{"params", n}, {"tokens", b * 4096.0}, {"loss", E + A * std::pow(n, -alpha) + 0.01 / b},
                        {"budget", b}, {"run", "s" + std::to_string(k)}});
    ++k;
  }
  for (int i = 0; i < 20; ++i) boot.push_back({{"E", E}, {"A", A}, {"alpha", alpha + 0.001 * (i - 10)}});
  const Json law = {{"law", "size"}, {"E", E}, {"A", A}, {"alpha", alpha}, {"intervals", {{"alpha", {0.29, 0.31}}}},
                    {"bootstrap", boot}, {"holdout", {{"error", 0.01}, {"law", {{"E", E}, {"A", A}, {"alpha", 0.31}}}}}};
  test::write_text(root / "scaling" / "scaling.json",
                   Json{{"points", points}, {"size", law}, {"joint", law}, {"points_per_param", 20}}.dump());
  ui::RunWatcher w(root.string());
  w.poll();
  const auto ws = w.snapshot();
  REQUIRE(ws->studies.size() == 1);
  CHECK(ws->studies[0]->name == "proxy/arch");
  REQUIRE(ws->scalings.size() == 1);
  const ui::ScalingStudy& s = *ws->scalings[0];
  CHECK(s.sizes == std::vector<std::string>{"s0", "s1", "s2", "s3"});
  CHECK(s.size.bootstrap.size() == 20);
  CHECK(s.size.predict(1e5, kNaN) == Approx(E + A * std::pow(1e5, -alpha)));
  // The mix study finishes writing: found on the next poll.
  test::write_text(root / "proxy" / "mix" / "study.json", study_json(6).dump());
  CHECK(w.poll());
  CHECK(w.snapshot()->studies.size() == 2);

  auto files = ui::write_svg_report(*w.snapshot(), (root / "plots").string());
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(std::filesystem::path(f).filename().string());
  CHECK(names == std::vector<std::string>{"search-proxy-arch.svg", "search-proxy-mix.svg", "scaling.svg"});
  const std::string svg = slurp(root / "plots" / "search-proxy-arch.svg");
  CHECK(svg.find("toy: 12 trials (9 complete, 1 pruned, 1 failed, 1 running)") != std::string::npos);
  CHECK(slurp(root / "plots" / "scaling.svg").find("fit without s3 (ring): 1.00% off") != std::string::npos);
  orrery::remove_tree(root);
}

TEST_CASE("a scaling.json whose points have fields of the wrong type is refused, naming the point") {
  const Json point = {{"params", 1e4}, {"tokens", 1e5}, {"loss", 0.3}, {"budget", 25}, {"run", "s0"}};
  const Json law = {{"law", "size"}, {"E", 0.2}, {"A", 3}, {"alpha", 0.3}};
  auto study = [&](const Json& p) { return Json{{"points", {point, p}}, {"size", law}}; };
  CHECK(ui::parse_scaling(study(point), "ok").points.size() == 2);
  auto with = [&](const char* key, const Json& v) {
    Json p = point;
    p[key] = v;
    return study(p);
  };
  CHECK_THROWS_WITH(ui::parse_scaling(with("params", "1e4"), "x"), "scaling.json: point 2: 'params' is not a number");
  CHECK_THROWS_WITH(ui::parse_scaling(with("loss", nullptr), "x"), "scaling.json: point 2: 'loss' is not a number");
  CHECK_THROWS_WITH(ui::parse_scaling(with("budget", 2.5), "x"), "scaling.json: point 2: 'budget' is not a whole number");
  CHECK_THROWS_WITH(ui::parse_scaling(with("run", 3), "x"), "scaling.json: point 2: 'run' is not a text");
  CHECK_THROWS_WITH(ui::parse_scaling(study(Json::array()), "x"), "scaling.json: point 2: not an object");
  Json bad_law = study(point);
  bad_law["size"]["law"] = 5;  // a law's name of the wrong type: the file is not the layout
  CHECK_THROWS(ui::parse_scaling(bad_law, "x"));
  // Beside a good study, the watcher leaves such a file out and shows the good one.
  auto root = test::fresh_dir("bad-scaling");
  test::write_text(root / "good" / "scaling.json", study(point).dump());
  test::write_text(root / "bad" / "scaling.json", with("params", "1e4").dump());
  ui::RunWatcher w(root.string());
  w.poll();
  REQUIRE(w.snapshot()->scalings.size() == 1);
  CHECK(w.snapshot()->scalings[0]->name == "good");
  orrery::remove_tree(root);
}
