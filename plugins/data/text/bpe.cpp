#include "bpe.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <queue>
#include <unordered_set>

#include "orrery/atomic_file.h"
#include "orrery/error.h"
#include "orrery/input_file.h"
#include "orrery/utf8.h"
#include "pretokenize.h"

namespace orrery::text {
namespace {

constexpr const char* kFormat = "orrery-bpe";
constexpr int kVersion = 1;
constexpr const char* kSplit = "gpt4-digits2";  // pretokenize.h's pattern
constexpr size_t kMaxIds = size_t{1} << 24;      // ids are exact in float32 values below this

uint64_t key(int32_t a, int32_t b) { return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b); }
int32_t first(uint64_t k) { return static_cast<int32_t>(k >> 32); }
int32_t second(uint64_t k) { return static_cast<int32_t>(k & 0xFFFFFFFFu); }

// Replaces every (a, b) in `ids`, left to right, by c; true when there was one.
bool merge_pair(std::vector<int32_t>& ids, int32_t a, int32_t b, int32_t c) {
  size_t out = 0;
  bool any = false;
  for (size_t i = 0; i < ids.size(); ++out) {
    if (i + 1 < ids.size() && ids[i] == a && ids[i + 1] == b) {
      ids[out] = c, i += 2, any = true;
    } else {
      ids[out] = ids[i++];
    }
  }
  ids.resize(out);
  return any;
}

// The training state: every distinct chunk once, with its count, and for each adjacent pair its
// count over the corpus and the chunks it may occur in. A merge touches only those chunks.
struct Trainer {
  struct Word {
    std::vector<int32_t> ids;
    int64_t count;
    int64_t stamp = -1;  // the last merge that visited it
  };
  // Heap order: the larger count first, then the smaller pair.
  struct Lower {
    bool operator()(const std::pair<int64_t, uint64_t>& x, const std::pair<int64_t, uint64_t>& y) const {
      return x.first != y.first ? x.first < y.first : x.second > y.second;
    }
  };

  std::vector<Word> words;
  std::unordered_map<uint64_t, int64_t> count;
  std::unordered_map<uint64_t, std::vector<int32_t>> where;
  std::priority_queue<std::pair<int64_t, uint64_t>, std::vector<std::pair<int64_t, uint64_t>>, Lower> heap;

  void note(uint64_t k, int32_t w) {
    auto& list = where[k];
    if (list.empty() || list.back() != w) list.push_back(w);
  }

  Trainer(const std::vector<std::string_view>& texts, const Interrupt* interrupt) {
    std::unordered_map<std::string_view, int64_t> chunks;
    size_t seen = 0;
    for (const auto text : texts)
      for (const auto chunk : split_chunks(text)) {
        if (++seen % 65536 == 0) check_interrupt(interrupt);
        ++chunks[chunk];
      }
    std::vector<std::pair<std::string_view, int64_t>> sorted(chunks.begin(), chunks.end());
    std::sort(sorted.begin(), sorted.end());  // word numbers that do not depend on hashing
    for (const auto& [chunk, n] : sorted) {
      Word w{{}, n};
      for (const char ch : chunk) w.ids.push_back(static_cast<unsigned char>(ch));
      words.push_back(std::move(w));
    }
    for (size_t w = 0; w < words.size(); ++w) {
      const auto& ids = words[w].ids;
      for (size_t i = 0; i + 1 < ids.size(); ++i) {
        const uint64_t k = key(ids[i], ids[i + 1]);
        count[k] += words[w].count;
        note(k, static_cast<int32_t>(w));
      }
    }
    for (const auto& [k, n] : count) heap.push({n, k});
  }

  // The most frequent pair now, or nullopt when no pair is left. Stale heap entries (a count
  // that has changed since) are dropped: every change pushed the new count too.
  std::optional<uint64_t> best() {
    while (!heap.empty()) {
      const auto [n, k] = heap.top();
      heap.pop();
      const auto it = count.find(k);
      if (it != count.end() && it->second == n && n > 0) return k;
    }
    return std::nullopt;
  }

  void merge(uint64_t k, int32_t c, int64_t merge_number) {
    const int32_t a = first(k), b = second(k);
    const std::vector<int32_t> visit = std::move(where[k]);
    where.erase(k);
    std::unordered_map<uint64_t, int64_t> delta;
    for (const int32_t w : visit) {
      Word& word = words[static_cast<size_t>(w)];
      if (word.stamp == merge_number) continue;
      word.stamp = merge_number;
      std::vector<int32_t> ids = word.ids;
      if (!merge_pair(ids, a, b, c)) continue;  // merged away by an earlier merge
      for (size_t i = 0; i + 1 < word.ids.size(); ++i) delta[key(word.ids[i], word.ids[i + 1])] -= word.count;
      for (size_t i = 0; i + 1 < ids.size(); ++i) {
        const uint64_t p = key(ids[i], ids[i + 1]);
        delta[p] += word.count;
        if (ids[i] == c || ids[i + 1] == c) note(p, w);
      }
      word.ids = std::move(ids);
    }
    for (const auto& [p, d] : delta) {
      if (d == 0) continue;
      const int64_t n = count[p] += d;
      if (n > 0) heap.push({n, p});
    }
  }
};

}  // namespace

Bpe::Bpe(std::vector<std::pair<int32_t, int32_t>> merges, std::vector<std::string> specials)
    : merges_(std::move(merges)), specials_(std::move(specials)) {
  bytes_.reserve(256 + merges_.size() + specials_.size());
  for (int b = 0; b < 256; ++b) bytes_.emplace_back(1, static_cast<char>(b));
  for (size_t m = 0; m < merges_.size(); ++m) {
    const auto [a, b] = merges_[m];
    bytes_.push_back(bytes_[static_cast<size_t>(a)] + bytes_[static_cast<size_t>(b)]);
    merged_.emplace(key(a, b), static_cast<int32_t>(256 + m));
  }
  for (const auto& s : specials_) bytes_.push_back(s);
}

Bpe Bpe::train(const std::vector<std::string_view>& texts, int64_t vocab_size, std::vector<std::string> special_tokens,
               const std::function<void(int64_t, int64_t)>& progress, const Interrupt* interrupt) {
  const int64_t wanted = vocab_size - 256 - static_cast<int64_t>(special_tokens.size());
  if (wanted < 0)
    throw Error("a BPE vocabulary of " + std::to_string(vocab_size) + " ids cannot hold the 256 bytes and " +
                std::to_string(special_tokens.size()) + " special tokens");
  for (size_t i = 0; i < special_tokens.size(); ++i) {
    if (special_tokens[i].empty()) throw Error("a special token must be a non-empty string");
    if (std::find(special_tokens.begin(), special_tokens.begin() + static_cast<std::ptrdiff_t>(i), special_tokens[i]) !=
        special_tokens.begin() + static_cast<std::ptrdiff_t>(i))
      throw Error("special token " + quote_input(special_tokens[i]) + " is named twice");
  }
  Trainer t(texts, interrupt);
  std::vector<std::pair<int32_t, int32_t>> merges;
  merges.reserve(static_cast<size_t>(wanted));
  for (int64_t m = 0; m < wanted; ++m) {
    check_interrupt(interrupt);
    const auto k = t.best();
    if (!k)
      throw Error("BPE training ran out of byte pairs after " + std::to_string(m) + " merges of the " +
                  std::to_string(wanted) + " that vocab_size = " + std::to_string(vocab_size) +
                  " asks for: give more text or a smaller vocabulary");
    merges.emplace_back(first(*k), second(*k));
    t.merge(*k, static_cast<int32_t>(256 + m), m);
    if (progress && ((m + 1) % 256 == 0 || m + 1 == wanted)) progress(m + 1, wanted);
  }
  return Bpe(std::move(merges), std::move(special_tokens));
}

void Bpe::encode_chunk(std::string_view chunk, std::vector<int32_t>& out) const {
  std::vector<int32_t> ids(chunk.size());
  for (size_t i = 0; i < chunk.size(); ++i) ids[i] = static_cast<unsigned char>(chunk[i]);
  while (ids.size() > 1) {
    // The earliest merge (the smallest new id) among the adjacent pairs goes first.
    int32_t best = -1;
    size_t at = 0;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
      const auto it = merged_.find(key(ids[i], ids[i + 1]));
      if (it != merged_.end() && (best < 0 || it->second < best)) best = it->second, at = i;
    }
    if (best < 0) break;
    merge_pair(ids, ids[at], ids[at + 1], best);
  }
  out.insert(out.end(), ids.begin(), ids.end());
}

std::vector<std::vector<int32_t>> Bpe::encode_all(std::span<const std::string_view> texts,
                                                  const Interrupt* interrupt) const {
  // Natural text repeats its words: each distinct chunk is encoded once.
  std::unordered_map<std::string_view, std::vector<int32_t>> seen;
  std::vector<std::vector<int32_t>> out(texts.size());
  for (size_t t = 0; t < texts.size(); ++t) {
    out[t].reserve(texts[t].size() / 3 + 1);
    for (const auto chunk : split_chunks(texts[t])) {
      auto [it, fresh] = seen.try_emplace(chunk);
      if (fresh) check_interrupt(interrupt), encode_chunk(chunk, it->second);
      out[t].insert(out[t].end(), it->second.begin(), it->second.end());
    }
  }
  return out;
}

std::vector<int32_t> Bpe::encode(std::string_view text) const {
  return std::move(encode_all(std::span<const std::string_view>(&text, 1)).front());
}

std::string Bpe::decode(std::span<const int32_t> ids) const {
  std::string out;
  for (const int32_t id : ids) {
    if (id < 0 || id >= vocab_size())
      throw Error("token id " + std::to_string(id) + " is not in this tokenizer's vocabulary of " +
                  std::to_string(vocab_size()));
    out += bytes_[static_cast<size_t>(id)];
  }
  return out;
}

int32_t Bpe::special(std::string_view name) const {
  for (size_t i = 0; i < specials_.size(); ++i)
    if (specials_[i] == name) return static_cast<int32_t>(256 + merges_.size() + i);
  std::string known;
  for (const auto& s : specials_) known += (known.empty() ? "" : ", ") + s;
  throw Error("the tokenizer has no special token " + quote_input(name) + " (it has: " +
              (known.empty() ? "none" : known) + ")");
}

Json Bpe::to_json() const {
  Json merges = Json::array();
  for (const auto& [a, b] : merges_) merges.push_back({a, b});
  return {{"format", kFormat}, {"version", kVersion}, {"split", kSplit}, {"vocab_size", vocab_size()},
          {"special_tokens", specials_}, {"merges", merges}};
}

Bpe Bpe::from_json(const Json& j, const std::string& where) {
  const auto fail = [&](const std::string& what) { throw Error(where + ": " + what); };
  const auto field = [&](const char* name) { return j.is_object() && j.contains(name) ? j[name] : Json(); };
  if (field("format") != kFormat) fail("not an Orrery BPE tokenizer (format \"orrery-bpe\")");
  if (field("version") != kVersion)
    fail("tokenizer version " + quote_input(json_text(field("version")), 40) + ", this build reads version " +
         std::to_string(kVersion));
  if (field("split") != kSplit)
    fail("chunks split by " + quote_input(json_text(field("split")), 40) + ", this build splits by \"" + kSplit + "\"");
  if (!j.contains("merges") || !j["merges"].is_array()) fail("no \"merges\" list");
  if (!j.contains("special_tokens") || !j["special_tokens"].is_array()) fail("no \"special_tokens\" list");
  std::vector<std::pair<int32_t, int32_t>> merges;
  std::unordered_set<uint64_t> pairs;
  const Json& list = j["merges"];
  // Ids are held as float32 values (exact below 2^24), and no trained token is longer than a chunk.
  if (256 + list.size() + j["special_tokens"].size() > kMaxIds)
    fail(std::to_string(list.size()) + " merges and " + std::to_string(j["special_tokens"].size()) +
         " special tokens make more than " + std::to_string(kMaxIds) + " ids");
  std::vector<size_t> length(256, 1);
  for (size_t m = 0; m < list.size(); ++m) {
    const Json& pair = list[m];
    const auto id_ok = [&](const Json& x) {
      return x.is_number_integer() && x.get<int64_t>() >= 0 && x.get<int64_t>() < 256 + static_cast<int64_t>(m);
    };
    if (!pair.is_array() || pair.size() != 2 || !id_ok(pair[0]) || !id_ok(pair[1]))
      fail("merge " + std::to_string(m) + " is " + quote_input(json_text(pair), 60) + ": it must be two ids below " +
           std::to_string(256 + m) + ", made by earlier merges");
    merges.emplace_back(pair[0].get<int32_t>(), pair[1].get<int32_t>());
    if (!pairs.insert(key(merges.back().first, merges.back().second)).second)
      fail("merge " + std::to_string(m) + " merges " + json_text(pair) + " again");
    length.push_back(length[static_cast<size_t>(merges.back().first)] + length[static_cast<size_t>(merges.back().second)]);
    if (length.back() > kMaxChunkBytes)
      fail("merge " + std::to_string(m) + " makes a token of " + std::to_string(length.back()) + " bytes, longer than a "
           "chunk (" + std::to_string(kMaxChunkBytes) + " bytes)");
  }
  std::vector<std::string> specials;
  for (const Json& s : j["special_tokens"]) {
    if (!s.is_string() || s.get<std::string>().empty()) fail("a special token must be a non-empty string");
    if (std::find(specials.begin(), specials.end(), s.get<std::string>()) != specials.end())
      fail("special token " + quote_input(s.get<std::string>()) + " is named twice");
    specials.push_back(s.get<std::string>());
  }
  Bpe bpe(std::move(merges), std::move(specials));
  if (j.contains("vocab_size") && j["vocab_size"] != bpe.vocab_size())
    fail("vocab_size says " + quote_input(json_text(j["vocab_size"]), 40) + " but the merges and special tokens make " +
         std::to_string(bpe.vocab_size()));
  return bpe;
}

Bpe Bpe::load(const std::string& path) {
  require_input_file(path, "a tokenizer file (JSON, written by save_tokenizer)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read the tokenizer " + quote_input(path, 300));
  Json j;
  try {
    j = Json::parse(in);
  } catch (const Json::exception& e) {
    throw Error("tokenizer " + quote_input(path, 300) + " is not valid JSON: " + valid_utf8(e.what()));
  }
  return from_json(j, "tokenizer " + quote_input(path, 300));
}

void Bpe::save(const std::string& path) const {
  write_file_atomically(path, [&](std::ostream& out) { out << json_text(to_json()) << "\n"; });
}

}  // namespace orrery::text
