#include "orrery/error.h"

#include <cstdio>

namespace orrery {

namespace {
// Length of the UTF-8 sequence starting at s[i], or 0 when it is not one.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? (c <= 0xEF ? 3 : 0) : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  return n;
}
}  // namespace

std::string quote_input(std::string_view text, size_t max) {
  std::string out = "\"";
  size_t shown = 0, i = 0;
  for (; i < text.size() && shown < max; ++shown) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      if (c == '"' || c == '\\') out += '\\';
      out += static_cast<char>(c), ++i;
    } else if (const size_t n = c >= 0x80 ? utf8_length(text, i) : 0) {
      out.append(text.substr(i, n)), i += n;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex, ++i;
    }
  }
  out += '"';
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace orrery
