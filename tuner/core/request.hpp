// What a user asked to tune or look at, before it is checked against a spec: the problem (--n, --rows/--cols,
// --problem), the workload (--dtype/--op/--workload) and the narrowing of a space (--values, --restrict,
// --drop-constraint). The command line fills these (tuner/cli/commands.cpp); the workflows resolve them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/error.hpp"
#include "tuner/core/spec.hpp"

namespace autotune {

struct ProblemRequest {
  std::int64_t n = 0, rows = 0, cols = 0;
  std::string problem, dtype, op;
  std::string workload_key;  // --workload dtype/op (only on the sub-commands that offer it)
  std::vector<std::string> inputs;  // --input NAME=FILE: an input of a user kernel read from a file

  /// Reads every --input into s (replace_input). Throws UsageError for a malformed --input or an unknown input.
  void apply_inputs(TuningSpec& s) const {
    for (const std::string& in : inputs) {
      const auto eq = in.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == in.size())
        throw UsageError("--input expects NAME=FILE, got '" + in + "'");
      replace_input(s, in.substr(0, eq), in.substr(eq + 1));
    }
  }

  /// Whether the user gave a problem / a workload (imports fall back to what the file says).
  bool has_problem() const { return !problem.empty() || n || rows || cols; }
  bool has_workload() const { return !dtype.empty() || !op.empty() || !workload_key.empty(); }

  /// The problem given, or the spec's first size. Throws UsageError for a dimension < 1 or one the spec lacks.
  ProblemKey problem_key(const TuningSpec& s) const {
    ProblemKey p;
    if (!problem.empty()) p = ProblemKey::parse(problem);
    if (n) p.dims["n"] = n;
    if (rows) p.dims["rows"] = rows;
    if (cols) p.dims["cols"] = cols;
    if (p.dims.empty()) {
      if (s.problem_sizes.empty())
        throw UsageError("kernel " + s.name + " has no default size: give --n (or --rows/--cols)");
      p = s.problem_sizes.front();
    }
    for (const auto& [k, v] : p.dims)
      if (v < 1) throw UsageError("problem dimension " + k + " must be at least 1 (got " + std::to_string(v) + ")");
    s.check_problem(p);
    // Data read from files is part of the problem: the same sizes with other data are another problem.
    if (p.data.empty()) {
      if (inputs.empty()) {
        p.data = data_tag(s);
      } else {
        TuningSpec with = s;
        apply_inputs(with);
        p.data = data_tag(with);
      }
    }
    return p;
  }

  /// The spec's first workload matching --dtype/--op/--workload. Throws UsageError naming the supported ones.
  Workload workload(const TuningSpec& s) const {
    std::string d = dtype, o = op;
    if (!workload_key.empty()) {
      Workload w = Workload::parse(workload_key);
      if (d.empty()) d = w.dtype;
      if (o.empty()) o = w.op;
    }
    if (d.empty() && o.empty()) return s.workloads.front();
    for (const auto& w : s.workloads)
      if ((d.empty() || w.dtype == d) && (o.empty() || w.op == o)) return w;
    Workload want{d.empty() ? s.workloads.front().dtype : d, o};
    s.check_workload(want);  // throws with the supported list
    return want;
  }
};

/// The narrowing of a spec's space for one run (tune, space): --values, --restrict, --drop-constraint,
/// --deterministic.
struct SpaceNarrowing {
  std::vector<std::string> values, restrict, drop;
  /// --deterministic: only configurations whose results are bit-reproducible run to run (TuningSpec::deterministic).
  bool deterministic = false;

  /// Applies the flags to s. Throws UsageError for an unknown parameter, value or constraint.
  void apply(TuningSpec& s) const {
    for (const std::string& v : values) {
      const auto eq = v.find('=');
      if (eq == std::string::npos || eq == 0) throw UsageError("--values expects NAME=v1,v2,..., got '" + v + "'");
      std::vector<std::string> list;
      std::string item;
      for (std::size_t i = eq + 1; i <= v.size(); ++i) {
        if (i == v.size() || v[i] == ',') {
          if (!item.empty()) list.push_back(item);
          item.clear();
        } else {
          item += v[i];
        }
      }
      s.restrict_values(v.substr(0, eq), list);
    }
    for (const std::string& c : drop) s.drop_constraint(c);
    for (const std::string& c : restrict) s.add_constraint(c);
    if (deterministic) s.deterministic = true;
  }
};

}  // namespace autotune
