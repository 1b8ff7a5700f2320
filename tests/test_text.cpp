// The text data plugin: the split pattern against nanochat's (run by Python's regex module),
// BPE training against a direct count, round trips of any bytes, the saved tokenizer and its
// errors, best-fit packing, and the source's split and batches.
#include <catch2/catch.hpp>

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "bpe.h"
#include "orrery/error.h"
#include "orrery/utf8.h"
#include "orrery/host/data_mixture.h"
#include "orrery/host/registry.h"
#include "packing.h"
#include "pretokenize.h"
#include "support.h"

namespace fs = std::filesystem;
using orrery::DataContext;
using orrery::Json;
using orrery::Split;
using orrery::text::Bpe;
using test::read_text;
using test::temp_dir;

namespace {

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// The repository's own documentation: a corpus of English prose, code and tables.
std::vector<std::string> docs_corpus() {
  std::vector<std::string> out;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(std::string(ORRERY_SOURCE_DIR) + "/docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) out.push_back(read_text(f.string()));
  return out;
}

std::vector<std::string_view> views(const std::vector<std::string>& texts) {
  return {texts.begin(), texts.end()};
}

// BPE the slow way: every merge recounts every pair of every chunk (minbpe's train loop, on
// chunks), the most frequent pair merged, ties to the smallest pair.
std::vector<std::pair<int32_t, int32_t>> direct_merges(const std::vector<std::string_view>& texts, int merges) {
  std::map<std::string, int64_t> counts;
  for (const auto t : texts)
    for (const auto c : orrery::text::split_chunks(t)) ++counts[std::string(c)];
  std::vector<std::pair<std::vector<int32_t>, int64_t>> words;
  for (const auto& [c, n] : counts) {
    std::vector<int32_t> ids;
    for (const char ch : c) ids.push_back(static_cast<unsigned char>(ch));
    words.emplace_back(ids, n);
  }
  std::vector<std::pair<int32_t, int32_t>> out;
  for (int m = 0; m < merges; ++m) {
    std::map<std::pair<int32_t, int32_t>, int64_t> pairs;
    for (const auto& [ids, n] : words)
      for (size_t i = 0; i + 1 < ids.size(); ++i) pairs[{ids[i], ids[i + 1]}] += n;
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second) best = it;  // the map is ordered: the first of equals is the smallest
    out.push_back(best->first);
    const int32_t c = 256 + m;
    for (auto& [ids, n] : words) {
      std::vector<int32_t> merged;
      for (size_t i = 0; i < ids.size();) {
        if (i + 1 < ids.size() && std::pair{ids[i], ids[i + 1]} == best->first) merged.push_back(c), i += 2;
        else merged.push_back(ids[i++]);
      }
      ids = merged;
    }
  }
  return out;
}

std::string random_bytes(std::mt19937& rng, size_t n) {
  std::string s(n, '\0');
  for (auto& ch : s) ch = static_cast<char>(rng() & 0xFF);
  return s;
}

std::unique_ptr<orrery::DataSource> text_source(Json options, Split split = Split::train) {
  DataContext ctx;
  ctx.split = split;
  return orrery::make_data_source(orrery::Registry::global(), {"text", std::move(options)}, ctx);
}

}  // namespace

TEST_CASE("text: chunks are cut as nanochat's split pattern cuts them") {
  const Json fixture = Json::parse(read_text(std::string(ORRERY_SOURCE_DIR) + "/tests/data/text/split.json"));
  REQUIRE(fixture["cases"].size() > 400);
  for (const auto& c : fixture["cases"]) {
    const std::string text = c["text"];
    std::vector<std::string> got;
    for (const auto chunk : orrery::text::split_chunks(text)) got.emplace_back(chunk);
    INFO(text);
    CHECK(got == c["chunks"].get<std::vector<std::string>>());
  }
}

TEST_CASE("text: a run longer than a chunk is cut at code points into pieces of at most 256 bytes") {
  std::string run;
  for (int i = 0; i < 3000; ++i) run += "\xC3\xA9";  // é, two bytes each: one letter run of 6,000 bytes
  const std::string text = "x " + run + " " + std::string(1000, '=') + "\n";
  std::string joined;
  for (const auto chunk : orrery::text::split_chunks(text)) {
    REQUIRE(chunk.size() <= orrery::text::kMaxChunkBytes);
    REQUIRE(orrery::is_utf8(chunk));
    joined += chunk;
  }
  CHECK(joined == text);
}

TEST_CASE("text: chunks cover any bytes exactly, valid UTF-8 or not") {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const std::string s = random_bytes(rng, rng() % 64);
    std::string joined;
    for (const auto chunk : orrery::text::split_chunks(s)) {
      REQUIRE(!chunk.empty());
      joined += chunk;
    }
    REQUIRE(joined == s);
  }
}

TEST_CASE("text: a sample splits from its prompt on whole characters") {
  using orrery::split_continuation;
  const auto cut = [](std::string_view all, size_t prompt) {
    const auto c = split_continuation(all, prompt);
    return std::pair<size_t, size_t>{c.split, c.end};
  };
  // The prompt's last token holds the first byte of an e-acute: the whole character goes after.
  CHECK(cut("ab\xC3\xA9" "cd", 3) == std::pair<size_t, size_t>{2, 6});
  CHECK(cut("ab\xC3\xA9" "cd", 2) == std::pair<size_t, size_t>{2, 6});   // on a boundary: as it is
  CHECK(cut("x\xF0\x9F\x98\x80y", 3) == std::pair<size_t, size_t>{1, 6});  // inside a 4-byte emoji
  CHECK(cut("abc\xE2\x82", 3) == std::pair<size_t, size_t>{3, 3});    // an unfinished euro sign: left out
  CHECK(cut("abc\xE2\x82", 4) == std::pair<size_t, size_t>{3, 3});    // the prompt ends in it
  CHECK(cut("a\xFF\xFE" "bcdef", 1) == std::pair<size_t, size_t>{1, 8});  // invalid bytes inside are kept
  CHECK(cut("", 0) == std::pair<size_t, size_t>{0, 0});
  CHECK(cut("\xA9\xA9" "abc", 1) == std::pair<size_t, size_t>{1, 5});     // stray continuation bytes stay put
  CHECK(cut("a\xFF" "bc", 1) == std::pair<size_t, size_t>{1, 4});          // an invalid byte near the end: kept
  CHECK(cut("x\xC3" "y", 2) == std::pair<size_t, size_t>{2, 3});           // a lead byte with no continuation
  CHECK(cut("ab\xC3", 2) == std::pair<size_t, size_t>{2, 2});              // the last token begins a character
  CHECK(cut("\xE2\x82\xAC", 2) == std::pair<size_t, size_t>{0, 3});        // the prompt ends inside the euro sign
}

TEST_CASE("text: BPE merges the textbook example as by hand") {
  // "aaabdaaabac": aa (4 times) first; then ab and (aa)a tie at 2, and (97, 98) is the smaller
  // pair; then (aa)(ab) twice.
  const std::string text = "aaabdaaabac";
  const Bpe bpe = Bpe::train({text}, 256 + 3 + 1, {"<|bos|>"});
  CHECK(bpe.merges() == std::vector<std::pair<int32_t, int32_t>>{{97, 97}, {97, 98}, {256, 257}});
  CHECK(bpe.encode(text) == std::vector<int32_t>{258, 100, 258, 97, 99});
  CHECK(bpe.bytes_of(258) == "aaab");
  CHECK(bpe.special("<|bos|>") == 259);
  CHECK(bpe.decode(std::vector<int32_t>{259}) == "<|bos|>");
}

TEST_CASE("text: BPE training equals a direct count of the pairs at every merge") {
  const auto corpus = docs_corpus();
  const std::vector<std::string_view> some(corpus.begin(), corpus.begin() + 3);
  const int merges = 300;
  const Bpe bpe = Bpe::train(some, 256 + merges + 1, {"<|bos|>"});
  CHECK(bpe.merges() == direct_merges(some, merges));
}

TEST_CASE("text: BPE depends on the texts only, and any bytes round-trip") {
  const auto corpus = docs_corpus();
  auto texts = views(corpus);
  const Bpe a = Bpe::train(texts, 1024, {"<|bos|>", "<|end|>"});
  std::reverse(texts.begin(), texts.end());
  const Bpe b = Bpe::train(texts, 1024, {"<|bos|>", "<|end|>"});
  CHECK(a.merges() == b.merges());
  CHECK(a.vocab_size() == 1024);
  CHECK(a.special("<|end|>") == 1023);

  std::mt19937 rng(11);
  for (int trial = 0; trial < 100; ++trial) {
    const std::string s = random_bytes(rng, rng() % 200);  // mostly invalid UTF-8
    const auto ids = a.encode(s);
    REQUIRE(a.decode(ids) == s);
    for (const int32_t id : ids) REQUIRE(!a.is_special(id));
  }
  const std::string prose = corpus.front().substr(0, 2000) + "<|bos|> naïve 中文 😀";
  const auto ids = a.encode(prose);
  CHECK(a.decode(ids) == prose);
  CHECK(std::none_of(ids.begin(), ids.end(), [&](int32_t id) { return a.is_special(id); }));

  CHECK_THROWS_WITH(a.decode(std::vector<int32_t>{1024}), Catch::Contains("token id 1024 is not in this tokenizer"));
  CHECK_THROWS_WITH(a.special("<|eos|>"), Catch::Contains("no special token \"<|eos|>\" (it has: <|bos|>, <|end|>)"));
  CHECK_THROWS_WITH(Bpe::train(texts, 257, {"<|bos|>", "<|end|>"}), Catch::Contains("cannot hold the 256 bytes"));
  CHECK_THROWS_WITH(Bpe::train(texts, 300, {"<|bos|>", "<|bos|>"}), Catch::Contains("named twice"));
  CHECK_THROWS_WITH(Bpe::train({"abab"}, 300, {"<|bos|>"}), Catch::Contains("ran out of byte pairs after 2 merges"));
}

TEST_CASE("text: BPE training and encoding stop on an interrupt, mid-way") {
  const auto corpus = docs_corpus();
  const auto texts = views(corpus);
  orrery::Interrupt stop;
  int64_t asked_at = -1;
  // The stop is asked at the first progress report (256 merges of 1,000): training ends there.
  CHECK_THROWS_AS(Bpe::train(texts, 256 + 1000 + 1, {"<|bos|>"},
                             [&](int64_t done, int64_t) { asked_at = done, stop.request(SIGINT); }, &stop),
                  orrery::Interrupted);
  CHECK(asked_at == 256);
  stop.clear();
  const Bpe bpe = Bpe::train(texts, 256 + 300 + 1, {"<|bos|>"}, {}, &stop);  // unrequested: no effect
  CHECK(bpe.merges() == Bpe::train(texts, 256 + 300 + 1, {"<|bos|>"}).merges());
  stop.request(SIGINT);
  CHECK_THROWS_AS(bpe.encode_all(texts, &stop), orrery::Interrupted);
}

TEST_CASE("text: a trained vocabulary compresses held-out text better than bytes") {
  // Train on every other document page, measure on the rest.
  const auto corpus = docs_corpus();
  std::vector<std::string_view> train, held;
  for (size_t i = 0; i < corpus.size(); ++i) (i % 2 ? held : train).push_back(corpus[i]);
  const Bpe bpe = Bpe::train(train, 2048, {"<|bos|>"});
  size_t bytes = 0, tokens = 0;
  for (const auto t : held) bytes += t.size(), tokens += bpe.encode(t).size();
  const double per_token = double(bytes) / double(tokens);
  INFO("bytes per token on held-out pages: " << per_token);
  CHECK(per_token > 2.0);  // 2.63 here: the pages hold code and tables; bytes are 1.0
}

TEST_CASE("text: a saved tokenizer loads to the same encoding; a bad file is an error naming it") {
  const std::string dir = temp_dir("text-tokenizer");
  const auto corpus = docs_corpus();
  const Bpe bpe = Bpe::train(views(corpus), 600, {"<|bos|>"});
  bpe.save(dir + "/tok.json");
  const Bpe back = Bpe::load(dir + "/tok.json");
  CHECK(back.merges() == bpe.merges());
  CHECK(back.special_tokens() == bpe.special_tokens());
  CHECK(back.encode(corpus.back()) == bpe.encode(corpus.back()));

  const Json good = bpe.to_json();
  const auto bad = [&](const std::function<void(Json&)>& spoil, const std::string& message) {
    Json j = good;
    spoil(j);
    write(dir + "/bad.json", orrery::json_text(j));
    CHECK_THROWS_WITH(Bpe::load(dir + "/bad.json"), Catch::Contains("bad.json") && Catch::Contains(message));
  };
  bad([](Json& j) { j["format"] = "tiktoken"; }, "not an Orrery BPE tokenizer");
  bad([](Json& j) { j["version"] = 2; }, "tokenizer version \"2\", this build reads version 1");
  bad([](Json& j) { j["merges"][5] = {300, 97}; }, "merge 5 is \"[300,97]\": it must be two ids below 261");
  bad([](Json& j) { j["merges"][7] = j["merges"][3]; }, "merges " + orrery::json_text(good["merges"][3]) + " again");
  bad([](Json& j) { j["special_tokens"] = {"<|bos|>", "<|bos|>"}; }, "named twice");
  bad([](Json& j) {  // each merge doubles a token: 2, 4, ... 512 bytes
    j["merges"] = Json::array({{97, 97}});
    for (int m = 1; m < 9; ++m) j["merges"].push_back({255 + m, 255 + m});
    j["vocab_size"] = 256 + 9 + 1;
  }, "merge 8 makes a token of 512 bytes");
  bad([](Json& j) { j["vocab_size"] = 601; }, "vocab_size says \"601\" but the merges and special tokens make 600");
  write(dir + "/bad.json", "{\"format\": ");
  CHECK_THROWS_WITH(Bpe::load(dir + "/bad.json"), Catch::Contains("bad.json") && Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(Bpe::load(dir + "/none.json"), Catch::Contains("cannot read the tokenizer") &&
                                                       Catch::Contains("none.json"));
}

TEST_CASE("text: best-fit packing starts every row with BOS and holds document pieces in order") {
  // Document d holds the ids 1000 d + 1, 1000 d + 2, ...: a row's run after each BOS must be
  // consecutive ids of one document, starting where a piece starts.
  orrery::text::Documents docs;
  const int32_t bos = 0;
  std::mt19937 rng(3);
  for (int d = 0; d < 40; ++d) {
    docs.tokens.push_back(bos);
    const int n = 1 + static_cast<int>(rng() % (d % 5 == 0 ? 200 : 30));  // some longer than a row
    for (int i = 1; i <= n; ++i) docs.tokens.push_back(1000 * (d + 1) + i);
    docs.starts.push_back(static_cast<int64_t>(docs.tokens.size()));
  }
  std::vector<int64_t> all(40);
  std::iota(all.begin(), all.end(), 0);
  const int64_t L = 64;
  std::set<int32_t> seen;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    const auto rows = orrery::text::pack_rows(docs, all, 8, L, bos, 16, seed);
    REQUIRE(rows.size() == 8u * L);
    for (int r = 0; r < 8; ++r) {
      const int32_t* row = rows.data() + r * L;
      REQUIRE(row[0] == bos);
      for (int64_t t = 1; t < L; ++t) {
        seen.insert(row[t]);
        if (row[t] == bos || row[t - 1] == bos) {
          // A piece starts at id 1000 d + 1 + k (L - 1): a document's start or a row's worth on.
          if (row[t] != bos) REQUIRE((row[t] % 1000 - 1) % (L - 1) == 0);
          continue;
        }
        REQUIRE(row[t] == row[t - 1] + 1);
      }
    }
  }
  // Pieces of long documents are drawn as often as short documents: every token shows up.
  CHECK(seen.size() == docs.tokens.size() - 40 + 1);
  CHECK(orrery::text::pack_rows(docs, all, 4, L, bos, 16, 9) == orrery::text::pack_rows(docs, all, 4, L, bos, 16, 9));
  CHECK(orrery::text::pack_rows(docs, all, 4, L, bos, 16, 9) != orrery::text::pack_rows(docs, all, 4, L, bos, 16, 10));
}

TEST_CASE("text: the source trains its tokenizer, holds documents out and packs token rows") {
  const std::string dir = temp_dir("text-source");
  std::string corpus;
  for (int d = 0; d < 400; ++d)
    corpus += "Document " + std::to_string(d) + " says the quick brown fox jumps over the lazy dog, " +
              std::string(static_cast<size_t>(d % 7), '!') + "\n  and then it rests.\n\n";
  write(dir + "/a.txt", corpus);
  const Json options = {{"files", dir + "/a.txt"}, {"vocab_size", 300}, {"save_tokenizer", dir + "/tok.json"}};
  const auto train = text_source(options);
  const auto validation = text_source(options, Split::validation);
  const Json d = train->describe();
  CHECK(d["documents"] == 400);
  CHECK(d["validation_documents"].get<int>() > 5);
  CHECK(d["validation_documents"].get<int>() < 40);
  CHECK(d["bos"] == 299);
  CHECK(d["bytes_per_token"].get<double>() > 2.0);
  CHECK(validation->describe() == d);  // the same tokenizer and split, whichever split is asked for

  const Bpe tok = Bpe::load(dir + "/tok.json");
  const orrery::Batch b = train->sample({4, 50, 123});
  REQUIRE(b.values.sizes() == at::IntArrayRef({4, 1, 50}));
  CHECK(b.observed.all().item<bool>());
  CHECK(b.series_ids.sizes() == at::IntArrayRef({4, 1}));
  const auto held = [&](const orrery::Batch& batch) {
    std::set<std::string> numbers;
    const at::Tensor ids = batch.values.to(at::kInt).contiguous();
    for (int64_t r = 0; r < ids.size(0); ++r) {
      REQUIRE(ids[r][0][0].item<int>() == 299);
      const std::string text = tok.decode(std::span<const int32_t>(ids[r][0].data_ptr<int32_t>(), 50));
      for (size_t at = text.find("Document "); at != std::string::npos; at = text.find("Document ", at + 1))
        if (at + 12 <= text.size()) numbers.insert(text.substr(at, 12));
    }
    return numbers;
  };
  {  // after every BOS a document's first line, never the blank line before it
    const at::Tensor ids = train->sample({8, 50, 5}).values.to(at::kInt).contiguous();
    const std::string text = tok.decode(std::span<const int32_t>(ids.data_ptr<int32_t>(), 8 * 50));
    for (size_t at = text.find("<|bos|>"); at != std::string::npos; at = text.find("<|bos|>", at + 1))
      if (at + 7 < text.size()) CHECK(text[at + 7] == 'D');
  }
  std::set<std::string> train_docs, validation_docs;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    for (const auto& s : held(train->sample({8, 50, seed}))) train_docs.insert(s);
    for (const auto& s : held(validation->sample({8, 50, seed}))) validation_docs.insert(s);
  }
  CHECK(!validation_docs.empty());
  for (const auto& s : validation_docs) CHECK(train_docs.count(s) == 0);

  // Errors name the option or the file.
  CHECK_THROWS_WITH(text_source({{"files", dir + "/none.txt"}}), Catch::Contains("none.txt"));
  write(dir + "/blank.txt", "\n \n\n");
  CHECK_THROWS_WITH(text_source({{"files", dir + "/blank.txt"}}), Catch::Contains("blank.txt") &&
                                                                      Catch::Contains("holds no text"));
  CHECK_THROWS_WITH(text_source({{"files", dir + "/a.txt"}, {"vocab_size", 100000}}),
                    Catch::Contains("a.txt") && Catch::Contains("ran out of byte pairs"));
  CHECK_THROWS_WITH(text_source({{"files", dir + "/a.txt"}, {"vocab_size", 300}, {"validation_share", 0}}, Split::validation),
                    Catch::Contains("validation_share = 0"));
  CHECK_THROWS_WITH(text_source({{"files", dir + "/a.txt"}, {"documents", "chapter"}}), Catch::Contains("documents"));
  const auto reused = text_source({{"files", dir + "/a.txt"}, {"tokenizer", dir + "/tok.json"}});
  CHECK(reused->describe()["tokenizer"] == dir + "/tok.json");
  CHECK(reused->describe()["train_tokens"] == d["train_tokens"]);

  // A mixture holds series: it refuses text, naming the source, and the host tells text apart.
  CHECK(orrery::holds_text(*train));
  CHECK(!orrery::holds_text(*orrery::make_data_source(orrery::Registry::global(), {"synthetic", Json::object()}, {})));
  const Json tokens = {{"name", "text"}, {"options", {{"tokenizer", dir + "/tok.json"}, {"files", dir + "/a.txt"}}}};
  CHECK_THROWS_WITH(orrery::make_data_source(orrery::Registry::global(),
                                             {"mixture", {{"sources", Json::array({"synthetic", tokens})}}}, {}),
                    Catch::Contains("data source 2 of the mixture ('text')") && Catch::Contains("cannot hold text") &&
                        Catch::Contains("one text source"));
}
