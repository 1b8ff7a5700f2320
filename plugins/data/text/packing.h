#pragma once
// nanochat's BOS-aligned best-fit packing: every row starts at a document's start, and a row
// is filled by the longest document that still fits, again and again; when none fits, the
// shortest is cropped to fill the rest. Rows have no padding and every token a row holds is
// one a document has at that place after a BOS. A document longer than a row is read as pieces
// of a row's length, each after a BOS of its own, so that no part of a long document is
// unreachable (nanochat's crop would only ever show its beginning).
#include <cstdint>
#include <span>
#include <vector>

namespace orrery::text {

// Documents as tokens, each starting with BOS: `tokens[starts[d], starts[d + 1])`.
struct Documents {
  std::vector<int32_t> tokens;
  std::vector<int64_t> starts = {0};
  int64_t count() const { return static_cast<int64_t>(starts.size()) - 1; }
  int64_t size(int64_t d) const { return starts[static_cast<size_t>(d) + 1] - starts[static_cast<size_t>(d)]; }
};

// `rows` rows of `length` tokens from the documents `chosen` (indices into docs), drawn at
// random by `seed`: a pool of `buffer` pieces, drawn uniformly over all pieces of the chosen
// documents and topped up before every pick, packed best-fit. rows * length ids, row-major.
std::vector<int32_t> pack_rows(const Documents& docs, std::span<const int64_t> chosen, int64_t rows, int64_t length,
                               int32_t bos, int64_t buffer, uint64_t seed);

}  // namespace orrery::text
