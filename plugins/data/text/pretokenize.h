#pragma once
// How text is cut into chunks before byte-pair merges: GPT-4's split pattern, as nanochat uses
// it (numbers in runs of at most two digits), written as a scanner because std::regex has no
// Unicode classes or possessive quantifiers. Merges never cross a chunk boundary, so a word,
// its leading space, a number and a run of punctuation each become tokens of their own kind.
#include <cstddef>
#include <string_view>
#include <vector>

namespace orrery::text {

// The longest chunk, in bytes: a longer run (a line of 10,000 '=', a megabyte of one letter) is
// cut into pieces of at most this many bytes at code point boundaries, so that no token grows
// longer and encoding a chunk stays cheap. nanochat has no such cut; natural text never meets it.
constexpr size_t kMaxChunkBytes = 256;

// The chunks of `text`, in order; they concatenate to `text` exactly, whatever its bytes (a byte
// that is not part of valid UTF-8 is a chunk character of its own, of the punctuation class).
std::vector<std::string_view> split_chunks(std::string_view text);

}  // namespace orrery::text
