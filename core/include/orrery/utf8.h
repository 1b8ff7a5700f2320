#pragma once
// UTF-8 as JSON (nlohmann::json::dump) accepts it, RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF. Text that passes can go into any JSON document Orrery writes.
#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>

namespace orrery {

// The length of the UTF-8 sequence starting at s[i] (1 for ASCII), or 0 when it is not one.
inline size_t utf8_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = byte(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range, narrower after E0, ED, F0, F4
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  if (n == 0 || i + n > s.size() || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if ((byte(k) & 0xC0) != 0x80) return 0;
  return n;
}

// `s` with each byte that is not part of valid UTF-8 written as the text \xNN: names read from
// files (a header cell, a file name) made fit for JSON, the same on every read.
inline std::string valid_utf8(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (const size_t n = utf8_length(s, i)) {
      out.append(s.substr(i, n)), i += n;
    } else {
      const auto c = static_cast<unsigned char>(s[i++]);
      out += "\\x", out += kHex[c >> 4], out += kHex[c & 15];
    }
  }
  return out;
}

inline bool is_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// A text decoded from a prompt's tokens and the tokens drawn after it, cut into the prompt and
// the continuation on whole characters: [0, split) and [split, end). A character whose bytes
// two tokens share across the prompt's end (`prompt_bytes`, the prompt decoded alone) goes to
// the continuation whole, and a last character the final token only begins is left out (end).
// Invalid bytes elsewhere are the text's own (a JSON writer shows each as U+FFFD).
struct TextSplit {
  size_t split = 0, end = 0;
};
inline TextSplit split_continuation(std::string_view all, size_t prompt_bytes) {
  size_t end = 0;
  for (size_t n = 0; end < all.size() && (n = utf8_length(all, end)) > 0;) end += n;
  if (!(end < all.size() && all.size() - end < 4)) end = all.size();
  size_t split = std::min(prompt_bytes, end);
  while (split > 0 && split < end && (static_cast<unsigned char>(all[split]) & 0xC0) == 0x80) --split;
  return {split, end};
}

}  // namespace orrery
