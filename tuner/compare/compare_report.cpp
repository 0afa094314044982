// Output of the strategy benchmark: CSV (summary rows with standard errors, per-run rows) and the text or
// Markdown table with the comparison against random_sample and the strategies' decision times.
#include <algorithm>
#include <cstdio>
#include <sstream>

#include "tuner/compare/compare.hpp"
#include "tuner/core/text.hpp"

namespace autotune::compare {

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

/// "5" for 0.05, "2.5" for 0.025.
std::string percent_label(double share) { return fmt("%g", share * 100); }

/// "*" when the row beats random_sample by two standard errors, "-" when it loses by as much, "" otherwise.
const char* mark(const CompareRow& row) { return row.vs_random > 0 ? "*" : (row.vs_random < 0 ? "-" : ""); }

std::string context_header(const std::vector<std::pair<std::string, std::string>>& context) {
  std::string out;
  for (const auto& [k, v] : context) out += csv_field(k) + ",";
  return out;
}

std::string context_values(const std::vector<std::pair<std::string, std::string>>& context) {
  std::string out;
  for (const auto& [k, v] : context) out += csv_field(v) + ",";
  return out;
}

const DecisionTime* decision_of(const CompareResult& r, const std::string& strategy) {
  for (const auto& d : r.decisions)
    if (d.strategy == strategy) return &d;
  return nullptr;
}

/// "12.3 us", "4.56 ms", "1.20 s".
std::string duration_us(double us) {
  if (us < 1000) return fmt("%.3g us", us);
  if (us < 1e6) return fmt("%.3g ms", us * 1e-3);
  return fmt("%.3g s", us * 1e-6);
}

}  // namespace

std::string compare_csv(const CompareResult& r, const std::vector<std::pair<std::string, std::string>>& context) {
  std::ostringstream os;
  os << context_header(context)
     << "space_size,optimum_ns,strategy,budget,budget_percent,repeats,median,p10,p90,mean,mean_se,within_threshold,"
        "within,within_se,";
  for (double t : r.thresholds) os << "within_" << percent_label(t) << "pct,";
  os << "found_optimum,found_optimum_se,vs_random,mean_evaluations,decision_mean_us,decision_p99_us,decision_max_us,"
        "warm_trust,warm_trusted\n";
  for (const auto& row : r.rows) {
    const DecisionTime* d = decision_of(r, row.strategy);
    os << context_values(context) << r.space_size << "," << fmt("%.6g", r.optimum_ns) << ","
       << csv_field(row.strategy) << "," << row.budget << "," << fmt("%.4g", row.budget_percent) << ","
       << row.repeats << "," << fmt("%.6f", row.median) << "," << fmt("%.6f", row.p10) << ","
       << fmt("%.6f", row.p90) << "," << fmt("%.6f", row.mean) << "," << fmt("%.6f", row.mean_se) << ","
       << fmt("%g", r.within) << "," << fmt("%.4f", row.within) << "," << fmt("%.4f", row.within_se) << ",";
    for (double w : row.within_at) os << fmt("%.4f", w) << ",";
    os << fmt("%.4f", row.found) << "," << fmt("%.4f", row.found_se) << "," << row.vs_random << ","
       << fmt("%.2f", row.mean_evaluations) << "," << fmt("%.3f", d ? d->mean_us : 0) << ","
       << fmt("%.3f", d ? d->p99_us : 0) << "," << fmt("%.3f", d ? d->max_us : 0) << "," << fmt("%.3f", row.warm_trust)
       << "," << fmt("%.3f", row.warm_trusted) << "\n";
  }
  return os.str();
}

std::string compare_runs_csv(const CompareResult& r,
                             const std::vector<std::pair<std::string, std::string>>& context) {
  std::ostringstream os;
  os << context_header(context) << "strategy,budget,seed,best_ns,score,evaluations\n";
  for (const auto& run : r.runs)
    os << context_values(context) << csv_field(run.strategy) << "," << run.budget << "," << run.seed << ","
       << fmt("%.6g", run.best_ns) << "," << fmt("%.6f", run.score) << "," << run.evaluations << "\n";
  return os.str();
}

std::string compare_table(const CompareResult& r, bool markdown) {
  std::ostringstream os;
  const std::string wlabel = "within " + percent_label(r.within) + "%";
  const std::size_t repeats = r.rows.empty() ? 0 : r.rows.front().repeats;
  std::vector<std::string> names;
  for (const auto& row : r.rows)
    if (std::find(names.begin(), names.end(), row.strategy) == names.end()) names.push_back(row.strategy);
  auto find = [&](const std::string& s, std::size_t b) -> const CompareRow* {
    for (const auto& row : r.rows)
      if (row.strategy == s && row.budget == b) return &row;
    return nullptr;
  };
  if (markdown) {
    os << "| strategy |";
    for (std::size_t b : r.budgets)
      os << " " << b << " evals (" << fmt("%.3g", 100.0 * static_cast<double>(b) / static_cast<double>(r.space_size))
         << "%) |";
    os << " decision mean / p99 / max |\n|---|";
    for (std::size_t i = 0; i <= r.budgets.size(); ++i) os << "---|";
    os << "\n";
    for (const auto& n : names) {
      os << "| " << (n == "random_sample" ? "random_sample (baseline)" : n) << " |";
      for (std::size_t b : r.budgets) {
        const CompareRow* row = find(n, b);
        if (!row) {
          os << " - |";
          continue;
        }
        os << " " << fmt("%.3f", row->median) << " (" << fmt("%.3f", row->p10) << "-" << fmt("%.3f", row->p90)
           << "), " << fmt("%.1f", row->within * 100) << "±" << fmt("%.1f", row->within_se * 100) << "%"
           << mark(*row) << ", " << fmt("%.0f", row->found * 100) << "% |";
      }
      const DecisionTime* d = decision_of(r, n);
      os << " " << (d ? duration_us(d->mean_us) + " / " + duration_us(d->p99_us) + " / " + duration_us(d->max_us) : "-")
         << " |\n";
    }
    os << "\nEach cell: median (10th-90th percentile) of optimum time / best found time over " << repeats
       << " seeds; share of runs " << wlabel << " of the optimum ± its standard error (* = above random_sample's"
       << " by at least two standard errors of the difference, - = below by as much); share of runs that found the"
       << " optimum. Decision: time of one step of the strategy (propose + observe) over every step of every run.\n";
    return os.str();
  }
  for (std::size_t b : r.budgets) {
    const CompareRow* base = find("random_sample", b);
    os << "budget " << b << " evaluations ("
       << fmt("%.3g", 100.0 * static_cast<double>(b) / static_cast<double>(r.space_size)) << "% of " << r.space_size
       << "), " << (base ? base->repeats : 0) << " runs each\n";
    char line[512];
    std::snprintf(line, sizeof line, "  %-24s %7s %7s %7s %15s", "strategy", "median", "p10", "p90", "mean +- se");
    os << line;
    for (double t : r.thresholds) {
      std::snprintf(line, sizeof line, " %6s", ("<" + percent_label(t) + "%").c_str());
      os << line;
    }
    std::snprintf(line, sizeof line, " %16s %8s %11s\n", (wlabel + " +- se").c_str(), "optimum", "vs random");
    os << line;
    for (const auto& n : names) {
      const CompareRow* row = find(n, b);
      if (!row) continue;
      std::string vs = "baseline";
      if (n != "random_sample" && base) vs = fmt("%+.3f", row->median - base->median);
      std::snprintf(line, sizeof line, "  %-24s %7.3f %7.3f %7.3f %7.4f+-%.4f", n.c_str(), row->median, row->p10,
                    row->p90, row->mean, row->mean_se);
      os << line;
      for (double w : row->within_at) os << fmt(" %5.1f%%", w * 100);
      std::snprintf(line, sizeof line, " %8.1f+-%4.1f%%%-1s %7.0f%% %11s\n", row->within * 100, row->within_se * 100,
                    mark(*row), row->found * 100, vs.c_str());
      os << line;
    }
    os << "\n";
  }
  os << "decision time per step (propose + observe), over every step of every run:\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-24s %8s %10s %10s %10s %10s\n", "strategy", "steps", "mean", "p99", "max",
                "all runs");
  os << line;
  for (const auto& d : r.decisions) {
    std::snprintf(line, sizeof line, "  %-24s %8zu %10s %10s %10s %10s\n", d.strategy.c_str(), d.steps,
                  duration_us(d.mean_us).c_str(), duration_us(d.p99_us).c_str(), duration_us(d.max_us).c_str(),
                  duration_us(d.wall_s * 1e6).c_str());
    os << line;
  }
  os << "\nscore = optimum time / best found time (1.000 = optimum found); <x% = share of runs within x% of the\n"
        "optimum; optimum = share of runs that found it; * after a share: above random_sample's by at least two\n"
        "standard errors of the difference (- below by as much); vs random = median score minus random_sample's\n";
  return os.str();
}

}  // namespace autotune::compare
