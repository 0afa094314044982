// The code identity of a kernel (tuner/core/identity.*): stable under comments, white space, line splices, include
// guards, moves between a source and the header it includes, and the fallbacks of tunable macros; changed by any
// change of code.
#include <catch2/catch.hpp>

#include <map>
#include <set>
#include <string>

#include "tuner/core/identity.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;

namespace {

const std::set<std::string> kDefined = {"BLOCK_SIZE", "ITEMS", "AUTOTUNE_STRICT"};

std::string norm(const std::string& src, const std::map<std::string, std::string>& headers = {}) {
  return normalized_code(src, headers, kDefined);
}

const char* kKernel = R"(#ifndef BLOCK_SIZE
#ifdef AUTOTUNE_STRICT
#error "BLOCK_SIZE is not defined"
#endif
#define BLOCK_SIZE 256
#endif
#ifndef ITEMS
#define ITEMS 4
#endif
__device__ float twice(float x) { return 2.0f * x; }
extern "C" __global__ void k(const float* in, float* out, int n) {
  int i = blockIdx.x * BLOCK_SIZE * ITEMS + threadIdx.x;
  for (int r = 0; r < ITEMS; ++r, i += BLOCK_SIZE)
    if (i < n) out[i] = twice(in[i]) >> 1 > 0 ? 1.f : 0.f;
}
)";

TuningSpec spec_of(const std::string& source, const std::map<std::string, std::string>& headers = {}) {
  TuningSpec s = TuningSpec::from_json_text(R"({
    "name": "k", "family": "user", "source": "k.cu", "kernels": ["k"],
    "parameters": [{"name": "BLOCK_SIZE", "values": [128, 256], "default": 256},
                   {"name": "ITEMS", "values": [1, 4], "default": 4}],
    "launch": [{"kernel": "k", "grid": "1", "block": "BLOCK_SIZE"}],
    "problem": {"dims": ["n"], "sizes": [{"n": 1024}]}, "workloads": ["float32"],
    "arguments": [{"name": "out", "kind": "buffer", "dtype": "float32", "count": "n", "role": "output"}],
    "reference": {"kernel": "k", "grid": "1", "block": 256}
  })", ".", false);
  s.source_text = source;
  s.headers = headers;
  return s;
}

}  // namespace

TEST_CASE("identity: comments, white space, splices and line markers do not count", "[cpu][identity]") {
  const std::string base = norm(kKernel);
  std::string noisy = kKernel;
  noisy = "// a comment at the top\n/* and a block\n   comment */\n" + noisy;
  noisy.replace(noisy.find("__device__"), 10, "__device__   /* inline */");
  noisy.replace(noisy.find("int i ="), 7, "int\n    i\t=");
  noisy += "\n\n#line 40 \"k.cu\"\n   // trailing\n";
  CHECK(norm(noisy) == base);
  std::string spliced = kKernel;
  spliced.replace(spliced.find("extern \"C\""), 10, "extern \\\n\"C\"");
  CHECK(norm(spliced) == base);
  // A string literal keeps its inside: "//" in a string is not a comment.
  CHECK(norm("const char* s = \"a // b\";") != norm("const char* s = \"a \";"));
}

TEST_CASE("identity: the fallbacks of tunable macros do not count, other conditionals do", "[cpu][identity]") {
  const std::string base = norm(kKernel);
  std::string other_default = kKernel;
  other_default.replace(other_default.find("#define BLOCK_SIZE 256"), 22, "#define BLOCK_SIZE 512");
  CHECK(norm(other_default) == base);
  std::string no_fallback = kKernel;
  no_fallback.erase(0, no_fallback.find("__device__"));
  CHECK(norm(no_fallback) == base);
  // A conditional on a macro that is not a parameter stays, both branches.
  const std::string a = "#ifdef USE_FAST\nint x = 1;\n#else\nint x = 2;\n#endif\n";
  std::string b = a;
  b.replace(b.find("2;"), 2, "3;");
  CHECK(norm(a) != norm(b));
  // #if !defined(BLOCK_SIZE) and #if defined BLOCK_SIZE are decided too; #elif/#else after them as well.
  CHECK(norm("#if !defined(BLOCK_SIZE)\nint fallback;\n#elif defined(ITEMS)\nint used;\n#else\nint no;\n#endif\n") ==
        norm("int used;"));
  CHECK(norm("#if defined BLOCK_SIZE\nint used;\n#else\nint dead;\n#endif\n") == norm("int used;"));
}

TEST_CASE("identity: a header counts as its text where it is included", "[cpu][identity]") {
  const std::string in_source = std::string(kKernel);
  // Move the device function into a header included where it stood, with an include guard and #pragma once.
  std::string moved = kKernel;
  const std::string fn = "__device__ float twice(float x) { return 2.0f * x; }\n";
  moved.replace(moved.find(fn), fn.size(), "#include \"twice.cuh\"\n");
  const std::map<std::string, std::string> guarded = {
      {"twice.cuh", "#ifndef TWICE_CUH\n#define TWICE_CUH\n// helper\n" + fn + "#endif  // TWICE_CUH\n"}};
  const std::map<std::string, std::string> pragma = {{"twice.cuh", "#pragma once\n" + fn}};
  CHECK(norm(moved, guarded) == norm(in_source));
  CHECK(norm(moved, pragma) == norm(in_source));
  CHECK(code_identity(spec_of(moved, guarded)) == code_identity(spec_of(in_source)));
  // Included twice: its text counts once, as with the guard.
  CHECK(norm("#include \"twice.cuh\"\n#include \"twice.cuh\"\n", pragma) == norm(fn));
  // A header that is not given (a system header, say) stays an include line.
  CHECK(norm("#include <cub/cub.cuh>\nint x;") != norm("int x;"));
}

TEST_CASE("identity: any change of code changes it", "[cpu][identity]") {
  const std::string base = code_identity(spec_of(kKernel));
  auto changed = [&](const std::string& from, const std::string& to) {
    std::string s = kKernel;
    REQUIRE(s.find(from) != std::string::npos);
    s.replace(s.find(from), from.size(), to);
    return code_identity(spec_of(s));
  };
  CHECK(changed("2.0f * x", "2.0f * x + 0.0f") != base);  // one more instruction
  CHECK(changed(">> 1 >", "> > 1 >") != base);           // a shift is not two comparisons
  CHECK(changed("++r", "r++") != base);
  CHECK(changed("i < n", "i <= n") != base);
  // A change in a header the source includes.
  const std::map<std::string, std::string> h1 = {{"x.cuh", "#define SCALE 2\n"}}, h2 = {{"x.cuh", "#define SCALE 3\n"}};
  const std::string with_header = std::string("#include \"x.cuh\"\n") + kKernel;
  CHECK(code_identity(spec_of(with_header, h1)) != code_identity(spec_of(with_header, h2)));
  // Entry points and extra defines are part of it.
  TuningSpec other_entry = spec_of(kKernel);
  other_entry.kernels = {"k2"};
  CHECK(code_identity(other_entry) != base);
  TuningSpec defines = spec_of(kKernel);
  defines.defines["FAST"] = "1";
  CHECK(code_identity(defines) != base);
  CHECK(base.rfind("c1:", 0) == 0);
}

TEST_CASE("identity: built-in kernels have one and stubs keep the imported rows' hash", "[cpu][identity]") {
  for (const std::string& name : specs::builtin_names()) {
    const TuningSpec s = specs::builtin_spec(name);
    INFO(name);
    CHECK(s.code_identity().rfind("c1:", 0) == 0);
    CHECK(s.code_identity() == code_identity(s));
  }
  TuningSpec stub = spec_of(kKernel);
  stub.family = "imported";
  CHECK(code_identity(stub) == kImportedSourceHash);
}
