// Helpers of the database tests (test_database.cpp, test_trials.cpp): temporary paths, file bytes, a sample
// device and trial.
#pragma once
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "db/database.hpp"
#include "tests/tools/temp_db_file.hpp"
#include "tuner/core/error.hpp"
#include "tuner/sim/synthetic.hpp"

namespace autotune_test {

namespace fs = std::filesystem;
using autotune::DbError;
using autotune::DeviceInfo;
using autotune::TrialStatus;
using autotune::db::TrialRow;

/// A unique database path in the temp directory, removed with its WAL/SHM companions on destruction.
struct TempPath : TempDbFile {
  explicit TempPath(const std::string& tag) : TempDbFile("autotune_test_db_", tag) {}
};

inline std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// Takes a database of the current schema back to schema 6: what migrations 7 (final picks) and 8 (online trials)
/// added is removed; the caller sets user_version.
inline void undo_migration_7(autotune::db::Database& db) {
  db.exec("DROP TABLE IF EXISTS online_trials");  // migration 8 (online trials), which comes after it
  db.exec("DROP INDEX final_picks_by_cell");
  db.exec("DROP TABLE final_picks");
}

/// Takes a database of the current schema back to schema 5: what migrations 7 and 6 (the observers' named values)
/// added is removed; the caller sets user_version.
inline void undo_migration_6(autotune::db::Database& db) {
  undo_migration_7(db);
  db.exec("ALTER TABLE trials DROP COLUMN metrics");
}

/// Takes a database of the current schema back to schema 4: what migrations 6 and 5 (kernel identities) added is
/// removed; the caller sets user_version.
inline void undo_migration_5(autotune::db::Database& db) {
  undo_migration_6(db);
  db.exec("DROP INDEX source_identities_by_identity");
  db.exec("DROP TABLE source_identities");
  db.exec("ALTER TABLE trials DROP COLUMN carried_from");
}

/// Runs fn, expects a DbError whose message contains `needle`.
template <class F>
void require_db_error(F&& fn, const std::string& needle) {
  try {
    fn();
    FAIL("expected DbError containing: " << needle);
  } catch (const DbError& e) {
    INFO("message: " << e.what());
    CHECK(std::string(e.what()).find(needle) != std::string::npos);
  }
}

/// An H200: the synthetic backend's device (sm_90, 132 SMs, 50 MiB of L2, driver 13000) with the board's name,
/// memory and clocks, every field set.
inline DeviceInfo sample_device(const std::string& uuid = "GPU-1234abcd") {
  DeviceInfo d = autotune::sim::SyntheticBackend::fake_device();
  d.name = "NVIDIA H200";
  d.uuid = uuid;
  d.total_memory = 150ull << 30;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.memory_bus_width = 6144;
  return d;
}

/// `base` with every field but the identity (name, cc, uuid) set to a value of its own through
/// DeviceInfo::for_each_field, so that a field added there is covered: strings "<field>-<offset>", int fields
/// 1000 + offset + their position, the 64-bit one 2^40 + offset + its position.
inline DeviceInfo distinct_device(const DeviceInfo& base, int offset = 0) {
  DeviceInfo d = base;
  int k = 0;
  auto set = [&](const std::string& name, auto& v) {
    ++k;
    if (name == "name" || name == "cc" || name == "uuid") return;
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::string>)
      v = name + "-" + std::to_string(offset);
    else if constexpr (std::is_same_v<V, int>)
      v = 1000 + offset + k;
    else
      v = (V{1} << 40) + static_cast<V>(offset + k);
  };
  DeviceInfo::for_each_field(d, set);
  return d;
}

/// The fields (DeviceInfo::for_each_field) in which a and b differ, as "name: a-value != b-value".
inline std::vector<std::string> differing_fields(const DeviceInfo& a, const DeviceInfo& b) {
  auto texts = [](const DeviceInfo& d) {
    std::vector<std::pair<std::string, std::string>> out;
    DeviceInfo::for_each_field(d, [&](const char* name, const auto& v) {
      if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::string>)
        out.emplace_back(name, v);
      else
        out.emplace_back(name, std::to_string(v));
    });
    return out;
  };
  const auto ta = texts(a), tb = texts(b);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ta.size(); ++i)
    if (ta[i].second != tb[i].second) out.push_back(ta[i].first + ": " + ta[i].second + " != " + tb[i].second);
  return out;
}

inline TrialRow sample_trial(std::int64_t device_id, const std::string& config_hash, TrialStatus status = TrialStatus::ok,
                      double median_ns = 1000) {
  TrialRow t;
  t.device_id = device_id;
  t.kernel = "reduction";
  t.source_hash = "00112233aabbccdd";
  t.workload = "float32/sum";
  t.problem = "n=67108864";
  t.problem_elements = 67108864;
  t.config_json = "{\"BLOCK_SIZE\":256}";
  t.config_hash = config_hash;
  t.m.status = status;
  t.m.median_ns = median_ns;
  t.m.min_ns = median_ns * 0.9;
  t.m.spread = 0.02;
  t.m.samples = 50;
  t.m.compile_ms = 123.5;
  t.m.verify_ms = 4.25;
  t.m.log = status == TrialStatus::ok ? "" : "error: something";
  t.m.protocol = "events;warmup=3;l2=flush";
  t.gbps = 268.4;
  return t;
}

}  // namespace autotune_test
