#include "svg_canvas.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include "orrery/error.h"

namespace orrery::plot {

namespace {

constexpr float kFontSize = 13, kAdvance = 7.2f;

std::string paint(Color c) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  std::string s = buf;
  return s;
}

std::string opacity(const char* attr, Color c) {
  if (c.a == 255) return "";
  char buf[48];
  std::snprintf(buf, sizeof buf, " %s=\"%.3f\"", attr, c.a / 255.0);
  return buf;
}

std::string escape(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;  // no control characters in XML
    }
  }
  return out;
}

void points(std::ostream& out, std::span<const Vec2> pts) {
  char buf[40];
  for (const Vec2& p : pts) {
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", p.x, p.y);
    out << buf;
  }
}

const char* dasharray(Stroke s) {
  switch (s) {
    case Stroke::dashed: return " stroke-dasharray=\"6 4\"";
    case Stroke::dotted: return " stroke-dasharray=\"2 3\"";
    default: return "";
  }
}

}  // namespace

SvgCanvas::SvgCanvas(float width, float height, Color background) : width_(width), height_(height) {
  fill_rect({0, 0, width, height}, background);
}

void SvgCanvas::polyline(std::span<const Vec2> pts, Color c, float thickness, Stroke stroke) {
  if (pts.size() < 2) return;
  body_ << "<polyline fill=\"none\" stroke=\"" << paint(c) << "\"" << opacity("stroke-opacity", c)
        << " stroke-width=\"" << thickness << "\" stroke-linejoin=\"round\"" << dasharray(stroke)
        << " points=\"";
  points(body_, pts);
  body_ << "\"/>\n";
}

void SvgCanvas::band(std::span<const Vec2> upper, std::span<const Vec2> lower, Color c) {
  if (upper.size() < 2) return;
  body_ << "<polygon fill=\"" << paint(c) << "\"" << opacity("fill-opacity", c) << " points=\"";
  points(body_, upper);
  std::vector<Vec2> back(lower.rbegin(), lower.rend());
  points(body_, back);
  body_ << "\"/>\n";
}

void SvgCanvas::rect(Rect r, Color c, float thickness) {
  if (r.w() <= 0 || r.h() <= 0) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"",
                r.x0, r.y0, r.w(), r.h());
  body_ << buf << paint(c) << "\"" << opacity("stroke-opacity", c) << " stroke-width=\"" << thickness << "\"/>\n";
}

void SvgCanvas::fill_rect(Rect r, Color c) {
  if (r.w() <= 0 || r.h() <= 0) return;
  char buf[160];
  std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"", r.x0,
                r.y0, r.w(), r.h());
  body_ << buf << paint(c) << "\"" << opacity("fill-opacity", c) << "/>\n";
}

void SvgCanvas::circle(Vec2 p, float radius, Color c, bool filled) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" ", p.x, p.y, radius);
  body_ << buf;
  if (filled) body_ << "fill=\"" << paint(c) << "\"" << opacity("fill-opacity", c) << "/>\n";
  else body_ << "fill=\"none\" stroke=\"" << paint(c) << "\"" << opacity("stroke-opacity", c) << " stroke-width=\"1.5\"/>\n";
}

void SvgCanvas::text(Vec2 anchor, std::string_view s, Color c, Align h, Align v) {
  if (s.empty()) return;
  const Vec2 size = text_size(s);
  const Vec2 o = aligned_origin(anchor, size, h, v);
  char buf[96];
  // SVG places text by its baseline; 0.8 of the line height below the top is close for sans.
  std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.1f\" fill=\"", o.x, o.y + size.y * 0.8f);
  body_ << buf << paint(c) << "\"" << opacity("fill-opacity", c) << ">" << escape(s) << "</text>\n";
}

Vec2 SvgCanvas::text_size(std::string_view s) const {
  return {kAdvance * static_cast<float>(s.size()), kFontSize + 2};
}

void SvgCanvas::push_clip(Rect r) {
  const int id = clips_++;
  defs_ << "<clipPath id=\"c" << id << "\"><rect x=\"" << r.x0 << "\" y=\"" << r.y0 << "\" width=\""
        << r.w() << "\" height=\"" << r.h() << "\"/></clipPath>\n";
  body_ << "<g clip-path=\"url(#c" << id << ")\">\n";
  ++open_groups_;
}

void SvgCanvas::pop_clip() {
  if (open_groups_ == 0) return;
  body_ << "</g>\n";
  --open_groups_;
}

std::string SvgCanvas::str() const {
  std::ostringstream out;
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width_ << "\" height=\"" << height_
      << "\" viewBox=\"0 0 " << width_ << " " << height_ << "\" font-family=\"DejaVu Sans, Verdana, sans-serif\" "
      << "font-size=\"" << kFontSize << "\">\n<defs>\n" << defs_.str() << "</defs>\n" << body_.str();
  for (int i = 0; i < open_groups_; ++i) out << "</g>\n";
  out << "</svg>\n";
  return out.str();
}

void SvgCanvas::save(const std::string& path) const { save_text(path, str()); }

void save_text(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw orrery::Error("cannot write " + path);
    f << text;
    if (!f.flush()) throw orrery::Error("cannot write " + path);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) throw orrery::Error("cannot write " + path + ": " + ec.message());
}

}  // namespace orrery::plot
