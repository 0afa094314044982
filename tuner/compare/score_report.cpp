// The methodology score's CSV, table and SVG curve (score.hpp).
#include <cstdio>
#include <string>
#include <vector>

#include "tuner/compare/score.hpp"
#include "tuner/report/svg.hpp"

namespace autotune::compare {

namespace {

std::string num(double v, const char* f = "%.6g") {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string pad(const std::string& s, std::size_t w) { return s.size() >= w ? s : s + std::string(w - s.size(), ' '); }

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string score_csv(const std::vector<SpaceScore>& spaces, const std::vector<AggregateScore>& all, bool curves) {
  std::string out;
  if (curves) {
    out = "space,strategy,point,time_s,fraction,best_ns,random_ns,normalised\n";
    for (const auto& sp : spaces)
      for (const auto& st : sp.strategies)
        for (std::size_t j = 0; j < st.curve.size(); ++j)
          out += csv_field(sp.label) + "," + st.strategy + "," + std::to_string(j) + "," + num(sp.times_s[j]) + "," +
                 num(static_cast<double>(j) / static_cast<double>(st.curve.size() - 1)) + "," + num(st.best_ns[j]) +
                 "," + num(sp.random_ns[j]) + "," + num(st.curve[j]) + "\n";
    for (const auto& a : all)
      for (std::size_t j = 0; j < a.curve.size(); ++j)
        out += "all," + a.strategy + "," + std::to_string(j) + ",," +
               num(static_cast<double>(j) / static_cast<double>(a.curve.size() - 1)) + ",,," + num(a.curve[j]) + "\n";
    return out;
  }
  out = "space,strategy,score,score_se,runs,evaluations,start_s,end_s,evals_start,evals_end,optimum_ns\n";
  for (const auto& sp : spaces)
    for (const auto& st : sp.strategies)
      out += csv_field(sp.label) + "," + st.strategy + "," + num(st.score) + "," + num(st.score_se) + "," +
             std::to_string(st.runs) + "," + num(st.evaluations) + "," + num(sp.base.start_s) + "," +
             num(sp.base.end_s) + "," + std::to_string(sp.base.evals_start) + "," + std::to_string(sp.base.evals_end) +
             "," + num(sp.base.optimum) + "\n";
  for (const auto& a : all) out += "all," + a.strategy + "," + num(a.score) + "," + num(a.score_se) + ",,,,,,,\n";
  return out;
}

std::string score_table(const std::vector<SpaceScore>& spaces, const std::vector<AggregateScore>& all, bool markdown) {
  std::string out;
  const std::string sep = markdown ? " | " : "  ";
  out += markdown ? "| strategy" : pad("strategy", 24);
  for (std::size_t i = 0; i < spaces.size(); ++i)
    out += sep + (markdown ? "space " + std::to_string(i + 1) : pad("space " + std::to_string(i + 1), 15));
  out += sep + "all" + (markdown ? " |\n|---" : "\n");
  if (markdown) {
    for (std::size_t i = 0; i <= spaces.size(); ++i) out += "|---:";
    out += "|\n";
  }
  for (const auto& a : all) {
    out += markdown ? "| " + a.strategy : pad(a.strategy, 24);
    for (const auto& sp : spaces) {
      std::string cell = "-";
      for (const auto& st : sp.strategies)
        if (st.strategy == a.strategy) cell = num(st.score, "%+.3f") + " ± " + num(st.score_se, "%.3f");
      out += sep + (markdown ? cell : pad(cell, 15));
    }
    out += sep + num(a.score, "%+.3f") + " ± " + num(a.score_se, "%.3f") + (markdown ? " |\n" : "\n");
  }
  out +=
      "\nspaces (time range: where random search expects to reach 1% and the end cutoff of the way from the "
      "median to the optimum):\n";
  for (std::size_t i = 0; i < spaces.size(); ++i) {
    const TimeBaseline& b = spaces[i].base;
    out += (markdown ? "- " : "  ") + std::string("space ") + std::to_string(i + 1) + ": " + spaces[i].label + ", " +
           std::to_string(b.sorted.size()) + " configurations ran, " + num(b.start_s, "%.3g") + " s to " +
           num(b.end_s, "%.3g") + " s (" + std::to_string(b.evals_start) + " to " + std::to_string(b.evals_end) +
           " evaluations of " + num(b.median_cost_s * 1e3, "%.3g") + " ms)\n";
  }
  return out;
}

std::string score_svg(const std::vector<SpaceScore>& spaces, const std::vector<AggregateScore>& all) {
  report::LineChartSpec spec;
  spec.title = "Methodology score: best-so-far over tuning time, normalised";
  spec.subtitle = std::to_string(spaces.size()) + " space(s); 0 = random search's expected curve, 1 = the optimum";
  spec.x_label = "share of the time range";
  spec.y_label = "normalised best-so-far";
  for (const auto& a : all) {
    report::Series s;
    s.name = a.strategy + " (" + num(a.score, "%+.3f") + ")";
    const std::size_t n = a.curve.size();
    const std::size_t step = n > 200 ? n / 200 : 1;
    for (std::size_t j = 0; j < n; j += step)
      s.points.push_back({static_cast<double>(j) / static_cast<double>(n - 1), a.curve[j], ""});
    spec.series.push_back(std::move(s));
  }
  spec.hlines.push_back({0.0, "random search", "#6b7280", "random search (0)", true});
  spec.hlines.push_back({1.0, "optimum", "#111827", "optimum (1)", true});
  return report::line_chart(spec);
}

}  // namespace autotune::compare
