// Shipped data stays current: every recorded cell of tests/data/recorded_*.db is served by today's kernel sources
// (their text, or a text with the same code identity), so that a kernel change that makes the shipped recordings
// stale fails here and the recordings are revalidated or re-made on the GPU machine (docs/database.md). And
// kernels_src/source_history.json holds today's sources with today's identity rules (scripts/source_history.sh).
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>
#include <tuple>

#include "db/database.hpp"
#include "db/sources.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/specs.hpp"

#include <nlohmann/json.hpp>

using namespace autotune;

namespace {
const std::string kData = AUTOTUNE_TEST_DATA_DIR;
}

TEST_CASE("every cell of the shipped recordings is served by today's kernel sources", "[cpu][shipped]") {
  for (const char* file : {"recorded_h100.db", "recorded_h200.db", "landscapes_h100.db"}) {
    auto db = db::Database::open(kData + "/" + file, db::Database::Mode::read_only);
    std::set<std::string> kernels;
    for (const db::TrialRow& t : db->trials({})) kernels.insert(t.kernel);
    REQUIRE_FALSE(kernels.empty());
    for (const std::string& k : kernels) {
      if (!specs::is_builtin(k)) continue;
      const TuningSpec spec = specs::builtin_spec(k);
      const std::vector<std::string> accepted = db::accepted_sources(*db, spec);
      db::TrialFilter f;
      f.kernel = k;
      using Cell = std::tuple<std::int64_t, std::string, std::string>;
      std::map<Cell, std::set<std::string>> all, served;
      for (const db::TrialRow& t : db->trials(f)) {
        const Cell c{t.device_id, t.workload, t.problem};
        all[c].insert(t.config_hash);
        if (std::find(accepted.begin(), accepted.end(), t.source_hash) != accepted.end()) served[c].insert(t.config_hash);
      }
      for (const auto& [cell, configs] : all) {
        INFO(file << ": " << k << " " << std::get<1>(cell) << " " << std::get<2>(cell)
                  << ": recorded with an older kernel source; revalidate it on the GPU machine (autotune revalidate "
                  << k << ") or record it again");
        CHECK(served[cell].size() == configs.size());
      }
    }
  }
}

TEST_CASE("the source history holds today's kernel sources with today's identities", "[cpu][shipped]") {
  const auto text = embedded::find("source_history.json");
  REQUIRE(text);
  const nlohmann::json history = nlohmann::json::parse(*text);
  for (const std::string& name : specs::builtin_names()) {
    const TuningSpec spec = specs::builtin_spec(name);
    bool found = false;
    for (const auto& e : history.at("sources"))
      if (e.at("kernel") == name && e.at("source_hash") == spec.source_hash()) {
        found = true;
        INFO(name << ": run scripts/source_history.sh (the identity rules or the source changed)");
        CHECK(e.at("identity") == spec.code_identity());
      }
    INFO(name << " " << spec.source_hash() << " is missing: run scripts/source_history.sh");
    CHECK(found);
  }
}
