#include "tuner/report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace autotune::report {

namespace {

constexpr const char* kFont = "DejaVu Sans, Liberation Sans, Helvetica, Arial, sans-serif";
constexpr const char* kInk = "#111827";
constexpr const char* kMuted = "#4b5563";
constexpr const char* kGrid = "#e5e7eb";
constexpr const char* kAxis = "#9ca3af";

std::string f1(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

struct Frame {
  double left = 0, top = 0, right = 0, bottom = 0;  // plot area in pixels
  double w() const { return right - left; }
  double h() const { return bottom - top; }
};

/// Opening tag, background, title and subtitle. Returns the y where the plot may start.
double open_svg(std::ostringstream& o, int width, int height, const std::string& title, const std::string& subtitle,
                const std::string& id) {
  if (width < 200 || height < 150) throw std::invalid_argument("chart size must be at least 200 x 150");
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" viewBox=\"0 0 "
    << width << " " << height << "\" font-family=\"" << kFont << "\" font-size=\"12\" role=\"img\"";
  if (!id.empty()) o << " id=\"" << xml_escape(id) << "\"";
  o << " aria-label=\"" << xml_escape(title) << "\">\n";
  o << "<title>" << xml_escape(title) << "</title>\n";
  o << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height << "\" fill=\"#ffffff\"/>\n";
  double y = 14;
  if (!title.empty()) {
    o << "<text class=\"chart-title\" x=\"16\" y=\"24\" font-size=\"15\" font-weight=\"bold\" fill=\"" << kInk << "\">"
      << xml_escape(title) << "</text>\n";
    y = 34;
  }
  if (!subtitle.empty()) {
    o << "<text class=\"chart-subtitle\" x=\"16\" y=\"" << f1(y + 8) << "\" font-size=\"11.5\" fill=\"" << kMuted
      << "\">" << xml_escape(subtitle) << "</text>\n";
    y += 18;
  }
  return y + 16;
}

void y_axis(std::ostringstream& o, const Frame& fr, const std::vector<double>& ticks, double y_lo, double y_hi,
            const std::string& label) {
  auto py = [&](double v) { return fr.bottom - (v - y_lo) / (y_hi - y_lo) * fr.h(); };
  o << "<g class=\"y-axis\">\n";
  for (double t : ticks) {
    double y = py(t);
    o << "<line x1=\"" << f1(fr.left) << "\" y1=\"" << f1(y) << "\" x2=\"" << f1(fr.right) << "\" y2=\"" << f1(y)
      << "\" stroke=\"" << kGrid << "\" stroke-width=\"1\"/>\n";
    o << "<text x=\"" << f1(fr.left - 8) << "\" y=\"" << f1(y + 4) << "\" text-anchor=\"end\" fill=\"" << kMuted
      << "\">" << xml_escape(format_number(t)) << "</text>\n";
  }
  if (!label.empty()) {
    double cy = (fr.top + fr.bottom) / 2;
    o << "<text x=\"18\" y=\"" << f1(cy) << "\" text-anchor=\"middle\" fill=\"" << kInk
      << "\" transform=\"rotate(-90 18 " << f1(cy) << ")\">" << xml_escape(label) << "</text>\n";
  }
  o << "</g>\n";
}

void frame_box(std::ostringstream& o, const Frame& fr) {
  o << "<line x1=\"" << f1(fr.left) << "\" y1=\"" << f1(fr.bottom) << "\" x2=\"" << f1(fr.right) << "\" y2=\""
    << f1(fr.bottom) << "\" stroke=\"" << kAxis << "\" stroke-width=\"1.2\"/>\n";
  o << "<line x1=\"" << f1(fr.left) << "\" y1=\"" << f1(fr.top) << "\" x2=\"" << f1(fr.left) << "\" y2=\""
    << f1(fr.bottom) << "\" stroke=\"" << kAxis << "\" stroke-width=\"1.2\"/>\n";
}

double max_or(double a, double b) { return std::isfinite(b) ? std::max(a, b) : a; }

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default:
        // Control characters are not allowed in XML 1.0 (except tab, newline, carriage return).
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') out += ' ';
        else out += c;
    }
  }
  return out;
}

std::string palette(std::size_t i) {
  // Okabe-Ito inspired, readable on white; distinct for the 5 block sizes of the explore chart.
  static const char* colors[] = {"#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7",
                                 "#56b4e9", "#8c6d31", "#6a3d9a", "#b8860b", "#333333"};
  return colors[i % (sizeof colors / sizeof colors[0])];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  std::vector<double> out;
  if (!(hi >= lo) || !std::isfinite(lo) || !std::isfinite(hi)) return out;
  if (target < 2) target = 2;
  if (hi == lo) {
    out.push_back(lo);
    return out;
  }
  double raw = (hi - lo) / (target - 1);
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * mag;
    if (step >= raw) break;
  }
  double start = std::floor(lo / step) * step;
  for (double t = start; t <= hi + step * 0.999; t += step) out.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return out;
}

std::string format_number(double v, int max_decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", max_decimals, v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

namespace {

/// Where a line chart's data lands: the plot frame and the data ranges after padding.
struct LineScale {
  Frame fr;
  bool log2_x = false;
  double x_lo = 0, x_hi = 1;
  std::vector<double> y_ticks;  // from 0; the last is the top of the y axis
  double y_top = 1;
  double px(double x) const { return fr.left + ((log2_x ? std::log2(x) : x) - x_lo) / (x_hi - x_lo) * fr.w(); }
  double py(double y) const { return fr.bottom - y / y_top * fr.h(); }
};

/// The x range of points, reference lines and ticks (padded by 4 %), the y range from 0 to the highest value.
LineScale line_scale(const LineChartSpec& spec, const Frame& fr) {
  LineScale sc;
  sc.fr = fr;
  sc.log2_x = spec.log2_x;
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = -x_lo, y_hi = 0;
  auto take_x = [&](double x) {
    if (spec.log2_x && !(x > 0)) throw std::invalid_argument("log2 x axis needs x > 0 (got " + format_number(x) + ")");
    double v = spec.log2_x ? std::log2(x) : x;
    x_lo = std::min(x_lo, v);
    x_hi = std::max(x_hi, v);
  };
  for (const auto& s : spec.series)
    for (const auto& p : s.points) {
      take_x(p.x);
      y_hi = max_or(y_hi, p.y);
    }
  for (const auto& v : spec.vlines) take_x(v.x);
  for (double t : spec.x_ticks) take_x(t);
  for (const auto& h : spec.hlines) y_hi = max_or(y_hi, h.y);
  if (!std::isfinite(x_lo)) {
    x_lo = 0;  // an empty chart spans [0, 1] (log2: 2^0 to 2^1)
    x_hi = 1;
  }
  if (x_hi == x_lo) {
    x_lo -= 1;
    x_hi += 1;
  }
  const double pad = (x_hi - x_lo) * 0.04;
  sc.x_lo = x_lo - pad;
  sc.x_hi = x_hi + pad;
  if (y_hi <= 0) y_hi = 1;
  sc.y_ticks = nice_ticks(0, y_hi * 1.06, 6);
  sc.y_top = sc.y_ticks.back();
  return sc;
}

/// x ticks (the spec's, or powers of two, or nice numbers), their grid lines and the x label.
void line_x_axis(std::ostringstream& o, const LineChartSpec& spec, const LineScale& sc) {
  const Frame& fr = sc.fr;
  std::vector<double> xt = spec.x_ticks;
  if (xt.empty()) {
    if (spec.log2_x) {
      for (double e = std::ceil(sc.x_lo); e <= sc.x_hi; e += 1) xt.push_back(std::pow(2.0, e));
    } else {
      xt = nice_ticks(sc.x_lo, sc.x_hi, 8);
    }
  }
  o << "<g class=\"x-axis\">\n";
  for (double t : xt) {
    double x = sc.px(t);
    if (x < fr.left - 0.5 || x > fr.right + 0.5) continue;
    o << "<line x1=\"" << f1(x) << "\" y1=\"" << f1(fr.top) << "\" x2=\"" << f1(x) << "\" y2=\"" << f1(fr.bottom)
      << "\" stroke=\"" << kGrid << "\" stroke-width=\"1\"/>\n";
    o << "<text x=\"" << f1(x) << "\" y=\"" << f1(fr.bottom + 18) << "\" text-anchor=\"middle\" fill=\"" << kMuted
      << "\">" << xml_escape(format_number(t)) << "</text>\n";
  }
  if (!spec.x_label.empty())
    o << "<text x=\"" << f1((fr.left + fr.right) / 2) << "\" y=\"" << f1(fr.bottom + 42)
      << "\" text-anchor=\"middle\" fill=\"" << kInk << "\">" << xml_escape(spec.x_label) << "</text>\n";
  o << "</g>\n";
}

/// The vertical and horizontal reference lines with their labels.
void line_references(std::ostringstream& o, const LineChartSpec& spec, const LineScale& sc) {
  const Frame& fr = sc.fr;
  for (const auto& v : spec.vlines) {
    double x = sc.px(v.x);
    o << "<g class=\"vline\"><line x1=\"" << f1(x) << "\" y1=\"" << f1(fr.top) << "\" x2=\"" << f1(x) << "\" y2=\""
      << f1(fr.bottom) << "\" stroke=\"" << xml_escape(v.color) << "\" stroke-width=\"1.5\" stroke-dasharray=\"2 4\"/>";
    o << "<text x=\"" << f1(x + 4) << "\" y=\"" << f1(fr.top + 12) << "\" font-size=\"11\" fill=\"" << kMuted
      << "\">" << xml_escape(v.label) << "</text></g>\n";
  }
  for (const auto& h : spec.hlines) {
    double y = sc.py(h.y);
    o << "<g class=\"hline\"><line x1=\"" << f1(fr.left) << "\" y1=\"" << f1(y) << "\" x2=\"" << f1(fr.right)
      << "\" y2=\"" << f1(y) << "\" stroke=\"" << xml_escape(h.color)
      << "\" stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>";
    if (h.label.empty())
      o << "</g>\n";
    else if (h.label_left)
      o << "<text x=\"" << f1(fr.left + 6) << "\" y=\"" << f1(y + 15) << "\" font-size=\"11\" fill=\""
        << xml_escape(h.color) << "\">" << xml_escape(h.label) << "</text></g>\n";
    else
      o << "<text x=\"" << f1(fr.right - 4) << "\" y=\"" << f1(y - 6)
        << "\" text-anchor=\"end\" font-size=\"11\" fill=\"" << xml_escape(h.color) << "\">" << xml_escape(h.label)
        << "</text></g>\n";
  }
}

/// Each series as a polyline with a dot (and tooltip) per point, then the highlight rings.
void line_series(std::ostringstream& o, const LineChartSpec& spec, const LineScale& sc) {
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const auto& s = spec.series[i];
    const std::string color = s.color.empty() ? palette(i) : s.color;
    o << "<g class=\"series\" data-name=\"" << xml_escape(s.name) << "\">\n";
    if (s.points.size() > 1) {
      o << "<polyline fill=\"none\" stroke=\"" << xml_escape(color)
        << "\" stroke-width=\"2.2\" stroke-linejoin=\"round\" points=\"";
      for (std::size_t k = 0; k < s.points.size(); ++k)
        o << (k ? " " : "") << f1(sc.px(s.points[k].x)) << "," << f1(sc.py(s.points[k].y));
      o << "\"/>\n";
    }
    for (const auto& p : s.points) {
      std::string tip = p.tooltip.empty() ? s.name + ": " + format_number(p.x) + ", " + format_number(p.y) : p.tooltip;
      o << "<circle cx=\"" << f1(sc.px(p.x)) << "\" cy=\"" << f1(sc.py(p.y)) << "\" r=\"3.6\" fill=\""
        << xml_escape(color) << "\" stroke=\"#ffffff\" stroke-width=\"1\"><title>" << xml_escape(tip)
        << "</title></circle>\n";
    }
    o << "</g>\n";
  }
  for (const auto& h : spec.highlights) {
    o << "<circle class=\"highlight\" cx=\"" << f1(sc.px(h.x)) << "\" cy=\"" << f1(sc.py(h.y))
      << "\" r=\"7.5\" fill=\"none\" stroke=\"" << xml_escape(h.color) << "\" stroke-width=\"2\">";
    if (!h.tooltip.empty()) o << "<title>" << xml_escape(h.tooltip) << "</title>";
    o << "</circle>\n";
  }
}

/// Right of the plot: one entry per series, the highlight rings' entry, one per horizontal line.
void line_legend(std::ostringstream& o, const LineChartSpec& spec, const Frame& fr) {
  double lx = fr.right + 16, ly = fr.top + 6;
  o << "<g class=\"legend\">\n";
  for (std::size_t i = 0; i < spec.series.size(); ++i) {
    const std::string color = spec.series[i].color.empty() ? palette(i) : spec.series[i].color;
    double y = ly + 20.0 * static_cast<double>(i);
    o << "<line x1=\"" << f1(lx) << "\" y1=\"" << f1(y) << "\" x2=\"" << f1(lx + 22) << "\" y2=\"" << f1(y)
      << "\" stroke=\"" << xml_escape(color) << "\" stroke-width=\"2.2\"/>";
    o << "<circle cx=\"" << f1(lx + 11) << "\" cy=\"" << f1(y) << "\" r=\"3.6\" fill=\"" << xml_escape(color) << "\"/>";
    o << "<text x=\"" << f1(lx + 30) << "\" y=\"" << f1(y + 4) << "\" fill=\"" << kInk << "\">"
      << xml_escape(spec.series[i].name) << "</text>\n";
  }
  double y = ly + 20.0 * static_cast<double>(spec.series.size()) + 6;
  if (!spec.highlight_legend.empty()) {
    o << "<circle cx=\"" << f1(lx + 11) << "\" cy=\"" << f1(y) << "\" r=\"7\" fill=\"none\" stroke=\"" << kInk
      << "\" stroke-width=\"2\"/><text x=\"" << f1(lx + 30) << "\" y=\"" << f1(y + 4) << "\" fill=\"" << kInk << "\">"
      << xml_escape(spec.highlight_legend) << "</text>\n";
    y += 22;
  }
  for (const auto& h : spec.hlines) {
    o << "<line x1=\"" << f1(lx) << "\" y1=\"" << f1(y) << "\" x2=\"" << f1(lx + 22) << "\" y2=\"" << f1(y)
      << "\" stroke=\"" << xml_escape(h.color) << "\" stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/><text x=\""
      << f1(lx + 30) << "\" y=\"" << f1(y + 4) << "\" fill=\"" << kInk << "\">"
      << xml_escape(h.legend.empty() ? h.label : h.legend) << "</text>\n";
    y += 20;
  }
  o << "</g>\n";
}

}  // namespace

std::string line_chart(const LineChartSpec& spec) {
  std::ostringstream o;
  const bool has_legend = !spec.series.empty();
  double top = open_svg(o, spec.width, spec.height, spec.title, spec.subtitle, spec.id);
  Frame fr;
  fr.left = 72;
  fr.top = top;
  fr.right = spec.width - (has_legend ? 170.0 : 24.0);
  fr.bottom = spec.height - 56.0;
  const LineScale sc = line_scale(spec, fr);
  y_axis(o, fr, sc.y_ticks, 0, sc.y_top, spec.y_label);
  line_x_axis(o, spec, sc);
  frame_box(o, fr);
  line_references(o, spec, sc);
  line_series(o, spec, sc);
  if (has_legend) line_legend(o, spec, fr);
  o << "</svg>\n";
  return o.str();
}

std::string bar_chart(const BarChartSpec& spec) {
  std::ostringstream o;
  double top = open_svg(o, spec.width, spec.height, spec.title, spec.subtitle, spec.id);
  const std::size_t ns = std::max<std::size_t>(spec.series.size(), 1);
  // Long category labels are rotated; leave room for them.
  std::size_t longest = 0;
  for (const auto& g : spec.groups) longest = std::max(longest, g.label.size());
  Frame fr;
  fr.left = 72;
  fr.top = top + (spec.series.size() > 1 ? 14 : 0);
  fr.right = spec.width - 24.0;
  const double band = spec.groups.empty() ? 1 : (fr.right - fr.left) / static_cast<double>(spec.groups.size());
  const bool rotate = static_cast<double>(longest) * 7.0 > band;
  fr.bottom = spec.height - (rotate ? std::min(110.0, 30 + static_cast<double>(longest) * 5.0) : 44.0);

  double y_hi = 0;
  for (const auto& g : spec.groups)
    for (double v : g.values) y_hi = max_or(y_hi, v);
  for (const auto& h : spec.hlines) y_hi = max_or(y_hi, h.y);
  if (y_hi <= 0) y_hi = 1;
  std::vector<double> yt = nice_ticks(0, y_hi * 1.06, 6);
  const double y_top = yt.back();
  auto py = [&](double y) { return fr.bottom - y / y_top * fr.h(); };
  y_axis(o, fr, yt, 0, y_top, spec.y_label);

  if (spec.series.size() > 1) {
    double lx = fr.right;
    o << "<g class=\"legend\">\n";
    for (std::size_t i = spec.series.size(); i-- > 0;) {
      double w = 26 + 7.0 * static_cast<double>(spec.series[i].size());
      lx -= w;
      o << "<rect x=\"" << f1(lx) << "\" y=\"" << f1(top - 8) << "\" width=\"12\" height=\"12\" fill=\"" << palette(i)
        << "\"/><text x=\"" << f1(lx + 16) << "\" y=\"" << f1(top + 2) << "\" fill=\"" << kInk << "\">"
        << xml_escape(spec.series[i]) << "</text>\n";
    }
    o << "</g>\n";
  }

  const double group_w = band * 0.78;
  const double bar_w = group_w / static_cast<double>(ns);
  for (std::size_t gi = 0; gi < spec.groups.size(); ++gi) {
    const auto& g = spec.groups[gi];
    double gx = fr.left + band * static_cast<double>(gi) + (band - group_w) / 2;
    o << "<g class=\"bar-group\" data-label=\"" << xml_escape(g.label) << "\">\n";
    for (std::size_t k = 0; k < g.values.size() && k < ns; ++k) {
      double v = g.values[k];
      if (!std::isfinite(v) || v < 0) continue;
      double y = py(v);
      std::string tip =
          k < g.tooltips.size() && !g.tooltips[k].empty()
              ? g.tooltips[k]
              : g.label + (spec.series.size() > k ? " " + spec.series[k] : "") + ": " + format_number(v, 1);
      o << "<rect x=\"" << f1(gx + bar_w * static_cast<double>(k) + 1) << "\" y=\"" << f1(y) << "\" width=\""
        << f1(std::max(bar_w - 2, 1.0)) << "\" height=\"" << f1(fr.bottom - y) << "\" fill=\"" << palette(k)
        << "\"><title>" << xml_escape(tip) << "</title></rect>\n";
    }
    double cx = fr.left + band * static_cast<double>(gi) + band / 2;
    if (rotate)
      o << "<text x=\"" << f1(cx) << "\" y=\"" << f1(fr.bottom + 14) << "\" text-anchor=\"end\" fill=\"" << kMuted
        << "\" transform=\"rotate(-35 " << f1(cx) << " " << f1(fr.bottom + 14) << ")\">" << xml_escape(g.label)
        << "</text>\n";
    else
      o << "<text x=\"" << f1(cx) << "\" y=\"" << f1(fr.bottom + 18) << "\" text-anchor=\"middle\" fill=\"" << kMuted
        << "\">" << xml_escape(g.label) << "</text>\n";
    o << "</g>\n";
  }
  for (const auto& h : spec.hlines) {
    double y = py(h.y);
    o << "<g class=\"hline\"><line x1=\"" << f1(fr.left) << "\" y1=\"" << f1(y) << "\" x2=\"" << f1(fr.right)
      << "\" y2=\"" << f1(y) << "\" stroke=\"" << xml_escape(h.color)
      << "\" stroke-width=\"1.5\" stroke-dasharray=\"7 4\"/>";
    o << "<text x=\"" << f1(fr.right - 4) << "\" y=\"" << f1(y - 6) << "\" text-anchor=\"end\" font-size=\"11\" fill=\""
      << xml_escape(h.color) << "\">" << xml_escape(h.label) << "</text></g>\n";
  }
  frame_box(o, fr);
  o << "</svg>\n";
  return o.str();
}

std::vector<Bin> histogram_bins(const std::vector<double>& values, int bins, bool log_x) {
  std::vector<Bin> out;
  std::vector<double> xs;
  for (double v : values)
    if (std::isfinite(v) && (!log_x || v > 0)) xs.push_back(log_x ? std::log10(v) : v);
  if (xs.empty() || bins < 1) return out;
  double lo = *std::min_element(xs.begin(), xs.end());
  double hi = *std::max_element(xs.begin(), xs.end());
  if (hi == lo) {
    double d = log_x ? 0.05 : (lo == 0 ? 1 : std::fabs(lo) * 0.05);
    lo -= d;
    hi += d;
  }
  const double step = (hi - lo) / bins;
  out.resize(static_cast<std::size_t>(bins));
  for (int i = 0; i < bins; ++i) {
    double a = lo + step * i, b = lo + step * (i + 1);
    out[i].lo = log_x ? std::pow(10.0, a) : a;
    out[i].hi = log_x ? std::pow(10.0, b) : b;
  }
  for (double x : xs) {
    int i = static_cast<int>((x - lo) / step);
    if (i >= bins) i = bins - 1;
    if (i < 0) i = 0;
    ++out[static_cast<std::size_t>(i)].count;
  }
  return out;
}

std::string histogram(const HistogramSpec& spec) {
  std::ostringstream o;
  double top = open_svg(o, spec.width, spec.height, spec.title, spec.subtitle, spec.id);
  Frame fr;
  fr.left = 72;
  fr.top = top;
  fr.right = spec.width - 24.0;
  fr.bottom = spec.height - 56.0;
  std::vector<Bin> bins = histogram_bins(spec.values, spec.bins, spec.log_x);
  std::size_t max_count = 1;
  for (const auto& b : bins) max_count = std::max(max_count, b.count);
  std::vector<double> yt = nice_ticks(0, static_cast<double>(max_count) * 1.06, 5);
  const double y_top = yt.back();
  auto py = [&](double y) { return fr.bottom - y / y_top * fr.h(); };
  y_axis(o, fr, yt, 0, y_top, "trials");
  if (!bins.empty()) {
    auto tx = [&](double v) { return spec.log_x ? std::log10(v) : v; };
    const double a = tx(bins.front().lo), b = tx(bins.back().hi);
    auto px = [&](double v) { return fr.left + (tx(v) - a) / (b - a) * fr.w(); };
    o << "<g class=\"bins\">\n";
    for (const auto& bin : bins) {
      if (bin.count == 0) continue;
      double x0 = px(bin.lo), x1 = px(bin.hi), y = py(static_cast<double>(bin.count));
      o << "<rect x=\"" << f1(x0 + 0.5) << "\" y=\"" << f1(y) << "\" width=\"" << f1(std::max(x1 - x0 - 1, 1.0))
        << "\" height=\"" << f1(fr.bottom - y) << "\" fill=\"" << palette(0) << "\"><title>"
        << xml_escape(format_number(bin.lo, 2) + " - " + format_number(bin.hi, 2) + ": " + std::to_string(bin.count) +
                      " trials")
        << "</title></rect>\n";
    }
    o << "</g>\n";
    // x ticks: 1-2-5 decades on a log axis, nice ticks otherwise.
    std::vector<double> xt;
    if (spec.log_x) {
      for (double e = std::floor(a); e <= std::ceil(b); e += 1)
        for (double m : {1.0, 2.0, 5.0}) {
          double v = m * std::pow(10.0, e);
          if (tx(v) >= a - 1e-9 && tx(v) <= b + 1e-9) xt.push_back(v);
        }
      if (xt.size() < 2) xt = {bins.front().lo, bins.back().hi};
    } else {
      xt = nice_ticks(bins.front().lo, bins.back().hi, 7);
    }
    o << "<g class=\"x-axis\">\n";
    for (double t : xt) {
      double x = px(t);
      if (x < fr.left - 0.5 || x > fr.right + 0.5) continue;
      o << "<line x1=\"" << f1(x) << "\" y1=\"" << f1(fr.bottom) << "\" x2=\"" << f1(x) << "\" y2=\""
        << f1(fr.bottom + 5) << "\" stroke=\"" << kAxis << "\"/><text x=\"" << f1(x) << "\" y=\"" << f1(fr.bottom + 18)
        << "\" text-anchor=\"middle\" fill=\"" << kMuted << "\">" << xml_escape(format_number(t, 1)) << "</text>\n";
    }
    o << "</g>\n";
  }
  if (!spec.x_label.empty())
    o << "<text x=\"" << f1((fr.left + fr.right) / 2) << "\" y=\"" << f1(fr.bottom + 42)
      << "\" text-anchor=\"middle\" fill=\"" << kInk << "\">" << xml_escape(spec.x_label) << "</text>\n";
  frame_box(o, fr);
  o << "</svg>\n";
  return o.str();
}

}  // namespace autotune::report
