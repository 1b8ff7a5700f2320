// The text a model of token ids drew after each validation ("sample" events): per run, newest
// first, the prompt (a held-out row's start) muted and the model's continuation after it, wrapped
// to the width, so a researcher reads how the text changes as the loss falls.
#include <algorithm>

#include "../plot/theme.h"
#include "orrery/utf8.h"
#include "views.h"

namespace orrery::ui {

namespace {

// The text as one line per '\n', tabs as spaces and other control characters as a middle dot:
// what a sample holds drawn as it would print.
std::string printable(std::string_view s) {
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\t') out += "  ";
    else if (c < 0x20 && c != '\n') out += "\xC2\xB7";
    else out += ch;
  }
  return out;
}

}  // namespace

std::vector<WrappedLine> wrap_text(const plot::Canvas& c, std::string_view s, float width) {
  std::vector<WrappedLine> lines;
  size_t line_start = 0;
  while (line_start <= s.size()) {
    const size_t end = std::min(s.find('\n', line_start), s.size());
    // Break [line_start, end) into pieces that fit: after the last space that fits, else
    // between the last characters that fit (never inside one), at least one character a piece.
    // A piece's width is the sum of its characters' (both canvases advance glyph by glyph).
    size_t from = line_start;
    do {
      size_t fit = from, space = std::string_view::npos;
      float w = 0;
      for (size_t i = from; i < end;) {
        const size_t n = std::max<size_t>(1, utf8_length(s, i));
        w += c.text_size(s.substr(i, n)).x;
        if (w > width && i > from) break;
        i += n, fit = i;
        if (s[i - n] == ' ') space = i;
      }
      const size_t cut = fit < end && space != std::string_view::npos && space > from ? space : fit;
      lines.push_back({from, cut});
      from = cut;
    } while (from < end);
    line_start = end + 1;
  }
  return lines;
}

float draw_samples(plot::Canvas& c, plot::Rect r, std::span<const StyledRun> runs) {
  const plot::Theme& t = plot::theme();
  const float line_h = c.text_size("Ag").y * 1.3f;
  const float label_w = c.text_size("step 000000  ").x;
  float y = r.y0;
  bool any = false;
  for (const auto& s : runs) {
    const Run& run = *s.run;
    if (run.samples.empty()) continue;
    any = true;
    c.text({r.x0, y}, run.name, s.color);
    y += line_h * 1.2f;
    for (auto it = run.samples.rbegin(); it != run.samples.rend(); ++it) {
      // One string, the prompt first: each wrapped line draws its prompt part muted.
      std::string_view text = it->text;
      while (!text.empty() && text.back() == '\n') text.remove_suffix(1);  // no blank line after it
      const std::string prompt = printable(it->prompt), all = prompt + printable(text);
      c.text({r.x0 + 8, y}, "step " + std::to_string(it->step), t.muted);
      for (const WrappedLine& l : wrap_text(c, all, std::max(40.f, r.w() - label_w - 8))) {
        const float x = r.x0 + 8 + label_w;
        const size_t split = std::clamp(prompt.size(), l.begin, l.end);
        const std::string_view muted = std::string_view(all).substr(l.begin, split - l.begin);
        const std::string_view drawn = std::string_view(all).substr(split, l.end - split);
        if (!muted.empty()) c.text({x, y}, muted, t.muted);
        if (!drawn.empty()) c.text({x + c.text_size(muted).x, y}, drawn, t.text);
        y += line_h;
      }
      y += line_h * 0.5f;
    }
    y += line_h * 0.5f;
  }
  if (!any) {
    c.text({r.x0, y}, "no samples: a model of token ids (the categorical head) training on a text source draws "
                      "some after each validation", t.muted);
    y += line_h;
  }
  return y - r.y0;
}

}  // namespace orrery::ui
