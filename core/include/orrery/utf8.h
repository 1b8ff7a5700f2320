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
// the continuation whole, and a last character the final token only begins (a lead byte and
// fewer continuation bytes than it needs) is left out. Any other byte, valid UTF-8 or not,
// stays where it is: invalid bytes are the text's own (a JSON writer shows each as U+FFFD).
struct TextSplit {
  size_t split = 0, end = 0;
};
inline TextSplit split_continuation(std::string_view all, size_t prompt_bytes) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(all[i]); };
  const auto needs = [](unsigned char c) -> size_t {  // bytes of the sequence a lead byte starts
    return c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  };
  size_t end = all.size();
  for (size_t back = 1; back <= 3 && back <= all.size(); ++back) {
    const size_t i = all.size() - back;
    if ((byte(i) & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    bool unfinished = needs(byte(i)) > back;
    for (size_t k = i + 1; unfinished && k < all.size(); ++k) unfinished = (byte(k) & 0xC0) == 0x80;
    if (unfinished) end = i;
    break;
  }
  size_t split = std::min(prompt_bytes, end);
  for (size_t back = 1; back <= 3 && back <= split; ++back) {
    const size_t n = utf8_length(all, split - back);
    if (n > back) {  // a whole character that starts before the split and ends after it
      split -= back;
      break;
    }
    if (n > 0) break;
  }
  return {split, end};
}

}  // namespace orrery
