#include "tuner/explore/sweep.hpp"

#include <algorithm>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/core/text.hpp"

namespace autotune::explore {

namespace {

bool parse_int(const std::string& text, Value* out) {
  if (text.empty()) return false;
  std::size_t used = 0;
  try {
    long long v = std::stoll(text, &used, 10);
    if (used != text.size()) return false;
    *out = v;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string values_text(const Param& p) {
  std::string s;
  for (Value v : p.values) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

}  // namespace

std::vector<Config> SweepPlan::valid_configs() const {
  std::vector<Config> out;
  for (const auto& pt : points)
    if (pt.valid) out.push_back(pt.config);
  return out;
}

std::size_t SweepPlan::valid_count() const {
  std::size_t n = 0;
  for (const auto& pt : points) n += pt.valid ? 1 : 0;
  return n;
}

std::vector<Value> parse_value_list(const std::string& text, const std::string& flag) {
  std::vector<Value> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = trim(item);
    Value v = 0;
    if (!parse_int(item, &v))
      throw UsageError(flag + " expects a comma-separated list of integers, got '" + text + "'");
    if (v < 1) throw UsageError(flag + ": values must be at least 1 (got " + std::to_string(v) + ")");
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw UsageError(flag + ": " + std::to_string(v) + " is listed twice");
    out.push_back(v);
  }
  if (out.empty()) throw UsageError(flag + " expects at least one value");
  return out;
}

std::pair<std::string, Value> parse_fix(const std::string& text, const TuningSpec& spec) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("--fix expects PARAM=VALUE, got '" + text + "'");
  std::string name = trim(text.substr(0, eq));
  std::string value = trim(text.substr(eq + 1));
  if (name == kBlockParam) throw UsageError("--fix " + name + ": the block size is swept; use --block-sizes");
  if (name == kGridParam) throw UsageError("--fix " + name + ": the grid is swept; use --blocks-per-sm");
  const Param* p = spec.find_param(name);
  if (!p) {
    std::string names;
    for (const auto& q : spec.params) names += (names.empty() ? "" : ", ") + q.name;
    throw UsageError("--fix " + name + ": kernel " + spec.name + " has no such parameter (parameters: " + names + ")");
  }
  Value v = 0;
  if (parse_int(value, &v)) return {name, v};
  for (const auto& [val, label] : p->labels)
    if (label == value) return {name, val};
  throw UsageError("--fix " + name + "=" + value + ": not an integer nor a label of " + name);
}

const LaunchStep* main_kernel_step(const LaunchPlan& plan) {
  const LaunchStep* best = nullptr;
  double best_threads = -1;
  for (const auto& s : plan.steps) {
    if (s.kind != LaunchStep::Kind::kernel) continue;
    double threads = 1.0 * s.grid[0] * s.grid[1] * s.grid[2] * s.block[0] * s.block[1] * s.block[2];
    if (threads > best_threads) {
      best_threads = threads;
      best = &s;
    }
  }
  return best;
}

SweepPlan plan_sweep(const TuningSpec& spec, const ProblemKey& p, const DeviceInfo& d, const Workload& w,
                     const SweepRequest& request, const std::optional<Config>& best_known, const PlanFn& plan_fn) {
  const Param* block_param = spec.find_param(kBlockParam);
  if (!block_param)
    throw UsageError("kernel " + spec.name + " has no " + kBlockParam + " parameter: there is no block size to sweep");
  const Param* grid_param = spec.find_param(kGridParam);
  if (!grid_param && !request.blocks_per_sm.empty())
    throw UsageError("kernel " + spec.name + " has no " + kGridParam +
                     " parameter: its grid follows from the problem size, so --blocks-per-sm does not apply");

  SweepPlan plan;
  plan.kernel = spec.name;
  plan.has_grid_param = grid_param != nullptr;
  plan.block_sizes = request.block_sizes.empty() ? block_param->values : request.block_sizes;
  if (grid_param) plan.blocks_per_sm = request.blocks_per_sm.empty() ? grid_param->values : request.blocks_per_sm;
  else
    plan.notes.push_back("kernel " + spec.name + " has no " + kGridParam +
                         " parameter: its grid follows from the problem size and the other parameters, so only "
                         "the block size is swept");

  // Base configuration: spec default < best known < --fix.
  Config base = spec.default_config();
  for (const auto& prm : spec.params) plan.origin[prm.name] = "spec default";
  if (best_known) {
    for (const auto& [name, v] : best_known->values()) {
      if (!spec.find_param(name)) continue;
      base.set(name, v);
      plan.origin[name] = "best known";
    }
  }
  for (const auto& [name, v] : request.fixed) {
    if (name == kBlockParam || name == kGridParam)
      throw UsageError("--fix " + name + ": this parameter is swept");
    if (!spec.find_param(name)) throw UsageError("--fix " + name + ": kernel " + spec.name + " has no such parameter");
    base.set(name, v);
    plan.origin[name] = "--fix";
  }
  plan.origin.erase(kBlockParam);
  plan.origin.erase(kGridParam);
  {
    std::map<std::string, Value> rest = base.values();
    rest.erase(kBlockParam);
    rest.erase(kGridParam);
    plan.base = Config(rest);
  }

  std::vector<Value> grids = plan.blocks_per_sm;
  if (!grid_param) grids = {0};
  for (Value bs : plan.block_sizes) {
    for (Value g : grids) {
      SweepPoint pt;
      pt.block_size = bs;
      pt.blocks_per_sm = g;
      Config c = plan.base;
      c.set(kBlockParam, bs);
      if (grid_param) c.set(kGridParam, g);
      pt.config = c;

      std::vector<std::string> why;
      for (const auto& prm : spec.params) {
        Value v = c.at(prm.name);
        if (prm.index_of(v) < 0)
          why.push_back(prm.name + "=" + std::to_string(v) + " is not one of the spec's values (" + values_text(prm) +
                        ")");
      }
      for (const auto& e : spec.constraints) {
        try {
          if (eval_expr(e, c, p, d, w) == 0) why.push_back("constraint `" + e.text() + "`");
        } catch (const ExprError& err) {
          why.push_back("constraint `" + e.text() + "` cannot be evaluated (" + err.what() + ")");
        }
      }
      pt.valid = why.empty();
      for (std::size_t i = 0; i < why.size(); ++i) pt.excluded_by += (i ? "; " : "") + why[i];

      if (pt.valid && plan_fn) {
        try {
          LaunchPlan lp = plan_fn(c);
          if (const LaunchStep* s = main_kernel_step(lp)) {
            pt.kernel = s->kernel;
            pt.grid_blocks = static_cast<std::int64_t>(s->grid[0]) * s->grid[1] * s->grid[2];
            pt.block_threads = static_cast<std::int64_t>(s->block[0]) * s->block[1] * s->block[2];
            pt.shared_bytes = s->shared_bytes;
          } else {
            pt.plan_error = "the launch plan has no kernel step";
          }
        } catch (const std::exception& e) {
          pt.plan_error = e.what();
        }
      }
      plan.points.push_back(std::move(pt));
    }
  }
  std::size_t excluded = plan.points.size() - plan.valid_count();
  if (excluded > 0)
    plan.notes.push_back(std::to_string(excluded) + " of " + std::to_string(plan.points.size()) +
                         " points are excluded by the spec and not run (listed with the reason)");
  return plan;
}

std::optional<SmLimits> sm_limits(int cc) {
  // CUDA C++ Programming Guide, "Technical Specifications per Compute Capability" (CUDA 12/13 editions):
  // max resident threads per SM, max resident blocks per SM, shared memory per SM, and the 1 KB of shared
  // memory the system reserves per block from compute capability 8.0 on.
  switch (cc) {
    case 70:
    case 72: return SmLimits{2048, 32, 96 * 1024, 0};
    case 75: return SmLimits{1024, 16, 64 * 1024, 0};
    case 80: return SmLimits{2048, 32, 164 * 1024, 1024};
    case 86: return SmLimits{1536, 16, 100 * 1024, 1024};
    case 87: return SmLimits{1536, 16, 164 * 1024, 1024};
    case 89: return SmLimits{1536, 24, 100 * 1024, 1024};
    case 90:
    case 100: return SmLimits{2048, 32, 228 * 1024, 1024};
    case 120: return SmLimits{1536, 32, 100 * 1024, 1024};
    default: return std::nullopt;
  }
}

const char* to_string(Occupancy::Source s) {
  switch (s) {
    case Occupancy::Source::driver: return "driver";
    case Occupancy::Source::theoretical: return "theoretical";
    case Occupancy::Source::unknown: return "unknown";
  }
  return "unknown";
}

Occupancy theoretical_occupancy(const DeviceInfo& d, std::int64_t block_threads, std::uint32_t shared_bytes) {
  Occupancy o;
  auto lim = sm_limits(d.cc);
  if (!lim) {
    o.note = "no static limits known for compute capability " + std::to_string(d.cc / 10) + "." +
             std::to_string(d.cc % 10);
    return o;
  }
  if (block_threads < 1) {
    o.note = "no launch geometry";
    return o;
  }
  const std::int64_t warp = d.warp_size > 0 ? d.warp_size : 32;
  const std::int64_t rounded = (block_threads + warp - 1) / warp * warp;
  std::int64_t blocks = std::min<std::int64_t>(lim->max_blocks_per_sm, lim->max_threads_per_sm / rounded);
  const std::int64_t smem = static_cast<std::int64_t>(shared_bytes) + lim->reserved_shared_per_block;
  if (smem > 0) blocks = std::min<std::int64_t>(blocks, lim->shared_bytes_per_sm / smem);
  o.blocks_per_sm = static_cast<int>(std::max<std::int64_t>(blocks, 0));
  o.source = Occupancy::Source::theoretical;
  o.note = "theoretical: " + std::to_string(lim->max_threads_per_sm) + " threads, " +
           std::to_string(lim->max_blocks_per_sm) + " blocks and " + std::to_string(lim->shared_bytes_per_sm / 1024) +
           " KB shared memory per SM; registers and static shared memory not counted";
  return o;
}

Geometry geometry(const SweepPoint& pt, const Occupancy& occ, int sm_count) {
  Geometry g;
  if (sm_count <= 0 || pt.grid_blocks <= 0) return g;
  g.grid_in_sms = static_cast<double>(pt.grid_blocks) / sm_count;
  if (occ.source != Occupancy::Source::unknown && occ.blocks_per_sm > 0) {
    const std::int64_t wave = static_cast<std::int64_t>(occ.blocks_per_sm) * sm_count;
    g.waves = static_cast<double>(pt.grid_blocks) / static_cast<double>(wave);
    g.whole_waves = pt.grid_blocks % wave == 0;
    g.resident_threads_per_sm = static_cast<double>(std::min<std::int64_t>(pt.grid_blocks, wave)) / sm_count *
                                static_cast<double>(pt.block_threads);
  } else {
    g.resident_threads_per_sm = g.grid_in_sms * static_cast<double>(pt.block_threads);
  }
  return g;
}

}  // namespace autotune::explore
