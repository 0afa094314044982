#include "tuner/report/power_chart.hpp"

#include <algorithm>
#include <cstdio>

#include "tuner/report/svg.hpp"

namespace autotune::report {

namespace {

std::string tooltip(const PowerPoint& p) {
  char buf[160];
  std::snprintf(buf, sizeof buf, ": %.1f GB/s at %.1f W (%.2f GB/s per W", p.gbps, p.power_w, p.gbps / p.power_w);
  std::string out = p.label + buf;
  if (p.energy_j > 0) {
    std::snprintf(buf, sizeof buf, ", %.3g mJ per run", p.energy_j * 1e3);
    out += buf;
  }
  return out + ")";
}

}  // namespace

std::string power_chart_svg(const PowerChartSpec& spec) {
  std::vector<PowerPoint> pts;
  for (const auto& p : spec.points)
    if (p.power_w > 0 && p.gbps > 0) pts.push_back(p);
  if (pts.empty()) return "";
  LineChartSpec c;
  c.id = spec.id;
  c.title = spec.title;
  c.subtitle = spec.subtitle;
  c.x_label = "board power while running (W)";
  c.y_label = "GB/s";
  c.width = spec.width;
  c.height = spec.height;
  std::vector<std::string> groups;
  for (const auto& p : pts)
    if (std::find(groups.begin(), groups.end(), p.group) == groups.end()) groups.push_back(p.group);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    Series s;
    s.name = groups[g];
    s.color = palette(g);
    std::vector<const PowerPoint*> mine;
    for (const auto& p : pts)
      if (p.group == groups[g]) mine.push_back(&p);
    std::sort(mine.begin(), mine.end(), [](auto* a, auto* b) { return a->power_w < b->power_w; });
    for (const auto* p : mine) s.points.push_back({p->power_w, p->gbps, tooltip(*p)});
    c.series.push_back(std::move(s));
  }
  const auto fastest = std::max_element(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.gbps < b.gbps; });
  const bool energies = std::all_of(pts.begin(), pts.end(), [](auto& p) { return p.energy_j > 0; });
  const auto frugal =
      energies ? std::min_element(pts.begin(), pts.end(), [](auto& a, auto& b) { return a.energy_j < b.energy_j; })
               : std::max_element(pts.begin(), pts.end(),
                                  [](auto& a, auto& b) { return a.gbps / a.power_w < b.gbps / b.power_w; });
  c.highlights.push_back({fastest->power_w, fastest->gbps, "#111827", "fastest: " + tooltip(*fastest)});
  c.highlights.push_back({frugal->power_w, frugal->gbps, "#b91c1c", "least energy: " + tooltip(*frugal)});
  c.highlight_legend = "fastest, least energy";
  return line_chart(c);
}

}  // namespace autotune::report
