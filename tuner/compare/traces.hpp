// Runs of another tuner's strategies, recorded as the order in which they evaluated configurations (e.g. Kernel
// Tuner's strategies in its simulation mode, bench/kt_strategy_scores.py), to be scored on our recordings with our
// score (score_orders in score.hpp). docs/strategies.md "Kernel Tuner's strategies on the same spaces".
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tuner/core/space.hpp"

namespace autotune::compare {

/// One run of an external strategy on one space.
struct ExternalRun {
  std::string kernel, device;  // the recording's kernel name and device name, as stored
  std::string problem;         // ProblemKey::key() of the recorded problem; "" = any problem of the kernel
  std::string from;            // the file name (no folder) of the database recorded in; "" = any
  std::string strategy;        // a name for the tables, e.g. "kt:pso"
  std::size_t run = 0;
  std::size_t line = 0;  // in the file, for messages
  /// The configurations in the order evaluated: parameter name -> value as text (a number, or a label).
  std::vector<std::map<std::string, std::string>> configs;
};

/// Reads a JSON Lines file, one run per line:
///   {"kernel": "cn_pnpoly", "device": "NVIDIA GeForce RTX 3090", "problem": "dim0=20000000", "strategy": "kt:pso",
///    "run": 0, "configs": [{"block_size_x": 32, "tile_size": 1, ...}, ...]}
/// ("problem" and "from", the database's file name, may be left out). Values are numbers or strings (labels); an
/// integral float counts as the integer. Blank lines are skipped. Throws UsageError naming the line for a file that
/// cannot be read, bad JSON or a missing or mistyped field.
std::vector<ExternalRun> read_traces(const std::string& path);

/// The evaluation orders of the runs recorded for one space (kernel, problem key, device name, the database's path:
/// a run's "from" matches its file name), grouped by
/// strategy in the order the strategies first appear, runs in file order, as space indices. Throws UsageError
/// naming the run when a configuration is not in the space (another space, spec or restriction?).
std::vector<std::pair<std::string, std::vector<std::vector<std::size_t>>>> trace_orders(
    const std::vector<ExternalRun>& runs, const ParameterSpace& space, const std::string& kernel,
    const std::string& problem, const std::string& device, const std::string& from);

}  // namespace autotune::compare
