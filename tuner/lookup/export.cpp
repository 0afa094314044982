// Compiled-in export (export.hpp): the tables from the lookup levels (levels.hpp). The C++ header is written by
// export_header.cpp, the JSON form by export_json.cpp.
#include "tuner/lookup/export.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "tuner/core/error.hpp"
#include "tuner/lookup/levels.hpp"

namespace autotune::lookup {

std::string ExportParam::text(Value v) const {
  auto it = texts.find(v);
  return it != texts.end() ? it->second : std::to_string(v);
}

std::string ExportParam::label(Value v) const {
  auto it = labels.find(v);
  return it != labels.end() ? it->second : std::to_string(v);
}

// ---- tables ---------------------------------------------------------------------------------------------

namespace {

using detail::Cell;
using detail::Prepared;
using detail::Question;

constexpr std::size_t kNoBoard = static_cast<std::size_t>(-1);

/// The configurations of one kernel, each once, by canonical JSON.
class ConfigIndex {
 public:
  explicit ConfigIndex(std::vector<Config>& out) : out_(out) {}
  std::size_t add(const Config& c) {
    auto [it, fresh] = index_.emplace(c.to_json(), out_.size());
    if (fresh) out_.push_back(c);
    return it->second;
  }

 private:
  std::vector<Config>& out_;
  std::map<std::string, std::size_t> index_;
};

/// A device key that no recorded board has (normalised names hold only [a-z0-9_]): the target of questions
/// about a board of compute capability cc that was never recorded.
DeviceKey unrecorded(int cc) {
  DeviceKey k;
  k.name = "<unrecorded>";
  k.cc = cc;
  return k;
}

/// The entry of problem p serving `config`, with the fill rule's thresholds `chain` (detail::fill_chain).
ExportEntry entry(const TuningSpec& spec, const ProblemKey& p, const Config& config,
                  const std::vector<std::pair<std::int64_t, Config>>& chain, ConfigIndex& configs) {
  ExportEntry e{p, configs.add(config), "", {}};
  for (const auto& [size, c] : chain) e.fills.emplace_back(size, configs.add(c));
  if (!e.fills.empty()) e.fill_dim = spec.blocks_dim();
  return e;
}

/// What the levels below the target's own cells serve to the target `key` (its board index `self`, or kNoBoard).
class GroupTables {
 public:
  GroupTables(const Prepared& prep, const TuningSpec& spec, const Workload& w, ConfigIndex& configs)
      : prep_(prep), spec_(spec), w_(w), configs_(configs) {}

  /// Level same_cc: the cells of the other boards of key's cc, per problem (in order of first appearance, each
  /// group in prep's order, as the level takes them), with their group default where one is valid at the target.
  std::vector<ExportEntry> same_cc(const DeviceKey& key, std::size_t self) const {
    std::vector<ExportEntry> out;
    std::vector<std::vector<const Cell*>> groups;
    std::map<std::string, std::size_t> group_of;
    for (const Cell& c : prep_.cells) {
      if (c.board == self || prep_.boards[c.board].key.cc != key.cc) continue;
      auto [it, fresh] = group_of.emplace(c.problem_key, groups.size());
      if (fresh) groups.emplace_back();
      groups[it->second].push_back(&c);
    }
    for (const auto& g : groups) {
      const ProblemKey& p = g.front()->problem;
      const Question q{spec_, w_, key, nullptr, p};
      if (auto a = detail::group_default_and_chain(prep_, q, g))
        out.push_back(entry(spec_, p, a->answer.config, a->chain, configs_));
    }
    return out;
  }

  /// Level same_arch: the group default over every cell of the other boards of key's major architecture.
  std::optional<std::size_t> same_arch(const DeviceKey& key, std::size_t self) const {
    std::vector<const Cell*> cells;
    for (const Cell& c : prep_.cells)
      if (c.board != self && prep_.boards[c.board].key.major() == key.major()) cells.push_back(&c);
    if (cells.empty()) return std::nullopt;
    auto a = detail::group_default(prep_, Question{spec_, w_, key, nullptr, cells.front()->problem}, cells,
                                   Match::same_arch);
    if (!a) return std::nullopt;
    return configs_.add(a->config);
  }

 private:
  const Prepared& prep_;
  const TuningSpec& spec_;
  const Workload& w_;
  ConfigIndex& configs_;
};

/// Level borrowed for board `key` and workload w: the cells on that board of the first donor (detail::donors) where
/// the lookup borrows from that donor at the cell's own problem, each with the configuration it serves there (a
/// question at another size gets the nearest of them, as the lookup takes the donor's nearest usable cell).
void borrowed_entries(const TuningSpec& spec, const Workload& w, const DeviceKey& key, const detail::PreparedOf& others,
                      ExportBoard& eb, ConfigIndex& configs) {
  const std::shared_ptr<Prepared> own = others(w);
  for (const Workload& d : detail::donors(spec, w)) {
    const std::shared_ptr<Prepared> dp = others(d);
    for (const Cell& c : dp->cells) {
      if (!(dp->boards[c.board].key == key)) continue;
      const Question q{spec, w, key, nullptr, c.problem, &others};
      const Answer a = detail::answer(own.get(), q, "");
      if (a.match != Match::borrowed || a.borrowed_from != d.key() || a.problem != c.problem_key) continue;
      eb.borrowed.push_back(entry(spec, c.problem, a.config, {}, configs));
    }
    if (!eb.borrowed.empty()) {
      eb.borrowed_from = d.key();
      return;
    }
  }
}

ExportWorkload export_workload(const TuningSpec& spec, const Workload& w, const detail::PreparedOf& others,
                               ConfigIndex& configs) {
  const std::shared_ptr<Prepared> prep = others(w);
  const GroupTables groups(*prep, spec, w, configs);
  ExportWorkload out;
  out.workload = w;
  std::set<int> ccs, majors;  // of the boards with cells
  for (std::size_t b = 0; b < prep->boards.size(); ++b) {
    const DeviceKey& key = prep->boards[b].key;
    ExportBoard eb;
    eb.key = key;
    eb.name = prep->boards[b].info.name;
    for (const Cell& c : prep->cells) {
      if (c.board != b) continue;
      ccs.insert(key.cc);
      majors.insert(key.major());
      // The levels themselves answer the question at the cell's problem; a cell none of whose rows is valid
      // on this board would be passed over by every question, so it is left out.
      const Question q{spec, w, key, nullptr, c.problem};
      const Answer a = detail::answer(prep.get(), q, "");
      if (a.match != Match::exact) continue;
      eb.cells.push_back(entry(spec, c.problem, a.config, detail::fill_chain(*prep, q, c), configs));
    }
    eb.same_cc = groups.same_cc(key, b);
    eb.same_arch = groups.same_arch(key, b);
    if (eb.cells.empty() && eb.same_cc.empty() && !eb.same_arch) borrowed_entries(spec, w, key, others, eb, configs);
    out.boards.push_back(std::move(eb));
  }
  for (int cc : ccs) {
    ExportCcGroup g;
    g.cc = cc;
    g.entries = groups.same_cc(unrecorded(cc), kNoBoard);
    if (!g.entries.empty()) out.cc_groups.push_back(std::move(g));
  }
  for (int major : majors)
    if (auto c = groups.same_arch(unrecorded(major * 10), kNoBoard)) out.arch_groups.push_back({major, *c});
  return out;
}

}  // namespace

std::string export_obstacle(const TuningSpec& spec) {
  for (const Expr& e : spec.constraints)
    for (const std::string& v : e.variables())
      if (std::find(spec.problem_dims.begin(), spec.problem_dims.end(), v) != spec.problem_dims.end() &&
          spec.find_param(v) == nullptr)
        return "its constraint '" + e.text() + "' reads the problem dimension '" + v +
               "', which a compiled-in selector cannot check at the size asked for (the lookup library can)";
  return "";
}

ExportKernel export_kernel(const db::Database& db, const TuningSpec& spec, Objective o) {
  const std::string obstacle = export_obstacle(spec);
  if (!obstacle.empty()) throw UsageError("kernel '" + spec.name + "' cannot be exported: " + obstacle);
  ExportKernel k;
  k.name = spec.name;
  k.dims = spec.problem_dims;
  for (const Param& p : spec.params) k.params.push_back({p.name, p.kind, p.labels, p.macro_text});
  ConfigIndex configs(k.configs);
  k.spec_default = configs.add(spec.default_config());
  std::map<std::string, std::shared_ptr<Prepared>> prepared;  // each workload's rows, read once
  const detail::PreparedOf others = [&](const Workload& w) {
    auto& p = prepared[w.key()];
    if (!p) p = detail::prepare(db, spec, w, o);
    return p;
  };
  for (const Workload& w : spec.workloads) k.workloads.push_back(export_workload(spec, w, others, configs));
  return k;
}

ExportTables export_tables(const db::Database& db, const std::string& database, const std::vector<TuningSpec>& specs,
                           Objective o) {
  ExportTables t;
  t.objective = o;
  t.database = database;
  for (const TuningSpec& s : specs) t.kernels.push_back(export_kernel(db, s, o));
  return t;
}

const char* param_kind_name(Param::Kind k) {
  switch (k) {
    case Param::Kind::integer:
      return "integer";
    case Param::Kind::floating:
      return "floating";
    case Param::Kind::string:
      return "string";
    case Param::Kind::boolean:
      return "boolean";
  }
  return "integer";
}

}  // namespace autotune::lookup
