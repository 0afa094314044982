// A built-in kernel source compiled without the tuner's macros must behave like its spec's default: every
// `#ifndef NAME ... #define NAME value` fallback equals the default of the spec named after the source's folder
// (kernels_src/F/F.tune.json for kernels_src/F/F.cu; a second spec over the same source may choose other
// defaults). The sources also compile for sm_90 with no macro at all.
#include <catch2/catch.hpp>

#include <map>
#include <regex>
#include <string>

#include "tuner/cuda/runtime.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

/// NAME -> value of each `#ifndef NAME` block that ends in `#define NAME value` (the policy block's fallbacks).
std::map<std::string, std::string> fallbacks(const std::string& source) {
  std::map<std::string, std::string> out;
  static const std::regex block(R"(#ifndef\s+(\w+)\s*\n(?:[^\n]*\n){0,4}?#define\s+\1\s+([^\s]+))");
  for (auto it = std::sregex_iterator(source.begin(), source.end(), block); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}

}  // namespace

TEST_CASE("kernel sources: every #ifndef fallback equals the default of the spec named after its folder",
          "[nvrtc][kernels]") {
  std::size_t checked = 0;
  for (const std::string& path : embedded::spec_paths()) {
    const auto slash = path.find('/');
    REQUIRE(slash != std::string::npos);
    const std::string folder = path.substr(0, slash);
    if (path != folder + "/" + folder + ".tune.json") continue;  // a second spec over the same source
    const TuningSpec spec = specs::load_spec(folder);
    const auto source = embedded::find(folder + "/" + folder + ".cu");
    REQUIRE(source);
    const auto fb = fallbacks(std::string(*source));
    for (const Param& p : spec.params) {
      INFO(folder << ".cu: " << p.name);
      auto it = fb.find(p.name);
      REQUIRE(it != fb.end());
      CHECK(it->second == std::to_string(p.default_value));
      ++checked;
    }
    // Without any macro (not strict) the source compiles on its own.
    const cuda::CompileResult r = cuda::compile(std::string(*source), spec.headers, folder + ".cu", {}, "sm_90");
    INFO(r.log);
    CHECK(r.ok);
  }
  CHECK(checked >= 25);  // reduction, scan, transpose and compaction each have several parameters
}
