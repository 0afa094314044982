// The energy/performance trade-off as a chart: GB/s against board power, one line per group (e.g. block
// size), the fastest and the most frugal point ringed. Used by the HTML report and `autotune explore
// --power-plot` (docs/observers.md).
#pragma once
#include <string>
#include <vector>

namespace autotune::report {

struct PowerPoint {
  double power_w = 0;    // mean board power while running, W
  double gbps = 0;       // bandwidth, GB/s
  double energy_j = 0;   // energy per run, J (0 = unknown)
  std::string group;     // line it belongs to, e.g. "256 threads"
  std::string label;     // the configuration, for the tooltip
};

struct PowerChartSpec {
  std::string title;
  std::string subtitle;
  std::string id = "power-chart";
  std::vector<PowerPoint> points;  // points without power (<= 0) or bandwidth are left out
  int width = 1020;
  int height = 460;
};

/// SVG (report::line_chart): x = power in W, y = GB/s; lines in the order the groups first appear, points
/// of a line ordered by power; rings on the highest GB/s ("fastest") and the lowest energy per run ("least
/// energy"; the highest GB/s per W where no energy is known). "" when no point qualifies.
std::string power_chart_svg(const PowerChartSpec& spec);

}  // namespace autotune::report
