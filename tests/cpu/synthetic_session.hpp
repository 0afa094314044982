// A small synthetic kernel and an in-memory database: what the session and compile-pipeline tests run
// sessions on with the SyntheticBackend.
#pragma once
#include <memory>
#include <string>

#include "db/database.hpp"
#include "tuner/core/spec.hpp"
#include "tuner/sim/synthetic.hpp"

namespace autotune_test {

/// `extra` adds members to the spec's JSON object (",\"blocks\": ..." for a spec with blocks).
inline autotune::TuningSpec small_spec(const std::string& extra = "") {
  return autotune::TuningSpec::from_json_text(R"J({
    "name": "synthetic_kernel", "family": "synthetic", "source": "none.cu", "kernels": ["k"],
    "parameters": [
      {"name": "BLOCK_SIZE", "values": [32, 64, 128, 256, 512, 1024], "default": 256},
      {"name": "ITEMS", "values": [1, 2, 4, 8], "default": 1},
      {"name": "VEC", "values": [1, 2, 4], "default": 1}
    ],
    "constraints": ["BLOCK_SIZE * ITEMS * VEC <= 4096"],
    "problem": {"dims": ["n"], "sizes": [{"n": 1048576}]},
    "workloads": ["float32/sum"])J" + extra + "}",
                                              ".", false);
}

struct SessionFixture {
  autotune::TuningSpec spec = small_spec();
  std::unique_ptr<autotune::db::Database> db = autotune::db::Database::open(":memory:");
  autotune::Workload w = autotune::Workload::parse("float32/sum");
  autotune::ProblemKey p = autotune::ProblemKey::parse("n=1048576");
  std::size_t valid() const { return spec.space(p, autotune::sim::SyntheticBackend::fake_device(), w).size(); }
  std::vector<autotune::db::TrialRow> trials(std::int64_t session_id) const {
    autotune::db::TrialFilter tf;
    tf.session_id = session_id;
    return db->trials(tf);
  }
};

}  // namespace autotune_test
