// User kernels written as other suites write them, on the GPU: constant-memory arguments (a polygon in
// __constant__ memory), a templated entry point and a reference kernel that is not extern "C", and the resource
// pre-check that records a configuration that cannot launch as invalid_resources before trying.
#include <catch2/catch.hpp>
#include <map>

#include "cuda_session_support.hpp"
#include "test_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/session.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

TuningSpec pnpoly_spec() { return specs::load_spec(autotune_test::data_dir() + "/specs/pnpoly_cmem.tune.json"); }

std::map<std::string, db::TrialRow> rows_by_config(db::Database& db, std::int64_t session) {
  db::TrialFilter f;
  f.session_id = session;
  std::map<std::string, db::TrialRow> out;
  for (auto& t : db.trials(f)) out[t.config_json] = t;
  return out;
}

}  // namespace

TEST_CASE("user kernels: constant memory, a templated entry point, the resource pre-check", "[gpu][user_kernels]") {
  TuningSpec spec = pnpoly_spec();
  cuda::TimingOptions to;
  to.samples = 7;
  autotune_test::CudaSession cs(spec, to);
  const Workload w = spec.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=100003");
  session::Result r = session::run(spec, cs.backend, *cs.db, w, p, {});
  REQUIRE(r.space_size == 8);
  auto rows = rows_by_config(*cs.db, r.session_id);
  std::string summary;
  for (const auto& [c, t] : rows) summary += c + ": " + to_string(t.m.status) + " " + t.m.log + "\n";
  INFO(summary);
  WARN(summary);  // for the record of a GPU run
  for (int block : {64, 256, 1024}) {
    const std::string key = "{\"BLOCK_SIZE\":" + std::to_string(block);
    // The templated entry point pnpoly<BLOCK_SIZE> reads the polygon that was copied into d_vertices, and the
    // C++-named reference agrees.
    CHECK(rows.at(key + ",\"USE_CMEM\":1}").m.status == TrialStatus::ok);
    // The planted variant ignores the polygon: its all-zero bitmap differs, so the constants were filled with
    // the polygon (zero-filled constants would make both agree).
    CHECK(rows.at(key + ",\"USE_CMEM\":0}").m.status == TrialStatus::wrong_result);
  }
  // 2048 threads per block: ruled out by the compiled function's limit before any launch, with the numbers.
  for (int use : {0, 1}) {
    const db::TrialRow& t = rows.at("{\"BLOCK_SIZE\":2048,\"USE_CMEM\":" + std::to_string(use) + "}");
    CHECK(t.m.status == TrialStatus::invalid_resources);
    CHECK_THAT(t.m.log, Catch::Contains("invalid_resources") && Catch::Contains("2048 threads per block") &&
                            Catch::Contains("registers"));
  }
}

TEST_CASE("user kernels: a constant argument larger than its symbol is refused by name", "[gpu][user_kernels]") {
  TuningSpec spec = pnpoly_spec();
  for (auto& a : spec.arguments)
    if (a.kind == ArgSpec::Kind::constant) a.count = Expr::parse("64");  // d_vertices holds 32 floats
  auto adapter = kernels::make_adapter(spec);
  cuda::CudaBackend backend(adapter, cuda::TimingOptions{});
  // The reference kernel runs first and reads the constant: the problem cannot be prepared.
  CHECK_THROWS_WITH(backend.prepare(spec.workloads.front(), ProblemKey::parse("n=1000"), 1),
                    Catch::Contains("d_vertices") && Catch::Contains("256 bytes"));
}

// Inputs from files (x.npy, bias.bin, a scalar from scale.npy: tests/data/files/make_files.py), with the default
// configuration as the reference (the spec names none) or with expected values from y_expected.npy; VARIANT 1
// is planted wrong (every 97th element from index 5 loses its bias) and must be caught either way.
TEST_CASE("user kernels: inputs from files, the default configuration or a file as the reference",
          "[gpu][user_kernels][data_file]") {
  const std::string dir = autotune_test::data_dir() + "/files/";
  const Workload w = Workload::parse("float32");
  const ProblemKey p = ProblemKey::parse("n=4099");
  for (const std::string name : {"filed", "filed_expected"}) {
    for (auto mode : {cuda::TimingOptions::Verify::device, cuda::TimingOptions::Verify::host}) {
      TuningSpec spec = specs::load_spec(dir + name + ".tune.json");
      cuda::TimingOptions to;
      to.samples = 5;
      to.verify = mode;
      autotune_test::CudaSession cs(spec, to);
      session::Result r = session::run(spec, cs.backend, *cs.db, w, p, {});
      INFO(name << ", verification " << r.verification);
      REQUIRE(r.space_size == 6);
      const std::string against = name == "filed" ? ", against the default configuration (BLOCK_SIZE=128 VARIANT=right)"
                                                  : ", against expected values of y from y_expected.npy";
      CHECK(r.verification ==
            (mode == cuda::TimingOptions::Verify::device ? "device" : "host (--verify host)") + against);
      auto rows = rows_by_config(*cs.db, r.session_id);
      std::string summary;
      for (const auto& [c, t] : rows) summary += c + ": " + to_string(t.m.status) + " " + t.m.log + "\n";
      INFO(summary);
      for (int block : {64, 128, 256}) {
        const std::string key = "{\"BLOCK_SIZE\":" + std::to_string(block) + ",\"VARIANT\":";
        // Every block size agrees with the reference bit for bit (the file's values were computed on the host
        // from the same files: the inputs reached the GPU as they are on disk).
        CHECK(rows.at(key + "0}").m.status == TrialStatus::ok);
        const db::TrialRow& planted = rows.at(key + "1}");
        CHECK(planted.m.status == TrialStatus::wrong_result);
        CHECK_THAT(planted.m.log, Catch::Contains("y[5]") && Catch::Contains("43 of 4099 elements differ"));
      }
    }
  }
}

TEST_CASE("user kernels: a problem size the input file does not hold is a spec error before anything runs",
          "[gpu][user_kernels][data_file]") {
  TuningSpec spec = specs::load_spec(autotune_test::data_dir() + "/files/filed.tune.json");
  auto adapter = kernels::make_adapter(spec);
  cuda::CudaBackend backend(adapter, cuda::TimingOptions{});
  try {
    backend.prepare(spec.workloads.front(), ProblemKey::parse("n=4000"), 1);
    FAIL("prepared a problem the file does not fit");
  } catch (const SpecError& e) {
    CHECK(e.pointer() == "/arguments/0/init/file");
    CHECK_THAT(e.what(), Catch::Contains("argument 'x' needs 4000 elements") && Catch::Contains("x.npy"));
  }
  // The backend is still usable for the problem the file holds.
  CHECK_NOTHROW(backend.prepare(spec.workloads.front(), ProblemKey::parse("n=4099"), 1));
  CHECK(backend.evaluate({spec.default_config()}).at(0).status == TrialStatus::ok);
}
