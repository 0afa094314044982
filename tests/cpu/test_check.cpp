// Output comparisons as data (tuner/core/check.*): the host twin of the comparison kernels, and for every
// built-in family that it accepts and rejects exactly what the adapter's verify() does, on correct outputs
// and on planted faults (one wrong element at the end, a wrong count, a NaN).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "tuner/core/check.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

template <typename T>
std::vector<unsigned char> bytes_of(const std::vector<T>& v) {
  std::vector<unsigned char> out(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
void set(std::vector<unsigned char>& b, std::size_t i, T v) {
  std::memcpy(b.data() + i * sizeof(T), &v, sizeof(T));
}

template <typename T>
T at(const std::vector<unsigned char>& b, std::size_t i) {
  T v;
  std::memcpy(&v, b.data() + i * sizeof(T), sizeof(T));
  return v;
}

OutputCheck check_of(OutputCheck::Kind kind, std::uint32_t es, std::uint64_t count) {
  OutputCheck c;
  c.kind = kind;
  c.output = "out";
  c.expected = "want";
  c.tolerance = "tol";
  c.element_bytes = es;
  c.count = count;
  return c;
}

/// A correct output for the family from its expected values, as a kernel would leave it (poisoned where a
/// correct kernel writes nothing).
HostBuffers correct_outputs(const std::string& family, const KernelAdapter& a, const HostBuffers& expected,
                            const Workload& w, const ProblemKey& p) {
  HostBuffers out;
  const bool float_sum = expected.count("reference") != 0;
  if (float_sum) {
    const std::vector<unsigned char>& ref = expected.at("reference");
    const std::size_t n = family == "scan" ? static_cast<std::size_t>(p.at("n")) : 1;
    const std::size_t rb = ref.size() / n;  // reference values: floats or doubles
    REQUIRE((rb == 4 || rb == 8));
    const std::size_t es = static_cast<std::size_t>(dtype_size(w.dtype));
    std::vector<unsigned char> o(n * es);
    for (std::size_t i = 0; i < n; ++i) {
      const double v = rb == 4 ? static_cast<double>(at<float>(ref, i)) : at<double>(ref, i);
      if (es == 4) set(o, i, static_cast<float>(v));
      else set(o, i, v);
    }
    out["out"] = o;
    return out;
  }
  out["out"] = expected.at("out");
  if (family == "compaction") {
    const std::size_t n = static_cast<std::size_t>(p.at("n")) * static_cast<std::size_t>(dtype_size(w.dtype));
    out["out"].resize(n, 0xFF);
    out["count"] = expected.at("count");
  }
  (void)a;
  return out;
}

struct Case {
  std::string kernel;
  Workload w;
  ProblemKey p;
};

}  // namespace

TEST_CASE("host comparisons: bit-exact, float equality, absolute and relative tolerance", "[cpu][check]") {
  SECTION("bits, with the first mismatches in index order") {
    std::vector<std::int32_t> want = {1, 2, 3, 4, 5, 6};
    std::vector<std::int32_t> got = want;
    OutputCheck c = check_of(OutputCheck::Kind::bits, 4, 6);
    CHECK(compare_on_host(c, bytes_of(got), bytes_of(want), {}).ok());
    got[5] = -1;
    got[2] = 9;
    const CheckVerdict v = compare_on_host(c, bytes_of(got), bytes_of(want), {});
    CHECK(v.mismatches == 2);
    REQUIRE(v.examples.size() == 2);
    CHECK(v.examples[0].index == 2);
    CHECK(v.examples[1].index == 5);
    const std::string msg = describe(c, v, " (here)");
    CHECK(msg == "out[2] = 9 but expected 3; 2 of 6 elements differ; also out[5] = -1 but expected 6 (here)");
    // Only the first count elements are compared.
    c.count = 2;
    CHECK(compare_on_host(c, bytes_of(got), bytes_of(want), {}).ok());
  }
  SECTION("odd element sizes compare bytes and print hex") {
    std::vector<unsigned char> want = {1, 2, 3, 4, 5, 6}, got = want;
    got[4] = 0xAB;
    OutputCheck c = check_of(OutputCheck::Kind::bits, 3, 2);
    const CheckVerdict v = compare_on_host(c, got, want, {});
    CHECK(v.mismatches == 1);
    CHECK(describe(c, v, "").rfind("out[1] = 0x06ab04 but expected 0x060504", 0) == 0);
  }
  SECTION("float values: +0 equals -0, a NaN where a number is expected never matches") {
    std::vector<float> want = {0.0f, 1.5f, 2.0f};
    std::vector<float> got = {-0.0f, 1.5f, std::numeric_limits<float>::quiet_NaN()};
    const CheckVerdict v = compare_on_host(check_of(OutputCheck::Kind::float_equal, 4, 3), bytes_of(got), bytes_of(want), {});
    CHECK(v.mismatches == 1);
    CHECK(v.examples.at(0).index == 2);
    // Bitwise, -0 differs from +0.
    CHECK(compare_on_host(check_of(OutputCheck::Kind::bits, 4, 3), bytes_of(got), bytes_of(want), {}).mismatches == 2);
  }
  SECTION("absolute tolerance against double references, per element") {
    std::vector<double> ref = {1.0, 2.0, 3.0}, tol = {0.1, 0.0, 0.5};
    std::vector<float> got = {1.05f, 2.0f, 3.4f};
    OutputCheck c = check_of(OutputCheck::Kind::abs_tolerance, 4, 3);
    CHECK(compare_on_host(c, bytes_of(got), bytes_of(ref), bytes_of(tol)).ok());
    got[1] = 2.0001f;
    got[2] = std::numeric_limits<float>::quiet_NaN();
    const CheckVerdict v = compare_on_host(c, bytes_of(got), bytes_of(ref), bytes_of(tol));
    CHECK(v.mismatches == 2);
    CHECK(v.examples.at(0).tolerance == 0.0);
    CHECK(describe(c, v, "").find("|error|") != std::string::npos);
  }
  SECTION("relative tolerance needs a finite value") {
    std::vector<double> want = {100.0, 1e-40}, got = {100.5, 0.0};
    OutputCheck c = check_of(OutputCheck::Kind::rel_tolerance, 8, 2);
    c.relative = 0.01;
    CHECK(compare_on_host(c, bytes_of(got), bytes_of(want), {}).ok());
    got[0] = std::numeric_limits<double>::infinity();
    want[0] = std::numeric_limits<double>::infinity();
    CHECK(compare_on_host(c, bytes_of(got), bytes_of(want), {}).mismatches == 1);
  }
  SECTION("NaN at the same place in both agrees, NaN in only one or the poison does not, and the message says so") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<unsigned char> poison(4, kPoisonByte);
    for (OutputCheck::Kind kind :
         {OutputCheck::Kind::float_equal, OutputCheck::Kind::rel_tolerance, OutputCheck::Kind::abs_tolerance}) {
      INFO(static_cast<int>(kind));
      OutputCheck c = check_of(kind, 4, 4);
      c.relative = 1e-4;
      c.reference_bytes = 4;
      const std::vector<float> tol = {0.5f, 0.5f, 0.5f, 0.5f};
      std::vector<float> want = {1.0f, nan, nan, 2.0f};
      std::vector<float> got = {1.0f, -nan, nan, 2.0f};  // a NaN of another sign or payload is a NaN too
      CHECK(compare_on_host(c, bytes_of(got), bytes_of(want), bytes_of(tol)).ok());
      got = {nan, nan, 3.0f, 2.0f};  // NaN only in the output, then only in the expected values
      std::vector<unsigned char> g = bytes_of(got);
      std::memcpy(g.data() + 4 * 3, poison.data(), 4);  // the poison where a NaN is expected: never written
      want[3] = nan;
      const CheckVerdict v = compare_on_host(c, g, bytes_of(want), bytes_of(tol));
      CHECK(v.mismatches == 3);
      REQUIRE(v.examples.size() == 3);
      CHECK(v.examples[0].index == 0);
      CHECK(v.examples[1].index == 2);
      CHECK(v.examples[2].index == 3);
      const std::string msg = describe(c, v, "");
      CHECK_THAT(msg, Catch::StartsWith("out[0] = nan but expected 1") &&
                          Catch::Contains("(NaN in only one of them; NaN in both agrees)"));
      CHECK_THAT(msg, Catch::Contains("out[2] = 3 but expected nan"));
      CHECK_THAT(msg, Catch::Contains("out[3] = -nan but expected nan") &&
                          Catch::Contains("(never written: the output still holds the poison)"));
    }
    // Doubles alike; bitwise checks compare bits, as before.
    const double dnan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> dwant = {dnan, 1.0}, dgot = {dnan, 1.0};
    CHECK(compare_on_host(check_of(OutputCheck::Kind::float_equal, 8, 2), bytes_of(dgot), bytes_of(dwant), {}).ok());
    std::vector<unsigned char> dpoison = bytes_of(dgot);
    std::memset(dpoison.data(), kPoisonByte, 8);
    CHECK(compare_on_host(check_of(OutputCheck::Kind::float_equal, 8, 2), dpoison, bytes_of(dwant), {}).mismatches ==
          1);
    CHECK(nan_agrees(dnan, dnan, bytes_of(dgot).data(), 8));
    CHECK_FALSE(nan_agrees(dnan, 1.0, bytes_of(dgot).data(), 8));
  }
  SECTION("buffers too small for the check are a usage error") {
    std::vector<std::int32_t> small = {1, 2};
    CHECK_THROWS_AS(compare_on_host(check_of(OutputCheck::Kind::bits, 4, 3), bytes_of(small), bytes_of(small), {}),
                    UsageError);
    CHECK_THROWS_AS(compare_on_host(check_of(OutputCheck::Kind::float_equal, 2, 1), bytes_of(small), bytes_of(small), {}),
                    UsageError);
    std::vector<double> ref = {1.0};
    std::vector<float> got = {1.0f};
    CHECK_THROWS_AS(compare_on_host(check_of(OutputCheck::Kind::abs_tolerance, 4, 1), bytes_of(got), bytes_of(ref), {}),
                    UsageError);
  }
}

TEST_CASE("every family's checks accept and reject exactly what its verify() does", "[cpu][check]") {
  const std::vector<Case> cases = {
      {"reduction", Workload::parse("float32/sum"), ProblemKey::parse("n=100003")},
      {"reduction", Workload::parse("int32/sum"), ProblemKey::parse("n=100003")},
      {"reduction", Workload::parse("float64/max"), ProblemKey::parse("n=4097")},
      {"scan", Workload::parse("float32/inclusive_sum"), ProblemKey::parse("n=70001")},
      {"scan", Workload::parse("float64/exclusive_sum"), ProblemKey::parse("n=5003")},
      {"scan", Workload::parse("int32/inclusive_sum"), ProblemKey::parse("n=70001")},
      {"scan", Workload::parse("float32/inclusive_max"), ProblemKey::parse("n=3001")},
      {"compaction", Workload::parse("int32/flagged"), ProblemKey::parse("n=50001,select_pct=50")},
      {"compaction", Workload::parse("float32/if"), ProblemKey::parse("n=50001,select_pct=10")},
      {"transpose", Workload::parse("float32"), ProblemKey::parse("cols=333,rows=127")},
      {"transpose", Workload::parse("float64"), ProblemKey::parse("cols=64,rows=65")},
  };
  for (const Case& k : cases) {
    const TuningSpec spec = specs::builtin_spec(k.kernel);
    const auto adapter = kernels::make_adapter(spec);
    const HostBuffers inputs = adapter->make_inputs(k.w, k.p, 7);
    const HostBuffers expected = *adapter->reference(inputs, k.w, k.p);
    const std::vector<OutputCheck> checks = adapter->checks(expected, k.w, k.p);
    INFO(k.kernel << " " << k.w.key() << " " << k.p.key());
    REQUIRE_FALSE(checks.empty());
    const std::string where = " (" + k.w.key() + ", " + k.p.key() + ")";
    auto agree = [&](const HostBuffers& outputs, bool should_pass) {
      const std::string host = adapter->verify(outputs, expected, k.w, k.p);
      const std::string twin = verify_on_host(checks, outputs, expected, where);
      INFO("verify(): " << host << "\nchecks: " << twin);
      CHECK(host.empty() == should_pass);
      CHECK(twin.empty() == should_pass);
    };
    const HostBuffers good = correct_outputs(spec.family, *adapter, expected, k.w, k.p);
    agree(good, true);

    const std::size_t es = static_cast<std::size_t>(dtype_size(k.w.dtype));
    const OutputCheck& last = checks.back();  // the main output ('out')
    REQUIRE(last.count > 0);
    const std::size_t end = static_cast<std::size_t>(last.count) - 1;
    {  // one wrong element at the end: a changed low-order byte, beyond any tolerance for integers and selections
      HostBuffers bad = good;
      std::vector<unsigned char>& o = bad.at("out");
      if (last.kind == OutputCheck::Kind::abs_tolerance) {
        if (es == 4) set(o, end, at<float>(o, end) + 1000.0f);
        else set(o, end, at<double>(o, end) + 1000.0);
      } else {
        o[end * es] ^= 0x01;
      }
      agree(bad, false);
      CHECK(verify_on_host(checks, bad, expected, where).find("out[" + std::to_string(end) + "]") != std::string::npos);
    }
    {  // a NaN (the poison pattern) in the middle
      HostBuffers bad = good;
      std::memset(bad.at("out").data() + (end / 2) * es, 0xFF, es);
      const bool all_ones_expected = [&] {
        const std::vector<unsigned char>& e = expected.count("out") ? expected.at("out") : good.at("out");
        for (std::size_t b = 0; b < es; ++b)
          if (e[(end / 2) * es + b] != 0xFF) return false;
        return true;
      }();
      if (!all_ones_expected) agree(bad, false);
    }
    if (spec.family == "compaction") {  // a wrong count
      HostBuffers bad = good;
      set(bad.at("count"), 0, at<std::uint32_t>(bad.at("count"), 0) + 1);
      agree(bad, false);
      CHECK(verify_on_host(checks, bad, expected, where).rfind("count[0]", 0) == 0);
    }
  }
}
