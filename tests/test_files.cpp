// Reading users' files and writing ours: the CSV reader's errors, atomic writes and their stale
// temporaries, and the one conversion from series to forecast tensors.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "orrery/atomic_file.h"
#include "orrery/host/csv.h"
#include "orrery/error.h"
#include "orrery/host/file_tree.h"
#include "orrery/host/series.h"
#include "support.h"

namespace fs = std::filesystem;

namespace {
std::string write(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
}  // namespace

TEST_CASE("a UTF-8 byte-order mark does not become part of the first column's name") {
  auto dir = test::temp_dir("csv-bom");
  auto t = orrery::read_csv(write(dir, "bom.csv", "\xEF\xBB\xBFtime,value\n1,10\n2,11\n"));
  CHECK(t.names == std::vector<std::string>{"time", "value"});
}

TEST_CASE("CSV headers need a name for every column, each its own") {
  auto dir = test::temp_dir("csv-header");
  CHECK_THROWS_WITH(orrery::read_csv(write(dir, "dup.csv", "time,a,a\n1,2,3\n")),
                    Catch::Contains("dup.csv:1: columns 2 and 3 are both named \"a\""));
  CHECK_THROWS_WITH(orrery::read_csv(write(dir, "trail.csv", "time,a,\n1,2,\n")),
                    Catch::Contains("trail.csv:1: column 3 of the header has no name (a trailing comma?)"));
  CHECK_THROWS_WITH(orrery::read_csv(write(dir, "gap.csv", "a,,b\n1,2,3\n")),
                    Catch::Contains("column 2 of the header has no name"));
}

TEST_CASE("bad CSV input is named, quoted briefly and never printed raw") {
  auto dir = test::temp_dir("csv-bad");
  const std::string huge(10'000'000, 'x');
  try {
    orrery::read_csv(write(dir, "huge.csv", "a\n1\n" + huge + "\n"));
    FAIL("a 10 MB cell was accepted");
  } catch (const orrery::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("huge.csv:3: column \"a\": non-numeric value \"xxxx") != std::string::npos);
    CHECK(msg.find("(10000000 bytes)") != std::string::npos);
    CHECK(msg.size() < 300);
  }
  try {
    orrery::read_csv(write(dir, "ctrl.csv", std::string("a\n\x01\x02\xff\x1b[31m\n")));
    FAIL("control bytes were accepted");
  } catch (const orrery::Error& e) {
    const std::string msg = e.what();
    CHECK(msg.find("\\x01\\x02\\xFF\\x1B[31m") != std::string::npos);
    for (char c : msg) CHECK(static_cast<unsigned char>(c) >= 0x20);
  }
  CHECK_THROWS_WITH(orrery::read_csv(write(dir, "nul.csv", std::string("a\n1\0\n", 5))),
                    Catch::Contains("nul.csv:2: holds binary data"));
  CHECK_THROWS_WITH(orrery::read_csv(dir), Catch::Contains(dir + " is a folder, not a CSV file"));
  CHECK_THROWS_WITH(orrery::read_csv(write(dir, "big.csv", "a\n1e999\n")),
                    Catch::Contains("big.csv:2: column \"a\": the value \"1e999\" is outside a double's range"));
  CHECK_THROWS_WITH(orrery::read_csv(dir + "/none.csv"), Catch::Contains("cannot open " + dir + "/none.csv"));
  // Values beyond float32's range are fine: they are doubles.
  CHECK(orrery::read_csv(write(dir, "e39.csv", "a\n1e39\n")).columns[0][0] == 1e39);
}

TEST_CASE("series become right-aligned float64 tensors; a series with nothing observed is refused") {
  const double nan = std::nan("");
  auto b = orrery::series_batch({{1, 2, 3}, {nan, 1e39}}, {"a", "b"});
  REQUIRE(b.values.sizes() == at::IntArrayRef({2, 1, 3}));
  CHECK(b.values.scalar_type() == at::kDouble);
  CHECK(b.values[1][0][2].item<double>() == 1e39);
  CHECK(at::equal(b.observed[1][0], at::tensor({0, 0, 1}).to(at::kBool)));
  auto capped = orrery::series_batch({{1, 2, 3, 4}}, {"a"}, 2);
  CHECK(at::equal(capped.values[0][0], at::tensor({3.0, 4.0}, at::kDouble)));
  CHECK_THROWS_WITH(orrery::series_batch({{1, 2}, {}}, {"a", "column 'b'"}), Catch::Contains("column 'b' is empty"));
  CHECK_THROWS_WITH(orrery::series_batch({{nan, nan}}, {"x"}), Catch::Contains("x has no observed value"));
  CHECK_THROWS_WITH(orrery::series_batch({{1, nan, nan}}, {"x"}, 2),
                    Catch::Contains("x has no observed value in its last 2 steps"));
}

TEST_CASE("an atomic write into a folder's name says so, and temporaries of dead writers are removed") {
  auto dir = test::temp_dir("atomic");
  auto put = [](const std::string& path) {
    orrery::write_file_atomically(path, [](std::ostream& o) { o << "x"; });
  };
  CHECK_THROWS_WITH(put(dir), Catch::Contains("cannot write " + dir + ": it is a folder"));
  // A writer killed mid-save leaves "<file>.tmp.<host>.<pid>"; the next write beside it removes it.
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  waitpid(dead, nullptr, 0);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::string h = host;
  for (char& c : h)
    if (c == '/' || c == '.') c = '_';
  const std::string stale = dir + "/model.safetensors.tmp." + h + "." + std::to_string(dead);
  const std::string live = dir + "/model.safetensors.tmp." + h + "." + std::to_string(getppid());
  const std::string other_host = dir + "/model.safetensors.tmp.elsewhere." + std::to_string(dead);
  std::ofstream(other_host) << "a writer on another machine of a shared disk";
  std::ofstream(stale) << "half a file";
  std::ofstream(live) << "another process is writing";
  put(dir + "/model.safetensors");
  CHECK(!fs::exists(stale));
  CHECK(fs::exists(live));
  CHECK(fs::exists(other_host));
  CHECK(fs::file_size(dir + "/model.safetensors") == 1);
}

TEST_CASE("remove_tree removes a folder tree, links but never what they point to") {
  const fs::path dir(test::temp_dir("remove-tree"));
  fs::create_directories(dir / "tree/a/b");
  write((dir / "tree/a/b").string(), "deep.txt", "x");
  write((dir / "tree").string(), "top.txt", "y");
  fs::create_directories(dir / "kept");
  write((dir / "kept").string(), "precious.txt", "z");
  fs::create_directory_symlink(dir / "kept", dir / "tree/a/link");  // removed as a link
  std::error_code ec;
  CHECK(orrery::remove_tree(dir / "tree", ec) == 6);  // tree, a, b, deep.txt, top.txt, link
  CHECK(!ec);
  CHECK(!fs::exists(dir / "tree"));
  CHECK(fs::exists(dir / "kept/precious.txt"));
  CHECK(orrery::remove_tree(dir / "tree", ec) == 0);  // gone already: no error
  CHECK(!ec);
  CHECK(orrery::remove_tree(dir / "kept/precious.txt") == 1);  // a file alone
  orrery::remove_tree(dir);
}

namespace {
// Every line of the C++ sources under the given top-level folders, as "path:line: text".
std::vector<std::pair<std::string, std::string>> source_lines(std::initializer_list<const char*> tops) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const char* top : tops) {
    std::vector<fs::path> folders{fs::path(ORRERY_SOURCE_DIR) / top};
    while (!folders.empty()) {
      const fs::path folder = folders.back();
      folders.pop_back();
      if (!fs::exists(folder)) continue;
      for (const auto& e : fs::directory_iterator(folder)) {
        if (e.is_directory()) {
          folders.push_back(e.path());
          continue;
        }
        const std::string ext = e.path().extension().string();
        if (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh") continue;
        std::ifstream in(e.path());
        int n = 0;
        for (std::string line; std::getline(in, line);)
          out.emplace_back(e.path().string() + ":" + std::to_string(++n), line);
      }
    }
  }
  return out;
}

// Code, not a comment: `name` occurs before any "//".
bool in_code(const std::string& line, const std::string& name) {
  const size_t at = line.find(name);
  return at != std::string::npos && at < line.find("//");
}
}  // namespace

// std::filesystem::remove_all and recursive_directory_iterator crash in a program built with a
// newer GCC than the pip LibTorch it loads (orrery/host/file_tree.h says why); nothing may call them.
TEST_CASE("no source calls the std::filesystem functions that the LibTorch wheels break") {
  const std::string names[] = {std::string("remove") + "_all", std::string("recursive_") + "directory_iterator"};
  std::string found;
  for (const auto& [where, line] : source_lines({"core", "plugins", "ui", "app", "tests", "kernels"}))
    for (const auto& n : names)
      if (in_code(line, n)) found += where + ": " + n + "\n";
  INFO("use orrery::remove_tree, or directory_iterator folder by folder, instead of:\n" << found);
  CHECK(found.empty());
}

// The plugin SDK is core/include/orrery/ without host/: plugins and the SDK's own headers
// include nothing of the host's, so a change there never asks for an ABI bump.
TEST_CASE("plugins and the plugin SDK include no host header") {
  std::string found;
  for (const auto& [where, line] : source_lines({"plugins", "core/include/orrery"}))
    if (where.find("/orrery/host/") == std::string::npos && in_code(line, "#include \"orrery/host/"))
      found += where + ": " + line + "\n";
  INFO("a plugin may include only core/include/orrery/*.h:\n" << found);
  CHECK(found.empty());
}
