// Kernel specs by name (tuner/specs/): a spec file's source gets the headers it includes from its own folder,
// and only where a header is not there the embedded kernel header of that name.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tuner/core/error.hpp"
#include "tuner/specs/embedded.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

const char* kSpec = R"({
  "name": "own_header", "family": "user", "source": "k.cu", "kernels": ["k"],
  "parameters": [{"name": "B", "values": [32, 64], "default": 32}],
  "launch": [{"kernel": "k", "grid": "1", "block": "B"}],
  "problem": {"dims": ["n"], "sizes": [{"n": 64}]}, "workloads": ["int32"],
  "arguments": [{"name": "out", "kind": "buffer", "dtype": "int32", "count": "n", "role": "output"}],
  "reference": {"kernel": "k", "grid": "1", "block": 32}
})";

}  // namespace

TEST_CASE("a spec file's source gets its own headers before the embedded ones", "[cpu][specs]") {
  const fs::path dir = fs::temp_directory_path() / ("autotune_specs_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  write(dir / "spec.json", kSpec);
  write(dir / "k.cu", "#include \"common/lookback.cuh\"\n#include \"util/mine.cuh\"\n"
                      "extern \"C\" __global__ void k(int* out) { out[threadIdx.x] = MINE; }\n");
  write(dir / "common/lookback.cuh", "// the user's own look-back\n#define OWN 1\n");
  write(dir / "util/mine.cuh", "#include \"util/inner.cuh\"\n#define MINE INNER\n");
  write(dir / "util/inner.cuh", "#define INNER 5\n");

  const TuningSpec s = specs::load_spec((dir / "spec.json").string());
  REQUIRE(s.headers.size() == 3);
  CHECK(s.headers.at("common/lookback.cuh") == "// the user's own look-back\n#define OWN 1\n");
  CHECK(s.headers.at("util/mine.cuh").find("#define MINE INNER") != std::string::npos);
  CHECK(s.headers.at("util/inner.cuh") == "#define INNER 5\n");

  // Without the local copy, the embedded kernel header of that name is taken; the hash follows the text.
  const std::string own_hash = s.source_hash();
  fs::remove(dir / "common/lookback.cuh");
  const TuningSpec e = specs::load_spec((dir / "spec.json").string());
  const auto embedded_text = embedded::find("common/lookback.cuh");
  REQUIRE(embedded_text);
  CHECK(e.headers.at("common/lookback.cuh") == std::string(*embedded_text));
  CHECK(e.source_hash() != own_hash);

  // A header found nowhere is left to the compiler, which names it.
  write(dir / "k.cu", "#include \"nowhere.cuh\"\nextern \"C\" __global__ void k(int* out) {}\n");
  CHECK(specs::load_spec((dir / "spec.json").string()).headers.empty());
  fs::remove_all(dir);
}

TEST_CASE("built-in specs carry the embedded headers they include", "[cpu][specs]") {
  CHECK(specs::builtin_spec("scan").headers.count("common/lookback.cuh") == 1);
  CHECK(specs::builtin_spec("scan").headers.count("scan/scan_async.cuh") == 1);
  CHECK(specs::builtin_spec("scan").headers.count("scan/scan_bulk.cuh") == 1);
  CHECK(specs::builtin_spec("scan").headers.count("scan/scan_tiles.cuh") == 1);
  CHECK(specs::builtin_spec("reduction").headers.empty());
  CHECK_THROWS_AS(specs::builtin_spec("no_such_kernel"), UsageError);
}
