// What an online search (search.hpp) found, written to the tuning database: a session of backend "online" and one
// row per configuration it tried in the table of online trials (db::Database::insert_online_trial), which the lookup
// serves at level exact only where the problem has no offline trial (docs/lookup.md "Online tuning"). No CUDA.
#pragma once
#include <cstdint>
#include <string>

#include "db/database.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/online/search.hpp"

namespace autotune::online {

/// The measurement protocol of an online trial (Measurement::protocol).
constexpr const char* kOnlineProtocol = "online;application-launches;events;l2=as-the-application-left-it";
/// The backend of an online session (db::SessionRow::backend).
constexpr const char* kOnlineBackend = "online";

struct RecordRequest {
  const TuningSpec& spec;
  const Workload& workload;
  const ProblemKey& problem;
  const DeviceInfo& device;
  const ParameterSpace& space;
  const Search& search;
  std::string strategy;    // the strategy's name, for the session row
  std::uint64_t seed = 0;  // its seed
  double bytes_moved = 0;  // of one launch, for GB/s (0: not known)
};

/// One trial per configuration of the search: judged ones as ok with their samples, failed ones with their status and
/// message, those still under way are left out. Returns the session's id. Throws DbError.
std::int64_t record(db::Database& db, const RecordRequest& r);

}  // namespace autotune::online
