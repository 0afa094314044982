#include "tuner/explore/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

namespace autotune::explore {

namespace {

std::string pct(double ratio) { return format_fixed(100.0 * ratio, 1) + "%"; }

std::string num(double v) {
  // Integers without decimals (thresholds are observed integers or their products).
  if (std::fabs(v - std::round(v)) < 1e-9) return std::to_string(static_cast<long long>(std::llround(v)));
  return format_fixed(v, 1);
}

std::string point_name(const VerdictPoint& p) {
  if (p.blocks_per_sm > 0) return std::to_string(p.block_size) + " x " + std::to_string(p.blocks_per_sm);
  return std::to_string(p.block_size) + " threads";
}

double feature(const VerdictPoint& p, Rule::Kind k) {
  switch (k) {
    case Rule::Kind::threads_per_sm: return p.threads_per_sm;
    case Rule::Kind::blocks_per_sm: return static_cast<double>(p.blocks_per_sm);
    case Rule::Kind::block_size: return static_cast<double>(p.block_size);
    default: return 0;
  }
}

/// Best threshold of one kind: fewest misclassified points, then the smallest threshold.
Rule fit_threshold(const std::vector<const VerdictPoint*>& ok, const std::vector<bool>& at_peak, Rule::Kind kind) {
  std::set<double> candidates;
  for (const auto* p : ok) candidates.insert(feature(*p, kind));
  Rule best;
  best.kind = kind;
  best.total = ok.size();
  bool have = false;
  for (double t : candidates) {
    if (t <= 0) continue;
    std::size_t agree = 0, above = 0;
    for (std::size_t i = 0; i < ok.size(); ++i) {
      bool pred = feature(*ok[i], kind) >= t;
      above += pred ? 1 : 0;
      agree += pred == at_peak[i] ? 1 : 0;
    }
    if (above == ok.size() || above == 0) continue;  // not a rule: one side is empty
    if (!have || agree > best.agree) {
      have = true;
      best.threshold = t;
      best.agree = agree;
      best.above = above;
    }
  }
  if (!have) {
    best.kind = Rule::Kind::none;
    return best;
  }
  for (std::size_t i = 0; i < ok.size(); ++i) {
    double x = feature(*ok[i], kind);
    bool pred = x >= best.threshold;
    if (!at_peak[i] && x < best.threshold) best.below = std::max(best.below, x);
    if (pred != at_peak[i]) best.exceptions.push_back(point_name(*ok[i]));
  }
  return best;
}

}  // namespace

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

const char* to_string(Rule::Kind k) {
  switch (k) {
    case Rule::Kind::none: return "none";
    case Rule::Kind::all_at_peak: return "all_at_peak";
    case Rule::Kind::threads_per_sm: return "threads_per_sm";
    case Rule::Kind::blocks_per_sm: return "blocks_per_sm";
    case Rule::Kind::block_size: return "block_size";
  }
  return "none";
}

namespace {

/// The best measured point into v, and its line.
void find_best(Verdict& v, const std::vector<const VerdictPoint*>& ok, bool has_grid) {
  for (const auto* p : ok)
    if (p->gbps > v.best_gbps) {
      v.best_gbps = p->gbps;
      v.best_block_size = p->block_size;
      v.best_blocks_per_sm = p->blocks_per_sm;
    }
  std::string where = std::to_string(v.best_block_size) + " threads per block";
  if (has_grid) where += " x " + std::to_string(v.best_blocks_per_sm) + " x SMs";
  v.lines.push_back("best: " + format_fixed(v.best_gbps, 1) + " GB/s at " + where + " (" + std::to_string(ok.size()) +
                    " points measured)");
}

/// How 2 x SMs compares with the best grid at block size bs (best_gbps: the overall best).
BlockVerdict block_verdict(const std::vector<VerdictPoint>& points, Value bs, double best_gbps) {
  BlockVerdict b;
  b.block_size = bs;
  const VerdictPoint* two = nullptr;
  for (const auto& p : points) {
    if (p.block_size != bs) continue;
    if (p.blocks_per_sm == 2) two = &p;
    if (!p.ok || p.gbps <= 0) continue;
    ++b.measured;
    if (p.gbps > b.best_gbps) {
      b.best_gbps = p.gbps;
      b.best_blocks_per_sm = p.blocks_per_sm;
    }
  }
  const std::string head = "at " + std::to_string(bs) + " threads: ";
  if (b.measured == 0) {
    b.two_x_state = "no point of this block size was measured";
    b.text = head + b.two_x_state;
  } else if (!two) {
    b.two_x_state = "not in the sweep";
    b.text = head + "2 x SMs is not in the sweep; the best grid is " + std::to_string(b.best_blocks_per_sm) +
             " x SMs (" + format_fixed(b.best_gbps, 1) + " GB/s)";
  } else if (!two->ok || two->gbps <= 0) {
    b.two_x_state = two->state.empty() ? "not measured" : two->state;
    b.text = head + "2 x SMs was not measured (" + b.two_x_state + "); the best grid is " +
             std::to_string(b.best_blocks_per_sm) + " x SMs (" + format_fixed(b.best_gbps, 1) + " GB/s)";
  } else {
    b.two_x_measured = true;
    b.two_x_state = "measured";
    b.two_x_gbps = two->gbps;
    b.two_x_ratio = two->gbps / b.best_gbps;
    if (b.best_blocks_per_sm == 2) {
      b.text = head + "2 x SMs is the best grid (" + format_fixed(b.best_gbps, 1) + " GB/s)";
    } else {
      b.text = head + "2 x SMs reaches " + pct(b.two_x_ratio) + " of the best grid (" +
               std::to_string(b.best_blocks_per_sm) + " x SMs, " + format_fixed(b.best_gbps, 1) + " GB/s)";
    }
    b.text += "; " + pct(two->gbps / best_gbps) + " of the overall best";
  }
  return b;
}

/// The summary over block sizes: where 2 x SMs is within the tolerance (two_x_ok) and where below (two_x_off).
std::string two_x_summary(const Verdict& v, const std::vector<Value>& two_x_ok,
                          const std::vector<std::string>& two_x_off, const std::string& tol_text) {
  std::size_t judged = two_x_ok.size() + two_x_off.size();
  if (judged == 0) return "2 x SMs could not be judged: it was not measured at any block size";
  std::string oks;
  for (Value bs : two_x_ok) oks += (oks.empty() ? "" : ", ") + std::to_string(bs);
  std::string s = "2 x SMs is within " + tol_text + " of the best grid at " + std::to_string(two_x_ok.size()) +
                  " of " + std::to_string(judged) + " block sizes" + (oks.empty() ? "" : " (" + oks + ")");
  if (!two_x_off.empty()) {
    std::string offs;
    for (const auto& o : two_x_off) offs += (offs.empty() ? "" : ", ") + o;
    s += "; below it at " + offs;
  }
  if (two_x_off.empty()) return s + ": on this GPU and kernel the 2 x SMs rule holds for every block size measured";
  if (two_x_ok.empty()) return s + ": on this GPU and kernel the 2 x SMs rule does not hold at any block size measured";
  Value min_ok = *std::min_element(two_x_ok.begin(), two_x_ok.end());
  bool larger_only = true;
  for (const auto& b : v.blocks)
    if (b.two_x_measured && b.two_x_ratio < 1 - v.tolerance && b.block_size > min_ok) larger_only = false;
  return s + (larger_only
                  ? ": the 2 x SMs rule holds here only from " + std::to_string(min_ok) + " threads per block up"
                  : ": the 2 x SMs rule holds here only at some block sizes, with no pattern in "
                    "the block size");
}

/// One verdict per block size (in order of first appearance), then the summary.
void judge_two_x(Verdict& v, const std::vector<VerdictPoint>& points, const std::string& tol_text) {
  std::vector<Value> order;
  for (const auto& p : points)
    if (std::find(order.begin(), order.end(), p.block_size) == order.end()) order.push_back(p.block_size);
  std::vector<Value> two_x_ok;
  std::vector<std::string> two_x_off;
  for (Value bs : order) {
    BlockVerdict b = block_verdict(points, bs, v.best_gbps);
    if (b.two_x_measured) {
      if (b.two_x_ratio >= 1 - v.tolerance) two_x_ok.push_back(bs);
      else two_x_off.push_back(std::to_string(bs) + ": " + pct(b.two_x_ratio));
    }
    v.lines.push_back(b.text);
    v.blocks.push_back(std::move(b));
  }
  v.two_x_summary = two_x_summary(v, two_x_ok, two_x_off, tol_text);
  v.lines.push_back(v.two_x_summary);
}

/// The threshold rule (threads per SM, then blocks per SM, then block size) that classifies most points.
Rule best_threshold(const std::vector<const VerdictPoint*>& ok, const std::vector<bool>& at_peak, bool has_grid) {
  Rule r;
  r.total = ok.size();
  std::vector<Rule::Kind> kinds = {Rule::Kind::threads_per_sm};
  if (has_grid) kinds.push_back(Rule::Kind::blocks_per_sm);
  kinds.push_back(Rule::Kind::block_size);
  bool have = false;
  for (auto k : kinds) {
    Rule cand = fit_threshold(ok, at_peak, k);
    if (cand.kind == Rule::Kind::none) continue;
    if (!have || cand.agree > r.agree) {  // ties keep the earlier (preferred) kind
      r = cand;
      have = true;
    }
  }
  if (!have) r.kind = Rule::Kind::none;
  return r;
}

/// Rule::fits and Rule::text of a threshold rule found by best_threshold().
void describe_rule(Rule& r, double best_gbps, const std::string& tol_text, int max_threads_per_sm) {
  const std::size_t errors = r.total - r.agree;
  const std::size_t allowed = std::max<std::size_t>(1, r.total / 10);
  r.fits = errors <= allowed;
  std::string what, unit;
  switch (r.kind) {
    case Rule::Kind::threads_per_sm: what = "blocks_per_sm x block_size >= "; unit = " threads per SM"; break;
    case Rule::Kind::blocks_per_sm: what = "the grid is at least "; unit = " x SMs (any block size)"; break;
    default: what = "the block size is at least "; unit = " threads (any grid)"; break;
  }
  std::string rule = "peak (within " + tol_text + " of " + format_fixed(best_gbps, 1) + " GB/s) is reached once " +
                     what + num(r.threshold) + unit;
  if (r.kind == Rule::Kind::threads_per_sm && max_threads_per_sm > 0)
    rule += " (" + num(100.0 * r.threshold / max_threads_per_sm) + "% of the " + std::to_string(max_threads_per_sm) +
            " an SM can hold)";
  std::string evidence = std::to_string(r.above) + " points at or above the threshold, " +
                         std::to_string(r.total - r.above) + " below";
  if (r.below > 0) evidence += "; the data place the threshold between " + num(r.below) + " and " + num(r.threshold);
  std::string exc;
  for (std::size_t i = 0; i < r.exceptions.size() && i < 8; ++i) exc += (i ? ", " : "") + r.exceptions[i];
  if (r.exceptions.size() > 8) exc += ", ...";
  if (errors == 0) {
    r.text = "rule: " + rule + ". It fits all " + std::to_string(r.total) + " measured points (" + evidence + ")";
  } else if (r.fits) {
    r.text = "rule: " + rule + ". It fits " + std::to_string(r.agree) + " of " + std::to_string(r.total) +
             " measured points (" + evidence + "); exceptions: " + exc;
  } else {
    r.text = "no simple rule fits: the best threshold rule (" + rule + ") misclassifies " + std::to_string(errors) +
             " of " + std::to_string(r.total) + " points (" + exc + ")";
  }
}

/// v.rule: the rule that tells the points at peak (within the tolerance of the best) from the others.
void derive_rule(Verdict& v, const std::vector<const VerdictPoint*>& ok, bool has_grid, const std::string& tol_text,
                 int max_threads_per_sm) {
  std::vector<bool> at_peak;
  std::size_t peak_count = 0;
  for (const auto* p : ok) {
    at_peak.push_back(p->gbps >= (1 - v.tolerance) * v.best_gbps);
    peak_count += at_peak.back() ? 1 : 0;
  }
  Rule& r = v.rule;
  r.total = ok.size();
  if (ok.size() < 3) {
    r.kind = Rule::Kind::none;
    r.text = "too few points measured (" + std::to_string(ok.size()) + ") to derive a rule";
  } else if (peak_count == ok.size()) {
    r.kind = Rule::Kind::all_at_peak;
    r.agree = ok.size();
    r.fits = true;
    r.text = "every measured point is within " + tol_text + " of the best: the launch geometry swept here does not "
             "matter for this kernel on this GPU";
  } else if (Rule found = best_threshold(ok, at_peak, has_grid); found.kind == Rule::Kind::none) {
    r.kind = Rule::Kind::none;
    r.total = ok.size();
    r.text = "no simple rule fits: no threshold on threads per SM, blocks per SM or block size separates the "
             "points within " + tol_text + " of the best from the others";
  } else {
    r = found;
    describe_rule(r, v.best_gbps, tol_text, max_threads_per_sm);
  }
  v.lines.push_back(r.text);
}

}  // namespace

Verdict make_verdict(const std::vector<VerdictPoint>& points, double tolerance, int max_threads_per_sm) {
  if (!(tolerance >= 0 && tolerance < 1)) throw std::invalid_argument("tolerance must be in [0, 1)");
  Verdict v;
  v.tolerance = tolerance;
  const std::string tol_text = num(100 * tolerance) + "%";

  std::vector<const VerdictPoint*> ok;
  for (const auto& p : points)
    if (p.ok && p.gbps > 0) ok.push_back(&p);
  v.measured = ok.size();
  if (ok.empty()) {
    v.rule.text = "no point was measured, so there is no verdict";
    v.lines.push_back(v.rule.text);
    return v;
  }
  const bool has_grid =
      std::any_of(points.begin(), points.end(), [](const VerdictPoint& p) { return p.blocks_per_sm > 0; });
  find_best(v, ok, has_grid);
  if (has_grid) judge_two_x(v, points, tol_text);
  derive_rule(v, ok, has_grid, tol_text, max_threads_per_sm);
  return v;
}

}  // namespace autotune::explore
