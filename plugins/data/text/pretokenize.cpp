// The pattern, alternatives tried in this order at each position (the first that matches wins):
//   '(?i:[sdmt]|ll|ve|re)              contractions
//   [^\r\n\p{L}\p{N}]?+\p{L}+          a word, with one leading non-letter (a space, a quote)
//   \p{N}{1,2}                         one or two digits
//    ?[^\s\p{L}\p{N}]++[\r\n]*         punctuation, with one leading space and trailing newlines
//   \s*[\r\n]                          whitespace up to its last newline
//   \s+(?!\S)                          whitespace, leaving its last space to the next word
//   \s+                                whitespace
// Unicode classes are approximated without tables: \s is Unicode's White_Space; a number is an
// ASCII digit (and the superscripts, fractions, Arabic-Indic and full-width digits); a letter is
// an ASCII letter or any other code point that is not a space, a number, Latin-1 or general
// punctuation, a symbol block or an emoji. Only the chunk boundaries depend on this, never the
// round trip.
#include "pretokenize.h"

#include <cstdint>

#include "orrery/utf8.h"

namespace orrery::text {
namespace {

enum class Class : uint8_t { letter, number, space, other };

struct CodePoint {
  int32_t cp;    // -1: a byte that is not part of valid UTF-8
  size_t start;  // byte offset
  Class cls;
};

bool white_space(int32_t c) {
  return (c >= 9 && c <= 13) || c == 32 || c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) ||
         c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool number(int32_t c) {
  return (c >= '0' && c <= '9') || c == 0xB2 || c == 0xB3 || c == 0xB9 || (c >= 0xBC && c <= 0xBE) ||
         (c >= 0x660 && c <= 0x669) || (c >= 0xFF10 && c <= 0xFF19);
}

bool letter(int32_t c) {
  if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  if (c == 0xAA || c == 0xB5 || c == 0xBA) return true;  // ª µ º
  if (c < 0xC0 || c == 0xD7 || c == 0xF7) return false;  // Latin-1 punctuation, × ÷
  if (c >= 0x2000 && c <= 0x2BFF) return false;          // general punctuation, symbols, arrows, maths
  if (c >= 0x3000 && c <= 0x303F) return false;          // CJK punctuation
  if (c >= 0xFF00 && c <= 0xFF20) return false;          // full-width punctuation
  if (c >= 0x1F000) return false;                        // emoji and pictographs
  return true;
}

Class classify(int32_t c) {
  if (c < 0) return Class::other;
  if (white_space(c)) return Class::space;
  if (number(c)) return Class::number;
  return letter(c) ? Class::letter : Class::other;
}

int32_t decode(std::string_view s, size_t i, size_t n) {
  const auto b = [&](size_t k) { return static_cast<int32_t>(static_cast<unsigned char>(s[i + k])); };
  if (n == 1) return b(0);
  if (n == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
  if (n == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
  return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

std::vector<CodePoint> code_points(std::string_view s) {
  std::vector<CodePoint> out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_length(s, i);
    const int32_t c = n ? decode(s, i, n) : -1;
    out.push_back({c, i, classify(c)});
    i += n ? n : 1;
  }
  return out;
}

int32_t lower_ascii(int32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// The end (exclusive, in code points) of the chunk that starts at i.
size_t chunk_end(const std::vector<CodePoint>& p, size_t i) {
  const size_t n = p.size();
  const auto is = [&](size_t k, Class c) { return k < n && p[k].cls == c; };
  const auto newline = [&](size_t k) { return k < n && (p[k].cp == '\r' || p[k].cp == '\n'); };

  if (p[i].cp == '\'' && i + 1 < n) {  // contractions
    const int32_t a = lower_ascii(p[i + 1].cp);
    if (a == 's' || a == 'd' || a == 'm' || a == 't') return i + 2;
    if (i + 2 < n) {
      const int32_t b = lower_ascii(p[i + 2].cp);
      if ((a == 'l' && b == 'l') || (a == 'v' && b == 'e') || (a == 'r' && b == 'e')) return i + 3;
    }
  }
  {  // a word: the optional leading character is possessive, so no backtracking past it
    size_t j = i;
    if (!newline(j) && !is(j, Class::letter) && !is(j, Class::number)) ++j;
    size_t k = j;
    while (is(k, Class::letter)) ++k;
    if (k > j) return k;
  }
  if (is(i, Class::number)) return is(i + 1, Class::number) ? i + 2 : i + 1;
  {  // punctuation; the optional space does backtrack
    size_t j = i;
    if (p[i].cp == ' ' && is(i + 1, Class::other)) j = i + 1;
    if (is(j, Class::other)) {
      size_t k = j;
      while (is(k, Class::other)) ++k;
      while (newline(k)) ++k;
      return k;
    }
  }
  size_t e = i;
  while (is(e, Class::space)) ++e;
  if (e > i) {
    for (size_t q = e; q-- > i;)
      if (newline(q)) return q + 1;  // \s*[\r\n]
    if (e == n) return e;            // \s+(?!\S) at the end
    if (e - i >= 2) return e - 1;    // \s+(?!\S): the last space goes to what follows
    return e;                        // \s+
  }
  return i + 1;  // unreachable: every class is matched above
}

}  // namespace

std::vector<std::string_view> split_chunks(std::string_view text) {
  const std::vector<CodePoint> p = code_points(text);
  std::vector<std::string_view> out;
  const auto start = [&](size_t k) { return k < p.size() ? p[k].start : text.size(); };
  for (size_t i = 0; i < p.size();) {
    const size_t e = chunk_end(p, i);
    for (size_t k = i; k < e;) {  // pieces of at most kMaxChunkBytes, whole code points
      size_t m = k + 1;
      while (m < e && start(m + 1) - start(k) <= kMaxChunkBytes) ++m;
      out.push_back(text.substr(start(k), start(m) - start(k)));
      k = m;
    }
    i = e;
  }
  return out;
}

}  // namespace orrery::text
