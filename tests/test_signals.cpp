// Stopping a script: Ctrl-C (SIGINT) and SIGTERM (what Slurm and `kill` send) end a run with its
// summary written and the exit status 128 + signal; Lua code cannot swallow the stop; a long
// forecast notices it between passes.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "support.h"

namespace {

const char* kTiny = "orrery.model{arch = {'toto2', d_model = 16, num_layers = 1, num_heads = 1}}";

std::string script(const std::string& dir, const std::string& name, const std::string& body) {
  std::ofstream(dir + "/" + name) << body;
  return dir + "/" + name;
}

}  // namespace

TEST_CASE("SIGTERM and Ctrl-C stop training with a summary and exit 143 and 130") {
  auto [sig, code] = GENERATE(std::pair{SIGTERM, 143}, std::pair{SIGINT, 130});
  INFO("signal " << sig);
  auto dir = test::temp_dir("signal-train-" + std::to_string(sig));
  const auto path = script(dir, "long.lua", std::string("local m = ") + kTiny + "\n" +
                           "orrery.train{model = m, steps = 1000000, batch_size = 2, context_length = 64,\n"
                           "             log_every = 1, name = 'long', runs_dir = args.runs}\n");
  test::Background run({"run", path, "runs=" + dir + "/runs"}, dir + "/out.txt");
  REQUIRE(run.wait_for("step      2/", 60));
  run.signal(sig);
  CHECK(run.wait_exit(30) == code);
  INFO(run.output());
  CHECK(run.output().find("interrupted (the run and its summary are saved in " + dir + "/runs/long)") != std::string::npos);
  const auto summary = orrery::Json::parse(test::read_text(dir + "/runs/long/summary.json"));
  CHECK(summary["interrupted"] == true);
  CHECK(summary["steps"].get<int64_t>() >= 2);
}

TEST_CASE("a loop that wraps its body in pcall still stops on Ctrl-C") {
  auto dir = test::temp_dir("signal-pcall");
  const auto path = script(dir, "loop.lua",
                           "print('looping'); io.stdout:flush()\n"
                           "local n = 0\n"
                           "while true do\n"
                           "  local ok = pcall(function() for i = 1, 1000 do n = n + i end end)\n"
                           "end\n");
  test::Background run({"run", path}, dir + "/out.txt");
  REQUIRE(run.wait_for("looping", 30));
  run.signal(SIGINT);
  CHECK(run.wait_exit(10) == 130);
  CHECK(run.output().find("interrupted") != std::string::npos);
}

TEST_CASE("Ctrl-C stops a long forecast between passes", "[slow]") {
  auto dir = test::temp_dir("signal-forecast");
  // 2,000 series of 4,096 steps: four passes of a 128-wide model (a pass holds 2^16 tokens, 504
  // of these series). The script first forecasts 500 of them, about one pass, so the test knows
  // what one pass costs on this machine under its present load: a stop between passes comes
  // within about that (twice it, for a load that changes meanwhile), however slow the machine;
  // one at the end (three passes more) would not.
  const auto path = script(dir, "fc.lua",
                           "local m = orrery.model{arch = {'toto2', d_model = 128, num_layers = 4, num_heads = 4}}\n"
                           "local s = {}\n"
                           "for i = 1, 2000 do local v = {}; for t = 1, 4096 do v[t] = math.sin(t / 7 + i) end; s[i] = v end\n"
                           "print('timing one pass'); io.stdout:flush()\n"
                           "m:forecast{series = {table.unpack(s, 1, 500)}, horizon = 64}\n"
                           "print('forecasting'); io.stdout:flush()\n"
                           "local f = m:forecast{series = s, horizon = 64}\n"
                           "print('finished')\n");
  test::Background run({"run", path}, dir + "/out.txt");
  REQUIRE(run.wait_for("timing one pass", 120));
  const auto pass_start = std::chrono::steady_clock::now();
  REQUIRE(run.wait_for("forecasting", 120));
  const double pass = std::chrono::duration<double>(std::chrono::steady_clock::now() - pass_start).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto sent = std::chrono::steady_clock::now();
  run.signal(SIGINT);
  const int status = run.wait_exit(120);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  INFO(run.output() << "\none pass took " << pass << " s; stopped " << seconds << " s after Ctrl-C");
  CHECK(status == 130);
  CHECK(run.output().find("finished") == std::string::npos);
  CHECK(seconds < 2 * pass + 2);
}

TEST_CASE("a second signal a second or more after the first quits at once, where the first waits") {
  auto dir = test::temp_dir("signal-twice");
  // os.execute blocks in C for 30 s: the first SIGTERM can only ask for a stop at the next Lua
  // instruction (as a huge file being read, or a blocking open, could only ask before).
  const auto path = script(dir, "wait.lua", "print('waiting'); io.stdout:flush()\nos.execute('sleep 30')\nprint('done')\n");
  test::Background run({"run", path}, dir + "/out.txt");
  REQUIRE(run.wait_for("waiting", 30));
  run.signal(SIGTERM);
  run.signal(SIGTERM);  // the same stop delivered twice (a launcher passing it on): not a second
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(run.running());
  const auto sent = std::chrono::steady_clock::now();
  run.signal(SIGTERM);
  CHECK(run.wait_exit(10) == 143);
  CHECK(std::chrono::steady_clock::now() - sent < std::chrono::seconds(10));
  CHECK(run.output().find("orrery: stopped at once (a second signal)") != std::string::npos);
  CHECK(run.output().find("done") == std::string::npos);
}

// Host loops that run for minutes without calling Lua: each checks the interrupt and stops with
// 130 or 143 and its message, on the first signal.
TEST_CASE("Ctrl-C and SIGTERM stop a long host computation: a scaling fit's bootstrap") {
  auto [sig, code] = GENERATE(std::pair{SIGTERM, 143}, std::pair{SIGINT, 130});
  INFO("signal " << sig);
  auto dir = test::temp_dir("signal-scaling-" + std::to_string(sig));
  const auto path = script(dir, "fit.lua",
                           "local pts = {}\n"
                           "for _, n in ipairs({1e5, 3e5, 1e6, 3e6, 1e7}) do pts[#pts + 1] = {params = n, loss = 0.3 + 9 * n^-0.3} end\n"
                           "print('fitting'); io.stdout:flush()\n"
                           "orrery.fit_scaling{points = pts, bootstrap = 100000000}\n");
  test::Background run({"run", path}, dir + "/out.txt");
  REQUIRE(run.wait_for("fitting", 30));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // inside the bootstrap
  run.signal(sig);
  // The 10^8 resamples take a day; stopping at all within a minute, however busy the machine, is
  // stopping between resamples.
  CHECK(run.wait_exit(60) == code);
  INFO(run.output());
  CHECK(run.output().find("interrupted") != std::string::npos);
}

TEST_CASE("Ctrl-C stops an evaluation inside a data set, between a baseline search's candidate fits") {
  auto dir = test::temp_dir("signal-eval");
  // 160 hourly series of 3,000 steps: AutoARIMA searches each window for a second or more (a
  // minute or more under the sanitizers), so the first data set alone takes many minutes; the
  // check between data sets would come far too late, and one between windows too late under
  // ASan. The search checks between its candidate fits.
  {
    std::ofstream csv(dir + "/long.csv");
    for (int s = 0; s < 160; ++s) csv << (s ? "," : "") << "s" << s;
    csv << "\n";
    for (int t = 0; t < 3000; ++t) {
      for (int s = 0; s < 160; ++s) csv << (s ? "," : "") << 100 + 10 * std::sin(t * 0.2618 + s) + (t * (s + 3)) % 7;
      csv << "\n";
    }
  }
  const auto path = script(dir, "eval.lua",
                           "print('evaluating'); io.stdout:flush()\n"
                           "orrery.eval{data = '" + dir + "/long.csv', frequency = 'H', baselines = {'arima'}, out = '" +
                               dir + "/e'}\n");
  test::Background run({"run", path}, dir + "/out.txt");
  REQUIRE(run.wait_for("evaluating", 30));
  std::this_thread::sleep_for(std::chrono::seconds(2));  // inside the baselines' fits
  run.signal(SIGINT);
  CHECK(run.wait_exit(60) == 130);
  INFO(run.output());
  CHECK(run.output().find("interrupted") != std::string::npos);
}
