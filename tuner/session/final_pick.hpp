// The noise-aware final pick (docs/performance.md, "Final pick"): at the end of a tune, the leading configurations
// within the measured noise of the best are re-timed interleaved (A B C A B C ...) and the winner is chosen on
// those paired samples; the configurations not distinguishable from it form its tie set. The rule is pure
// (candidates(), pick()); run_final_pick() does the re-timing through Backend::time_interleaved and stores the
// outcome (db::FinalPickRow).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/core/backend.hpp"

namespace autotune::session {

/// The smallest noise the rule assumes (relative): differences below it are never called real. Set from the
/// session-to-session drift of the leaders in docs/performance.md ("the ten best of each run within 0.5%").
inline constexpr double kNoiseFloor = 0.005;

struct FinalPickOptions {
  std::size_t k = 5;        // at most this many candidates; 0 or 1 = off
  int rounds = 15;          // interleaved rounds: one sample of every candidate each
  double max_seconds = 10;  // the re-timing stops after the round that passes this (3 rounds at least)
};

/// A leader as recorded: its median and relative spread ((p90 - p10) / median of its samples).
struct Leader {
  double median_ns = 0;
  double spread = 0;
};

/// The candidates of the final pick: indices into `ranked` (best first, ok trials), the first always included,
/// then each whose median is within the noise of the first's: median <= best * (1 + max(kNoiseFloor, spread of
/// the best, spread of the candidate)); at most k of them, in ranked order. Empty for an empty `ranked` or k == 0.
std::vector<std::size_t> candidates(const std::vector<Leader>& ranked, std::size_t k);

/// One candidate's outcome of the interleaved re-timing.
struct PickEntry {
  std::size_t index = 0;       // into the samples given to pick()
  double median_ns = 0;        // median of its interleaved samples
  double ratio = 1;            // median over the rounds of (its sample / the winner's sample of the same round)
  double ratio_halfwidth = 0;  // half the width of a ~95% distribution-free interval of that median
  bool in_tie_set = false;     // ratio - 1 <= max(kNoiseFloor, ratio_halfwidth): not distinguishable
  std::vector<double> samples_ns;
};

struct Pick {
  std::size_t winner = 0;          // index into the samples given to pick()
  double noise = kNoiseFloor;      // the largest tie threshold max(kNoiseFloor, ratio_halfwidth) over the others
  std::size_t rounds = 0;          // rounds used (those every candidate completed)
  std::vector<PickEntry> entries;  // the winner first, then by ratio (then index)
  std::size_t tie_size() const;
};

/// The winner of interleaved samples: samples[c][r] is candidate c's sample (ns) of round r; candidates with no
/// samples are left out, the others are used over the rounds all of them completed. The winner has the lowest
/// median over the rounds of its sample divided by the round's median over the candidates (a slow round slows all
/// of them: dividing it out pairs the samples); ties go to the lower index (the better recorded rank). Throws
/// std::invalid_argument when no candidate has a sample.
Pick pick(const std::vector<std::vector<double>>& samples);

/// What a tune's final pick did, for the output and `best`.
struct FinalPickOutcome {
  bool ran = false;
  std::string note;            // why it did not run, or "" when it did
  std::size_t candidates = 0;  // configurations within noise that were re-timed
  std::size_t tie = 0;         // of those, the tie set: not distinguishable from the winner (winner included)
  std::size_t rounds = 0;
  double noise = 0;
  std::string winner_json;             // Config::to_json() of the winner
  double winner_median_ns = 0;         // its interleaved median
  bool changed_leader = false;         // the winner is not the recorded fastest
  std::vector<db::FinalPickRow> rows;  // as stored, the winner first
  double wall_s = 0;
};

/// The final pick of a cell after its session: the candidates among `ranked` (the cell's ok trials, best first,
/// as Result::top), re-timed on `backend` (prepared for this cell: the session's problem is still the prepared
/// one), the pick, stored in `db` under session_id. Does nothing (ran false, with the reason) for k <= 1, fewer
/// than 2 candidates, or a backend that cannot re-time. Throws what the backend and the database throw.
FinalPickOutcome run_final_pick(Backend& backend, db::Database& db, std::int64_t session_id,
                                const std::vector<db::TrialRow>& ranked, const FinalPickOptions& opt);

}  // namespace autotune::session
