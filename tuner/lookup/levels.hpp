// Internal to tuner/lookup: the lookup levels (lookup.cpp) as the cached Lookup class (lookup_cache.cpp) uses
// them. Not installed.
#pragma once
#include <memory>
#include <string>

#include "tuner/core/objective.hpp"
#include "tuner/lookup/lookup.hpp"

namespace autotune::lookup::detail {

/// The valid recorded rows of one (spec, workload), grouped in cells (board, problem), best first by the
/// objective (unthrottled trials first). Immutable once made.
struct Prepared;

struct Question {
  const TuningSpec& spec;
  const Workload& w;
  const DeviceKey& device;
  const DeviceInfo* props;  // properties of the target device, if known
  const ProblemKey& problem;
};

/// Reads and prepares the rows. Throws DbError if a query fails.
std::shared_ptr<Prepared> prepare(const db::Database& db, const TuningSpec& spec, const Workload& w, Objective o);
/// The answer, level by level; prep == nullptr gives the spec default with the note `unavailable`.
Answer answer(const Prepared* prep, const Question& q, const std::string& unavailable);

}  // namespace autotune::lookup::detail
