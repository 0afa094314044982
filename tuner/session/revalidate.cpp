#include "tuner/session/revalidate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

#include "db/sources.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/stats.hpp"

namespace autotune::session {

namespace {

std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * v);
  return buf;
}

using Cells = std::map<std::pair<std::string, std::string>, std::vector<db::TrialRow>>;  // (workload, problem)

/// The recorded trials of the kernel on the backend's device model, by cell.
Cells recorded_cells(const TuningSpec& spec, const DeviceInfo& dev, const db::Database& db, const RevalidateRequest& q) {
  Cells cells;
  db::TrialFilter f;
  f.kernel = spec.name;
  if (q.workload) f.workload = q.workload->key();
  if (q.problem) f.problem = q.problem->key();
  for (db::TrialRow& t : db::trials_on_model(db, dev, f)) cells[{t.workload, t.problem}].push_back(std::move(t));
  return cells;
}

class Revalidation {
 public:
  Revalidation(const TuningSpec& spec, Backend& backend, db::Database& db, const RevalidateRequest& q)
      : spec_(spec), backend_(backend), db_(db), q_(q), dev_(backend.device()), sources_(db::accepted_sources(db, spec)) {}

  RevalidateOutcome run() {
    RevalidateOutcome out;
    const Cells cells = recorded_cells(spec_, dev_, db_, q_);
    if (cells.empty())
      throw UsageError("nothing of " + spec_.name + " is recorded on " + dev_.name + " (cc " + std::to_string(dev_.cc) +
                       ") in " + db_.path() + (q_.problem || q_.workload ? " for the workload and problem asked" : ""));
    for (const auto& [key, rows] : cells) {
      bool current = false;
      for (const db::TrialRow& t : rows)
        current = current || std::find(sources_.begin(), sources_.end(), t.source_hash) != sources_.end();
      if (current) {
        ++out.current_cells;
        continue;
      }
      out.cells.push_back(cell(key.first, key.second, rows));
    }
    return out;
  }

 private:
  void note(const std::string& line) const {
    if (q_.note) q_.note(line);
  }

  /// The most recently recorded older source of a cell and its rows.
  static std::pair<std::string, std::vector<db::TrialRow>> latest_source(const std::vector<db::TrialRow>& rows) {
    std::map<std::string, std::int64_t> last_id;
    for (const db::TrialRow& t : rows) last_id[t.source_hash] = std::max(last_id[t.source_hash], t.id);
    std::string source;
    std::int64_t newest = -1;
    for (const auto& [h, id] : last_id)
      if (id > newest) newest = id, source = h;
    std::vector<db::TrialRow> of;
    for (const db::TrialRow& t : rows)
      if (t.source_hash == source) of.push_back(t);
    return {source, of};
  }

  CellRevalidation cell(const std::string& workload, const std::string& problem, const std::vector<db::TrialRow>& rows) {
    CellRevalidation c;
    c.workload = workload;
    c.problem = problem;
    c.device = dev_.name;
    auto [source, old_rows] = latest_source(rows);
    c.old_source = source;
    Workload w;
    ProblemKey p;
    try {
      w = Workload::parse(workload);
      p = ProblemKey::parse(problem);
      spec_.check_workload(w);
      spec_.check_problem(p);
    } catch (const Error& e) {
      c.verdict = std::string("not carried: ") + e.what();
      return c;
    }
    const ParameterSpace space = spec_.space(p, dev_, w);
    // The best configurations of the old record that are valid in today's spec, fastest first.
    std::vector<const db::TrialRow*> best;
    for (const db::TrialRow& t : old_rows)
      if (t.m.ok() && t.m.median_ns > 0) best.push_back(&t);
    std::sort(best.begin(), best.end(), [](const db::TrialRow* a, const db::TrialRow* b) { return a->m.median_ns < b->m.median_ns; });
    std::vector<const db::TrialRow*> chosen;
    for (const db::TrialRow* t : best)
      if (chosen.size() < q_.top && space.find(Config::from_json(t->config_json)) >= 0) chosen.push_back(t);
    if (chosen.empty()) {
      c.verdict = "not carried: no verified configuration of source " + source +
                  " is valid in today's spec; re-tune with `autotune tune " + spec_.name + " --problem " + problem + "`";
      return c;
    }
    note("revalidating " + spec_.name + " " + workload + " " + problem + " on " + dev_.name + ": the best " +
         std::to_string(chosen.size()) + " configurations of source " + source + " with today's source " +
         spec_.source_hash());
    Options opt;
    opt.strategy = "revalidate";
    opt.seed = q_.seed;
    for (const db::TrialRow* t : chosen) opt.configs.push_back(Config::from_json(t->config_json));
    opt.bytes_moved = q_.bytes_moved ? q_.bytes_moved(w, p) : 0;
    const Result r = session::run(spec_, backend_, db_, w, p, opt);
    c.session_id = r.session_id;
    judge(c, chosen, r, w, p);
    if (c.carried) c.rows_carried = carry(c, old_rows, space, w, p);
    return c;
  }

  /// Compares the new measurements with the record: the common shift, then each configuration within the noise.
  void judge(CellRevalidation& c, const std::vector<const db::TrialRow*>& chosen, const Result& r, const Workload& w,
             const ProblemKey& p) const {
    std::vector<double> ratios;
    std::vector<std::optional<db::TrialRow>> fresh;
    for (const db::TrialRow* t : chosen) {
      fresh.push_back(db_.find_trial(spec_.name, spec_.source_hash(), r.device_id, w.key(), p.key(), t->config_hash));
      if (fresh.back() && fresh.back()->m.ok() && fresh.back()->m.median_ns > 0)
        ratios.push_back(fresh.back()->m.median_ns / t->m.median_ns);
    }
    c.shift = ratios.empty() ? 0 : stats::median(ratios);
    std::size_t agreeing = 0;
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      const db::TrialRow& old = *chosen[i];
      Remeasured m;
      m.config = Config::from_json(old.config_json).str(&spec_.params);
      m.old_ns = old.m.median_ns;
      if (fresh[i] && fresh[i]->m.ok() && fresh[i]->m.median_ns > 0 && c.shift > 0) {
        m.new_ns = fresh[i]->m.median_ns;
        const double allowed = std::max(q_.tolerance, old.m.spread + fresh[i]->m.spread);
        m.agrees = std::fabs(m.new_ns / (m.old_ns * c.shift) - 1) <= allowed;
      }
      agreeing += m.agrees ? 1 : 0;
      c.configs.push_back(m);
    }
    const bool shift_ok = c.shift > 0 && std::fabs(c.shift - 1) <= q_.max_shift;
    const bool best_ok = !c.configs.empty() && c.configs.front().agrees;
    const bool enough = static_cast<double>(agreeing) >= q_.min_agreeing * static_cast<double>(c.configs.size());
    c.carried = shift_ok && best_ok && enough;
    const std::string counts = std::to_string(agreeing) + " of " + std::to_string(c.configs.size()) +
                               " re-measured configurations agree with the record";
    if (c.carried) {
      c.verdict = "carried forward: " + counts + " (common shift " + pct(c.shift - 1) + ")";
    } else {
      std::string why = !shift_ok ? (c.shift > 0 ? "every configuration moved by " + pct(c.shift - 1) : "none verified now")
                        : !best_ok ? "the recorded best no longer agrees"
                                   : "too few agree";
      c.verdict = "not carried (" + why + "; " + counts + "): re-tune with `autotune tune " + spec_.name + " --problem " +
                  c.problem + "`";
    }
  }

  /// Copies the older source's rows of the cell under today's source, each saying where it came from; rows whose
  /// configuration is no longer valid, or that today's source has measured already, are not copied.
  std::size_t carry(const CellRevalidation& c, const std::vector<db::TrialRow>& old_rows, const ParameterSpace& space,
                    const Workload& w, const ProblemKey& p) {
    std::size_t agreeing = 0;
    for (const Remeasured& m : c.configs) agreeing += m.agrees ? 1 : 0;
    const std::string from = "revalidated from source " + c.old_source + " in session " + std::to_string(c.session_id) +
                             " (" + std::to_string(agreeing) + " of " + std::to_string(c.configs.size()) +
                             " re-measured agree, common shift " + pct(c.shift - 1) + ")";
    const std::string current = spec_.source_hash();
    std::size_t copied = 0;
    db_.transaction([&] {
      for (const db::TrialRow& t : old_rows) {
        if (space.find(Config::from_json(t.config_json)) < 0) continue;
        if (db_.find_trial(spec_.name, current, t.device_id, w.key(), p.key(), t.config_hash)) continue;
        db::TrialRow copy = t;
        copy.id = 0;
        copy.session_id = c.session_id;
        copy.source_hash = current;
        copy.carried_from = from;
        copy.created_at.clear();
        copied += db_.insert_trial(copy) ? 1 : 0;
      }
    });
    return copied;
  }

  const TuningSpec& spec_;
  Backend& backend_;
  db::Database& db_;
  const RevalidateRequest& q_;
  const DeviceInfo dev_;
  const std::vector<std::string> sources_;
};

}  // namespace

RevalidateOutcome revalidate(const TuningSpec& spec, Backend& backend, db::Database& db, const RevalidateRequest& q) {
  if (spec.is_stub())
    throw UsageError("kernel " + spec.name + " is a spec stub: its imported trials have no kernel source to revalidate");
  return Revalidation(spec, backend, db, q).run();
}

}  // namespace autotune::session
