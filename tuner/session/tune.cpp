#include "tuner/session/tune.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "db/ranking.hpp"
#include "db/sources.hpp"
#include "tuner/core/error.hpp"

namespace autotune::session {

std::string default_strategy(bool limited) { return limited ? search::kLimitedDefaultStrategy : "brute_force"; }

ProblemKey screening_problem(const TuningSpec& spec, const ProblemKey& p, double factor) {
  std::size_t sized = 0;
  for (const auto& [name, v] : p.dims) sized += v > 1024 ? 1 : 0;
  if (sized == 0) throw UsageError("--screen: no dimension of " + p.key() + " is large enough to shrink");
  const double per_dim = std::pow(factor, 1.0 / static_cast<double>(sized));
  ProblemKey small = p;
  for (auto& [name, v] : small.dims)
    if (v > 1024)
      v = std::max<std::int64_t>(1024, static_cast<std::int64_t>(std::llround(static_cast<double>(v) / per_dim)));
  if (small == p) {
    char f[32];
    std::snprintf(f, sizeof f, "%g", factor);
    throw UsageError(std::string("--screen ") + f + " leaves " + p.key() + " unchanged");
  }
  spec.check_problem(small);
  return small;
}

std::vector<ProblemKey> smaller_sizes(const TuningSpec& spec, const ProblemKey& p, std::size_t count) {
  std::vector<ProblemKey> out;
  const std::string dim = spec.blocks ? spec.blocks_dim() : "";
  // Inputs from files have one size: there is no smaller problem of the same data.
  if (dim.empty() || !p.data.empty() || p.dims.count(dim) == 0) return out;
  ProblemKey small = p;
  for (std::size_t i = 0; i < count; ++i) {
    small.dims[dim] /= 4;
    if (small.dims[dim] < kSmallestSmallerSize) break;
    out.push_back(small);
  }
  return out;
}

std::vector<Config> smaller_size_picks(const TuningSpec& spec, const std::vector<Config>& ranked,
                                       const ProblemKey& small, const DeviceInfo& dev, const Workload& w,
                                       const std::function<bool(const Config&)>& valid) {
  constexpr std::size_t kFastest = 4, kBlockCounts = 8;
  std::vector<std::pair<const Config*, std::int64_t>> candidates;  // valid at `small`, with their blocks there
  bool any_fills = false;
  for (const Config& c : ranked) {
    if (!valid(c)) continue;
    const std::int64_t b = spec.blocks_at(c, small, dev, w).value_or(-1);
    candidates.emplace_back(&c, b);
    any_fills = any_fills || b >= dev.sm_count;
  }
  std::vector<bool> chosen(candidates.size(), false);
  for (std::size_t i = 0; i < candidates.size() && i < kFastest; ++i) chosen[i] = true;
  std::set<std::int64_t> counts;
  for (std::size_t i = 0; i < candidates.size() && counts.size() < kBlockCounts; ++i) {
    const std::int64_t b = candidates[i].second;
    if (b < 0 || (any_fills && b < dev.sm_count)) continue;
    if (counts.insert(b).second) chosen[i] = true;
  }
  std::vector<Config> out;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (chosen[i]) out.push_back(*candidates[i].first);
  return out;
}

namespace {

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", s);
  return buf;
}

/// One tune() call: the phases share the trace and the progress callback.
class Workflow {
 public:
  Workflow(const TuningSpec& spec, Backend& backend, db::Database& db, const TuneRequest& q)
      : spec_(spec),
        backend_(backend),
        db_(db),
        q_(q),
        dev_(backend.device()),
        smaller_(q.smaller_sizes > 0 && !spec.is_stub() ? smaller_sizes(spec, q.problem, q.smaller_sizes)
                                                        : std::vector<ProblemKey>{}) {}

  TuneOutcome run() {
    TuneOutcome out;
    const bool limited = q_.budget > 0 || q_.time_limit_s > 0;
    out.strategy = q_.strategy.empty() ? default_strategy(limited) : q_.strategy;
    out.default_strategy = q_.strategy.empty();
    if (q_.screen > 0 && !(q_.time_limit_s > 0))
      throw UsageError("--screen needs --time-limit (the screening gets a share of it)");
    Options opt = options(out.strategy);
    std::vector<Config> screened;
    if (q_.screen > 0) screened = screen(opt, out.screen);
    note_older_trials();
    out.warm = warm_from_db(q_.problem);
    opt.warm_start = screened;
    for (const Config& c : out.warm.configs)
      if (std::find(opt.warm_start.begin(), opt.warm_start.end(), c) == opt.warm_start.end())
        opt.warm_start.push_back(c);
    if (screened.empty()) add_values(out.warm, opt);  // screened configurations are measured as given
    opt.bytes_moved = q_.bytes_moved ? q_.bytes_moved(q_.workload, q_.problem) : 0;
    // The limit counts from the command's start (TuneRequest::started), set-up and screening included.
    if (opt.time_limit_s > 0) opt.time_limit_s = std::max(0.001, search_limit_s() - since_start());
    out.result = session::run(spec_, backend_, db_, q_.workload, q_.problem, opt);
    out.options = std::move(opt);
    final_pick(out);
    if (!smaller_.empty()) measure_smaller(out);
    out.trace = std::move(trace_);
    return out;
  }

 private:
  double since_start() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - q_.started).count();
  }
  void note(const std::string& line) const {
    if (q_.note) q_.note(line);
  }

  /// The strategy, seed, limits and objective of the request; progress and the best-so-far trace.
  Options options(const std::string& strategy) {
    Options opt;
    opt.objective = q_.objective;
    opt.strategy = strategy;
    opt.strategy_options = q_.strategy_options;
    opt.seed = q_.seed;
    opt.budget = q_.budget;
    opt.time_limit_s = search_limit_s();
    opt.on_progress = [this](const Progress& pr) {
      if (q_.on_progress) q_.on_progress(pr);
      if (trace_.empty() || trace_.back().phase != phase_ || pr.best_ns != trace_.back().best_ns ||
          pr.done != trace_.back().done)
        trace_.push_back({since_start(), pr.done, pr.best_ns, phase_});
    };
    return opt;
  }

  /// The search's time limit: the request's, less what the smaller sizes keep for themselves (5%, at most 3 s).
  double search_limit_s() const {
    if (!(q_.time_limit_s > 0)) return 0;
    return smaller_.empty() ? q_.time_limit_s : q_.time_limit_s - std::min(3.0, 0.05 * q_.time_limit_s);
  }

  /// After the search, while the backend still holds the target problem: the final pick over the cell's leaders.
  void final_pick(TuneOutcome& out) {
    FinalPickOptions fo = q_.final_pick;
    if (q_.objective != Objective::time) {
      out.final_pick.note = std::string("off: it re-times, and objective ") + to_string(q_.objective) + " is not time";
      return;
    }
    if (q_.time_limit_s > 0) fo.max_seconds = std::min(fo.max_seconds, std::max(1.0, 0.05 * q_.time_limit_s));
    phase_ = "final";
    out.final_pick = run_final_pick(backend_, db_, out.result.session_id, out.result.top, fo);
    phase_ = "target";
  }

  /// After the search: its verified configurations picked for each smaller size (smaller_size_picks()) measured
  /// there, in sessions of their own named "smaller_sizes", within what is left of the time limit.
  void measure_smaller(TuneOutcome& out) {
    const std::vector<std::string> sources = db::accepted_sources(db_, spec_);
    auto f = db::TrialFilter::cell(spec_.name, sources, out.result.device_id, q_.workload.key(), q_.problem.key());
    f.ok_only = true;
    f.by_time = true;
    std::vector<Config> ranked;
    for (const db::TrialRow& t : db::rank_trials(db_.trials(f), q_.objective, false))
      ranked.push_back(Config::from_json(t.config_json));
    for (const ProblemKey& small : smaller_) {
      double left = 0;
      if (q_.time_limit_s > 0) {
        left = q_.time_limit_s - since_start();
        if (left <= 0) {
          out.smaller_note = "the time limit ended before " + small.key();
          break;
        }
      }
      if (ranked.empty()) {
        out.smaller_note = "not measured: no configuration verified at " + q_.problem.key();
        break;
      }
      try {
        const ParameterSpace space = spec_.space(small, dev_, q_.workload);
        Options so = options("smaller_sizes");
        so.configs = smaller_size_picks(spec_, ranked, small, dev_, q_.workload,
                                        [&space](const Config& c) { return space.is_valid(c); });
        if (so.configs.empty()) continue;
        so.budget = 0;
        so.time_limit_s = left;
        so.bytes_moved = q_.bytes_moved ? q_.bytes_moved(q_.workload, small) : 0;
        note("smaller size " + small.key() + ": measuring " + std::to_string(so.configs.size()) +
             " of the search's configurations there for the lookup");
        phase_ = "smaller";
        const Result sr = session::run(spec_, backend_, db_, q_.workload, small, so);
        SmallerSize s{small.key(), so.configs.size(), 0, sr.session_id, 0, "", sr.timing.wall_s};
        db::TrialFilter sf = db::TrialFilter::cell(spec_.name, sources, sr.device_id, q_.workload.key(), small.key());
        sf.ok_only = true;
        for (const db::TrialRow& t : db_.trials(sf))
          if (std::find(so.configs.begin(), so.configs.end(), Config::from_json(t.config_json)) != so.configs.end())
            ++s.measured;
        if (!sr.top.empty()) {
          s.best_ns = sr.top.front().m.median_ns;
          s.best = sr.top.front().config_json;
        }
        out.smaller.push_back(std::move(s));
      } catch (const std::exception& e) {
        // The search's results stand; a smaller size that cannot be measured ends this phase with the reason.
        out.smaller_note = small.key() + ": " + e.what();
        break;
      }
    }
    phase_ = "target";
  }

  /// Trials of this cell recorded with an older kernel code, which this run does not use: say so once.
  void note_older_trials() const {
    if (spec_.is_stub()) return;
    const std::vector<std::string> sources = db::accepted_sources(db_, spec_);
    std::size_t older = 0, current = 0;
    db::TrialFilter f;
    f.kernel = spec_.name;
    f.workload = q_.workload.key();
    f.problem = q_.problem.key();
    for (const db::TrialRow& t : db::trials_on_model(db_, dev_, f))
      ++(std::find(sources.begin(), sources.end(), t.source_hash) != sources.end() ? current : older);
    if (older > 0 && current == 0)
      note(std::to_string(older) + " trials of this problem on this GPU were recorded with an older kernel code and are "
           "not used; `autotune revalidate " + spec_.name + " --problem " + q_.problem.key() +
           "` re-measures their best and carries them forward where they still hold");
  }

  /// The warm start's source values, distance and name into opt: the strategy tests it instead of following it.
  static void add_values(const WarmStart& ws, Options& opt) {
    opt.warm_values = ws.values;
    opt.warm_distance = ws.distance;
    opt.warm_source = ws.problem;
  }

  WarmStart warm_from_db(const ProblemKey& problem) const {
    WarmStart ws;
    if (q_.warm_start > 0) ws = find_warm_start(db_, spec_, dev_, q_.workload, problem, q_.warm_start);
    if (!ws.empty()) note("warm start (" + problem.key() + "): " + ws.source);
    return ws;
  }

  /// Screening (multi-fidelity): a share of the time limit at the smaller problem, then its best configurations
  /// start the search at the target size, which gets the rest of the limit. Returns those configurations.
  std::vector<Config> screen(Options& opt, ScreenSummary& summary) {
    const ProblemKey small = screening_problem(spec_, q_.problem, q_.screen);
    Options so = opt;
    so.time_limit_s = q_.time_limit_s * q_.screen_share;
    so.budget = 0;
    so.bytes_moved = q_.bytes_moved ? q_.bytes_moved(q_.workload, small) : 0;
    const WarmStart small_warm = warm_from_db(small);
    so.warm_start = small_warm.configs;
    add_values(small_warm, so);
    note("screening at " + small.key() + " for " + seconds(so.time_limit_s) + " s of the " +
         seconds(q_.time_limit_s) + " s limit");
    phase_ = "screen";
    const Result sr = session::run(spec_, backend_, db_, q_.workload, small, so);
    phase_ = "target";
    const std::size_t measured = sr.evaluated + sr.reused;
    const std::size_t keep = std::clamp<std::size_t>((measured + 9) / 10, 5, 32);
    std::vector<Config> best = best_of_problem(db_, spec_, dev_, q_.workload, small, keep).configs;
    note("screening: " + std::to_string(measured) + " configurations at " + small.key() + " in " +
         seconds(sr.timing.wall_s) + " s; the best " + std::to_string(best.size()) + " are measured first at " +
         q_.problem.key());
    summary = {small.key(), measured, sr.timing.wall_s, best.size()};
    return best;
  }

  const TuningSpec& spec_;
  Backend& backend_;
  db::Database& db_;
  const TuneRequest& q_;
  const DeviceInfo dev_;
  const std::vector<ProblemKey> smaller_;  // the smaller sizes to measure after the search (empty: none)
  std::vector<TracePoint> trace_;
  std::string phase_ = "target";
};

}  // namespace

TuneOutcome tune(const TuningSpec& spec, Backend& backend, db::Database& db, const TuneRequest& request) {
  return Workflow(spec, backend, db, request).run();
}

}  // namespace autotune::session
