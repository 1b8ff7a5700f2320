#include "packing.h"

#include <algorithm>
#include <map>
#include <random>

#include "orrery/error.h"

namespace orrery::text {
namespace {

// A piece of a document: BOS, then `size - 1` of its tokens from `from` (BOS is not among
// them), or a whole document when it fits a row.
struct Piece {
  int64_t doc, from, size;
};

// Every piece of a chosen document, numbered in order: piece k of document chosen[i] is number
// first[i] + k.
struct Pieces {
  std::vector<int64_t> first;
  int64_t total = 0;

  Pieces(const Documents& docs, std::span<const int64_t> chosen, int64_t length) {
    first.reserve(chosen.size());
    for (const int64_t d : chosen) {
      first.push_back(total);
      const int64_t n = docs.size(d);
      total += n <= length ? 1 : (n - 1 + length - 2) / (length - 1);
    }
  }

  Piece at(const Documents& docs, std::span<const int64_t> chosen, int64_t length, int64_t number) const {
    const auto i = static_cast<size_t>(std::upper_bound(first.begin(), first.end(), number) - first.begin() - 1);
    const int64_t d = chosen[i], n = docs.size(d), k = number - first[i];
    if (n <= length) return {d, 1, n};
    const int64_t from = 1 + k * (length - 1);
    return {d, from, 1 + std::min(length - 1, n - from)};
  }
};

}  // namespace

std::vector<int32_t> pack_rows(const Documents& docs, std::span<const int64_t> chosen, int64_t rows, int64_t length,
                               int32_t bos, int64_t buffer, uint64_t seed) {
  if (length < 2) throw Error("a packed row needs at least 2 tokens (BOS and one more), got " + std::to_string(length));
  if (chosen.empty()) throw Error("no documents to pack rows from");
  const Pieces pieces(docs, chosen, length);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> pick(0, pieces.total - 1);
  std::multimap<int64_t, Piece> pool;  // by size; topped up to `buffer` before every pick, as nanochat's
  const auto refill = [&] {
    while (static_cast<int64_t>(pool.size()) < buffer) {
      const Piece p = pieces.at(docs, chosen, length, pick(rng));
      pool.emplace(p.size, p);
    }
  };

  std::vector<int32_t> out(static_cast<size_t>(rows * length));
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* row = out.data() + r * length;
    for (int64_t pos = 0; pos < length;) {
      refill();
      const int64_t room = length - pos;
      auto it = pool.upper_bound(room);  // the longest piece that fits, else the shortest, cropped
      it = it == pool.begin() ? it : std::prev(it);
      const Piece p = it->second;
      pool.erase(it);
      const int64_t take = std::min(p.size, room);
      const int32_t* src = docs.tokens.data() + docs.starts[static_cast<size_t>(p.doc)] + p.from;
      row[pos] = bos;
      std::copy(src, src + take - 1, row + pos + 1);
      pos += take;
    }
  }
  return out;
}

}  // namespace orrery::text
