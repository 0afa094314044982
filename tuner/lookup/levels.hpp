// Internal to tuner/lookup: the lookup levels (lookup.cpp) as the cached Lookup class (lookup_cache.cpp) and the
// compiled-in export (export.cpp) use them. Not installed.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuner/core/objective.hpp"
#include "tuner/lookup/lookup.hpp"

namespace autotune::db {
class Database;
}

namespace autotune::lookup::detail {

/// A recorded device model: several device rows of one key are one board.
struct Board {
  DeviceKey key;
  DeviceInfo info;  // properties as recorded (the row with the highest id among boards of this key)
};

/// One valid recorded measurement.
struct Row {
  Config config;
  std::string config_json;
  std::size_t board = 0;
  ProblemKey problem;
  std::string problem_key;
  double median_ns = 0;
  double gbps = 0;
  double cost = 0;  // objective_cost: lower is better
  Observation observed;
  std::int64_t session_id = 0;
  std::string carried_from;  // TrialRow::carried_from
  int tie = -1;              // the index in Prepared::ties of its cell's final pick where it is in the tie set, else -1
  bool online = false;       // measured online by an application's launches (db online_trials)
};

/// The final pick of a cell as the lookup uses it (ties.cpp): its tie set in the order served.
struct Tie {
  std::vector<Config> configs;  // the preferred member first (prefer_ties), then by the pick's rank
  double noise = 0;
  std::int64_t session_id = 0;
};

/// Valid rows of one board at one problem, fastest first, one row per configuration.
struct Cell {
  std::size_t board = 0;
  ProblemKey problem;
  std::string problem_key;
  std::vector<std::size_t> rows;
};

/// The valid recorded rows of one (spec, workload), grouped in cells (board, problem), best first by the
/// objective (unthrottled trials first). Immutable once made.
struct Prepared {
  std::vector<Board> boards;
  std::vector<Row> rows;
  std::vector<Cell> cells;
  /// The rows measured online by applications' launches (db online_trials), in cells of their own: served only at
  /// level exact where the cell has no usable offline row, never by the other levels.
  std::vector<Cell> online_cells;
  std::size_t stale_source = 0;  // another kernel source hash
  std::size_t stale_config = 0;  // configuration not valid in the current spec where it was measured
  std::size_t unobserved = 0;    // lacking what the objective needs (energy, power)
  std::size_t nondeterministic = 0;  // left out by TuningSpec::deterministic: not bit-reproducible run to run
  std::vector<Tie> ties;             // final picks applied to cells (prefer_ties)
  Objective objective = Objective::time;
  std::map<std::int64_t, std::string> session_spec_hash;
  std::string spec_hash;
};

/// The prepared rows of another workload of the same spec (level borrowed); may throw DbError.
using PreparedOf = std::function<std::shared_ptr<Prepared>(const Workload&)>;

struct Question {
  const TuningSpec& spec;
  const Workload& w;
  const DeviceKey& device;
  const DeviceInfo* props;  // properties of the target device, if known
  const ProblemKey& problem;
  /// The rows of the spec's other workloads, for level borrowed (borrow.cpp); nullptr: that level is skipped.
  const PreparedOf* others = nullptr;
};

/// The final picks (db::FinalPickRow) of prep's cells (device row id -> board in board_of_id), those measured with one
/// of `sources` (db::accepted_sources): in each cell whose
/// latest pick still holds its fastest row among the pick's candidates, the tie set's members move to the front,
/// the one preferred first: the member that is also the leader (2 points) or in the tie set (1 point) at the most
/// neighbouring sizes (the nearest smaller and larger recorded problem of the same board), the pick's winner on
/// equal points. Records the tie sets in prep.ties and Row::tie. Throws DbError if the query fails.
void prefer_ties(const db::Database& db, const TuningSpec& spec, const Workload& w,
                 const std::vector<std::string>& sources, const std::map<std::int64_t, std::size_t>& board_of_id,
                 Prepared& prep);

/// Fills a from row r of prep: its configuration, match m, the row's device, problem, session, median, GB/s,
/// observation and provenance (not the tie set, which only some levels give).
void fill_from_row(Answer& a, const Prepared& prep, const Row& r, Match m);
/// True if c is valid for workload w at problem p on a device with properties d (every constraint holds), and not
/// left out as nondeterministic where the spec asks for deterministic configurations. Never throws.
bool valid_for(const TuningSpec& spec, const Config& c, const ProblemKey& p, const DeviceInfo& d, const Workload& w);
/// True if cell a's problem is closer to q than cell b's, in the order of level nearest_size (log2 distance, ...).
bool closer(const Cell& a, const Cell& b, const ProblemKey& q);

/// Level borrowed (borrow.cpp, docs/lookup.md "Borrowing"): with q.others, the best valid configuration measured on
/// q.device for the most similar other workload of q.spec, at its recorded problem nearest to q.problem; fills `a`
/// (match borrowed, borrowed_from) and returns true, else adds why to `notes` and returns false. props: the target's
/// properties (nullptr: those recorded for q.device). Throws DbError if reading another workload's rows fails.
bool borrow(const Question& q, const DeviceInfo* props, Answer& a, std::vector<std::string>& notes);
/// The workloads level borrowed takes from, most similar to w first (the order of borrow()).
std::vector<Workload> donors(const TuningSpec& spec, const Workload& w);
/// The operator class of a workload's operation ("inclusive_sum" -> "arithmetic"; docs/lookup.md, "Borrowing").
std::string operator_class(const std::string& op);

/// Reads and prepares the rows. Throws DbError if a query fails.
std::shared_ptr<Prepared> prepare(const db::Database& db, const TuningSpec& spec, const Workload& w, Objective o);
/// The answer, level by level; prep == nullptr gives the spec default with the note `unavailable`.
Answer answer(const Prepared* prep, const Question& q, const std::string& unavailable);
/// The fill rule of level nearest_size at `cell` (docs/lookup.md, "Filling the SMs") as thresholds, for question
/// q at the cell's problem on the cell's board: (size of the dimension "blocks" reads, configuration) pairs, sizes
/// decreasing; a question at another problem gets the first configuration whose size its own reaches, else the
/// cell's best. Empty where the rule never applies (no "blocks", or the best did not fill the SMs there).
std::vector<std::pair<std::int64_t, Config>> fill_chain(const Prepared& prep, const Question& q, const Cell& cell);
/// The group default of level same_cc over `cells` (other boards, one problem; group_default() below) and the fill
/// rule's thresholds over the candidates after it in the group's order (as fill_chain()), for question q at the
/// cells' problem, from one scoring of the group; nullopt as group_default().
struct GroupAnswer {
  Answer answer;
  std::vector<std::pair<std::int64_t, Config>> chain;
};
std::optional<GroupAnswer> group_default_and_chain(const Prepared& prep, const Question& q,
                                                   const std::vector<const Cell*>& cells);
/// The group default (docs/lookup.md, levels same_cc and same_arch) over `cells` of prep for question q (whose
/// device is the target: its board's cells are the caller's to leave out), as an answer of level m; nullopt when
/// no configuration measured there is valid at the target. `cells` in prep's order, as the levels give them.
std::optional<Answer> group_default(const Prepared& prep, const Question& q, const std::vector<const Cell*>& cells,
                                    Match m);

}  // namespace autotune::lookup::detail
