// What some sub-commands print, as JSON values for a program that embeds the CLI library (the C interface's
// queries, tuner/capi/): the same functions the sub-commands run, without printing.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tuner/cli/args.hpp"

namespace autotune::cli {

/// `best --json`'s object: the lookup's configuration, match level and provenance (cmd_best.cpp). Throws as
/// run_best does.
nlohmann::json best_json(const BestArgs& a, const std::string& db_path);

/// The valid space of `space` (narrowed as its flags say): {"kernel", "problem", "workload", "device",
/// "device_assumed", "parameters": [NAME...], "cartesian", "valid", "configs": [{NAME: value}...] (values, not
/// labels; in enumeration order)}. Throws as run_space does.
nlohmann::json space_json(const SpaceArgs& a, const std::string& db_path);

/// Every trial of session `session_id` in the database at db_path, oldest first: {"session", "trials": [row...]}
/// with a row's columns by name (TrialRow::for_each_field; the configuration as an object under "config", the
/// status as its name, NaN as null). DbError when the database cannot be opened; UsageError when no trial has
/// that session.
nlohmann::json trials_json(const std::string& db_path, std::int64_t session_id);

}  // namespace autotune::cli
