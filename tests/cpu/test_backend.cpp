// ForwardingBackend (tuner/core/backend.hpp): every method of Backend reaches the inner backend, so that wrappers
// that own or add something cannot drop one (the MPI path once lost observer_note() this way).
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "tuner/core/backend.hpp"

using namespace autotune;

namespace {

/// Counts the calls of every method and answers each with a value that names it.
class SpyBackend : public Backend {
 public:
  mutable std::map<std::string, int> calls;
  DeviceInfo device() const override {
    ++calls["device"];
    DeviceInfo d;
    d.name = "spy";
    return d;
  }
  std::string kind() const override { return ++calls["kind"], "spy-kind"; }
  std::string compiler_version() const override { return ++calls["compiler_version"], "9.9"; }
  void prepare(const Workload&, const ProblemKey&, std::uint64_t seed) override {
    ++calls["prepare"];
    seed_ = seed;
  }
  double copy_bandwidth_gbps() override { return ++calls["copy_bandwidth_gbps"], 123.0; }
  std::vector<Measurement> evaluate(const std::vector<Config>& configs) override {
    ++calls["evaluate"];
    return std::vector<Measurement>(configs.size());
  }
  void prefetch(const std::vector<Config>&) override { ++calls["prefetch"]; }
  void expect(const Workload&, const ProblemKey&, const std::vector<Config>&) override { ++calls["expect"]; }
  std::size_t parallel_devices() const override { return ++calls["parallel_devices"], 3; }
  BackendStats stats() const override {
    ++calls["stats"];
    BackendStats s;
    s.verified = 17;
    return s;
  }
  std::string verification() const override { return ++calls["verification"], "spy-verification"; }
  std::string observer_note() const override { return ++calls["observer_note"], "spy-note"; }
  std::uint64_t seed_ = 0;
};

/// A wrapper that owns its inner backend, as the MPI path's does.
class Owning : public ForwardingBackend {
 public:
  Owning() { forward_to(spy); }
  SpyBackend spy;
};

}  // namespace

TEST_CASE("ForwardingBackend hands every Backend method to the inner backend", "[cpu][backend]") {
  Owning b;
  Backend& base = b;
  CHECK(base.device().name == "spy");
  CHECK(base.kind() == "spy-kind");
  CHECK(base.compiler_version() == "9.9");
  base.prepare(Workload{"float32", "sum"}, ProblemKey::parse("n=8"), 42);
  CHECK(b.spy.seed_ == 42);
  CHECK(base.copy_bandwidth_gbps() == 123.0);
  CHECK(base.evaluate({Config{}, Config{}}).size() == 2);
  base.prefetch({Config{}});
  base.expect(Workload{"float32", "sum"}, ProblemKey::parse("n=8"), {Config{}});
  CHECK(base.parallel_devices() == 3);
  CHECK(base.stats().verified == 17);
  CHECK(base.verification() == "spy-verification");
  CHECK(base.observer_note() == "spy-note");
  // Every virtual of Backend, each called once above.
  const std::vector<std::string> methods = {
      "device",   "kind",   "compiler_version", "prepare", "copy_bandwidth_gbps", "evaluate",
      "prefetch", "expect", "parallel_devices", "stats",   "verification",        "observer_note"};
  for (const std::string& m : methods) {
    INFO(m);
    CHECK(b.spy.calls[m] == 1);
  }
  CHECK(b.spy.calls.size() == methods.size());
}
