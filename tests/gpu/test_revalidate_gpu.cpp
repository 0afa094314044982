// Revalidation on the GPU (tuner/session/revalidate.*): a database recorded with an older source of the SAXPY
// example is revalidated with a source whose code differs but runs alike; the cell is carried forward and served.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "test_support.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/revalidate.hpp"
#include "tuner/session/session.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

TEST_CASE("revalidate carries a GPU recording of an older source forward", "[gpu][revalidate]") {
  const TuningSpec v1 = specs::load_spec(autotune_test::data_dir() + "/../../examples/saxpy/saxpy.tune.json");
  auto db = db::Database::open(":memory:");
  const Workload w = v1.workloads.front();
  const ProblemKey p = ProblemKey::parse("n=16777216");
  cuda::TimingOptions to;
  to.samples = 15;
  {
    cuda::CudaBackend backend(kernels::make_adapter(v1), to);
    session::Options opt;
    opt.bytes_moved = kernels::make_adapter(v1)->bytes_moved(w, p);
    REQUIRE(session::run(v1, backend, *db, w, p, opt).evaluated == 20);
  }
  // Today's source: the same arithmetic written differently (another code identity, the same work).
  TuningSpec v2 = v1;
  const std::string from = "if (i < n) out[i] = a * x[i] + y[i];";
  const std::size_t at = v2.source_text.find(from);
  REQUIRE(at != std::string::npos);
  v2.source_text.replace(at, from.size(), "if (i < n) { const float xi = x[i]; out[i] = a * xi + y[i]; }");
  REQUIRE(v2.code_identity() != v1.code_identity());
  const DeviceInfo dev = cuda::list_devices().front();
  CHECK(lookup::best(*db, v2, w, dev, p).match == lookup::Match::spec_default);

  cuda::CudaBackend backend(kernels::make_adapter(v2), to);
  session::RevalidateRequest q;
  q.top = 10;
  q.bytes_moved = [a = kernels::make_adapter(v2)](const Workload& ww, const ProblemKey& pp) { return a->bytes_moved(ww, pp); };
  const auto t0 = std::chrono::steady_clock::now();
  const session::RevalidateOutcome o = session::revalidate(v2, backend, *db, q);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  REQUIRE(o.cells.size() == 1);
  const session::CellRevalidation& c = o.cells.front();
  INFO(c.verdict << " (" << s << " s)");
  for (const session::Remeasured& m : c.configs) INFO(m.config << ": " << m.old_ns << " -> " << m.new_ns);
  CHECK(c.configs.size() == 10);
  CHECK(c.carried);
  CHECK(c.rows_carried == 10);
  const lookup::Answer a = lookup::best(*db, v2, w, dev, p);
  CHECK(a.match == lookup::Match::exact);
  WARN("revalidated 10 configurations of saxpy in " << s << " s: " << c.verdict);
}
