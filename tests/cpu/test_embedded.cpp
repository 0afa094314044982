// The embedded kernel sources, specs and headers (tuner/specs/embedded_lookup.cc).
#include <catch2/catch.hpp>

#include <string>

#include "tuner/specs/embedded.hpp"

using namespace autotune;

namespace {

std::string header_paths(std::string_view source) {
  std::string out;
  for (const embedded::File* h : embedded::headers_for(source)) out += std::string(out.empty() ? "" : " ") + h->path;
  return out;
}

}  // namespace

TEST_CASE("headers_for: the kernel headers a source includes by name", "[cpu][kernels]") {
  CHECK(header_paths(*embedded::find("scan/scan.cu")) ==
        "common/bulk_copy.cuh common/cache_hints.cuh common/lookback.cuh scan/scan_async.cuh scan/scan_bulk.cuh "
        "scan/scan_tiles.cuh");
  CHECK(header_paths(*embedded::find("compaction/compaction.cu")) ==
        "common/bulk_copy.cuh common/cache_hints.cuh common/lookback.cuh compaction/compaction_bulk.cuh");
  CHECK(header_paths(*embedded::find("reduction/reduction.cu")).empty());
  CHECK(header_paths("#include \"common/lookback.cuh\"\n").size() > 0);
  // Named, not mentioned: the path outside quotes (a comment) or a longer name is no include.
  CHECK(header_paths("// see common/lookback.cuh\n").empty());
  CHECK(header_paths("#include \"xcommon/lookback.cuh\"\n").empty());
  CHECK(embedded::find("common/lookback.cuh")->back() != '\0');  // the size excludes the terminating NUL
}
