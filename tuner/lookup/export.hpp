// Compiled-in export: the lookup's answers as tables that a generated C++ header or a JSON file carries, so that
// an application can pick tuned configurations without SQLite, NVRTC or this library (the way CUB, CLBlast and
// rocPRIM ship tuned parameters). `autotune export --format header|json` writes them; docs/lookup.md,
// "Compiled-in export", documents the header's selector and the JSON fields.
//
// The tables hold, per kernel and workload, what every level of the lookup (lookup.hpp) can serve: for each
// recorded board its cells (exact, nearest_size), the group defaults of the other boards of its cc per problem
// (same_cc) and of its major architecture (same_arch), and the same groups for boards that were never recorded
// (by cc and by major architecture). Only the nearest-size rule is left to the question, so a selector over the
// tables answers as Lookup::best(kernel, workload, DeviceKey, problem) does: the same configuration at the same
// match level.
#pragma once
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tuner/core/config.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/objective.hpp"
#include "tuner/core/spec.hpp"

namespace autotune {

namespace db {
class Database;
}

namespace lookup {

/// A recorded problem and the configuration served there (an index into ExportKernel::configs).
struct ExportEntry {
  ProblemKey problem;
  std::size_t config = 0;
  /// The fill rule of levels nearest_size and same_cc (docs/lookup.md, "Filling the SMs"; kernels with "blocks"):
  /// (size of dimension fill_dim, configuration) pairs, sizes decreasing; a question at another problem gets the
  /// first whose size its own reaches, else `config`.
  std::string fill_dim;
  std::vector<std::pair<std::int64_t, std::size_t>> fills;
};

/// A recorded board (device model) as the target of a question.
struct ExportBoard {
  DeviceKey key;     // normalised name and compute capability: what a question's device is matched against
  std::string name;  // as the driver reported it (the newest device row of this key)
  /// Levels exact and nearest_size: its recorded problems, each with its best configuration.
  std::vector<ExportEntry> cells;
  /// Level same_cc: the problems of the other boards of its cc, each with their group default valid on this
  /// board (problems where none is valid are left out).
  std::vector<ExportEntry> same_cc;
  /// Level same_arch: the group default of the other boards of its major architecture, if one is valid here.
  std::optional<std::size_t> same_arch;
  /// Level borrowed (only where the levels above have nothing): the recorded problems on this board of the
  /// workload `borrowed_from` that the lookup borrows from, each with the configuration it serves there.
  std::vector<ExportEntry> borrowed;
  std::string borrowed_from;  // Workload::key(); "" when `borrowed` is empty
};

/// Level same_cc for a board that is not recorded: the group default of the boards of this cc per problem.
struct ExportCcGroup {
  int cc = 0;
  std::vector<ExportEntry> entries;
};

/// Level same_arch for a board that is not recorded: the group default of the boards of this major architecture.
struct ExportArchGroup {
  int major = 0;
  std::size_t config = 0;
};

struct ExportWorkload {
  Workload workload;
  std::vector<ExportBoard> boards;  // every recorded board, also those without a row of this workload
  std::vector<ExportCcGroup> cc_groups;
  std::vector<ExportArchGroup> arch_groups;
};

/// What a parameter's values mean (Param::kind, labels and -D texts), for the configurations of a kernel.
struct ExportParam {
  std::string name;
  Param::Kind kind = Param::Kind::integer;
  std::map<Value, std::string> labels;  // Param::labels
  std::map<Value, std::string> texts;   // Param::macro_text: the text after -DNAME= where it is not the number
  /// The text after -DNAME= for v (Param::macro).
  std::string text(Value v) const;
  /// The label of v, or the number as text (Param::label).
  std::string label(Value v) const;
};

struct ExportKernel {
  std::string name;
  std::vector<std::string> dims;          // the spec's problem dimensions, in the spec's order
  std::vector<ExportParam> params;        // in the spec's order
  std::vector<Config> configs;            // every configuration the tables name, each once
  std::size_t spec_default = 0;           // index of the spec's default configuration (level spec_default)
  std::vector<ExportWorkload> workloads;  // every workload of the spec, in the spec's order
};

struct ExportTables {
  Objective objective = Objective::time;  // what "best" meant
  std::string database;                   // where the tables come from (informative)
  std::vector<ExportKernel> kernels;
};

/// A parameter's kind as the tables name it: "integer", "floating", "string" or "boolean".
const char* param_kind_name(Param::Kind k);

/// Why `spec` cannot be exported ("" if it can): a constraint that reads a problem dimension would have to be
/// checked at the question's size, which tables cannot do.
std::string export_obstacle(const TuningSpec& spec);

/// The tables of one kernel over every workload of its spec, from the valid rows of `db` (lookup.hpp's rules:
/// stale rows left out, ranked by objective o, unthrottled first). Throws UsageError naming the obstacle
/// (export_obstacle), DbError if a query fails.
ExportKernel export_kernel(const db::Database& db, const TuningSpec& spec, Objective o = Objective::time);

/// export_kernel for each spec (in order); `database` names the source in the output.
ExportTables export_tables(const db::Database& db, const std::string& database, const std::vector<TuningSpec>& specs,
                           Objective o = Objective::time);

/// A self-contained C++17 header (only standard headers) with the tables and the selector in namespace `ns` (a
/// C++ namespace name, `a::b` allowed): docs/lookup.md, "Compiled-in export". Throws UsageError for a namespace
/// that is not a C++ name.
std::string to_header(const ExportTables& t, const std::string& ns = "autotune_tuned");

/// The tables as JSON (docs/lookup.md, "Compiled-in export", has the fields).
std::string to_json(const ExportTables& t);

/// Reads to_json's text back. Throws UsageError naming the field that is missing or wrong.
ExportTables tables_from_json(const std::string& text);

}  // namespace lookup

}  // namespace autotune
