// Small self-contained SVG charts (line chart with a log2 x axis, grouped bar chart, histogram) for the
// explore plot and the HTML report. Output is a standalone, well-formed <svg> element (usable as a file or
// inline in HTML): no scripts, no external fonts or styles, tooltips as <title> elements.
// Pure functions; thread-safe.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace autotune::report {

/// Escapes & < > " ' for XML text and attribute values.
std::string xml_escape(const std::string& s);

/// Colour i of a fixed colour-blind-friendly palette (cycles).
std::string palette(std::size_t i);

/// "Nice" tick values covering [lo, hi] with about `target` ticks (1-2-5 steps). Empty if hi < lo.
std::vector<double> nice_ticks(double lo, double hi, int target);

/// Number formatting for axis labels: at most `max_decimals` decimals, trailing zeros removed.
std::string format_number(double v, int max_decimals = 2);

struct LinePoint {
  double x = 0;
  double y = 0;
  std::string tooltip;  // shown on hover (<title>); empty = "x, y"
};

struct Series {
  std::string name;
  std::vector<LinePoint> points;  // drawn in the order given
  std::string color;              // empty = palette
};

struct HLine {
  double y = 0;
  std::string label;                 // drawn on the line
  std::string color = "#6b7280";
  std::string legend;                // legend entry (line charts); empty = label
  bool label_left = false;           // label at the left end of the line instead of the right
};

struct VLine {
  double x = 0;
  std::string label;
  std::string color = "#9ca3af";
};

/// A point to emphasise (drawn as a ring on top of the series).
struct Highlight {
  double x = 0;
  double y = 0;
  std::string color = "#111827";
  std::string tooltip;
};

struct LineChartSpec {
  std::string title;
  std::string subtitle;
  std::string x_label;
  std::string y_label;
  bool log2_x = false;               // x axis in log2 scale (x must be > 0)
  std::vector<double> x_ticks;       // empty = automatic
  std::vector<Series> series;
  std::vector<HLine> hlines;         // reference lines (e.g. the copy bandwidth)
  std::vector<VLine> vlines;         // e.g. "2 x SMs"
  std::vector<Highlight> highlights;
  std::string highlight_legend;      // legend entry for the rings ("" = none)
  int width = 820;
  int height = 460;
  std::string id;                    // optional id attribute of the <svg>
};

/// Throws std::invalid_argument for a log2 x axis with x <= 0, or a size below 200 x 150.
std::string line_chart(const LineChartSpec& spec);

struct BarGroup {
  std::string label;                 // category on the x axis
  std::vector<double> values;        // one per series name (NaN or < 0 = missing)
  std::vector<std::string> tooltips; // optional, one per value
};

struct BarChartSpec {
  std::string title;
  std::string subtitle;
  std::string y_label;
  std::vector<std::string> series;   // e.g. {"best", "median"}
  std::vector<BarGroup> groups;
  std::vector<HLine> hlines;
  int width = 820;
  int height = 320;
  std::string id;
};

std::string bar_chart(const BarChartSpec& spec);

struct HistogramSpec {
  std::string title;
  std::string subtitle;
  std::string x_label;
  std::vector<double> values;        // samples (> 0 when log_x)
  int bins = 30;
  bool log_x = false;                // bins of equal width in log10(x)
  int width = 820;
  int height = 320;
  std::string id;
};

/// Bins of the histogram as [lo, hi) edges with counts (exposed for tests).
struct Bin {
  double lo = 0, hi = 0;
  std::size_t count = 0;
};
std::vector<Bin> histogram_bins(const std::vector<double>& values, int bins, bool log_x);

std::string histogram(const HistogramSpec& spec);

}  // namespace autotune::report
