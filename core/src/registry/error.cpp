#include "orrery/error.h"

#include <cstdio>

#include "orrery/utf8.h"

namespace orrery {

// Non-UTF-8 bytes are escaped by the strict rule of utf8.h, so a message with quoted input is
// always valid JSON text (run summaries and events carry error messages).
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
