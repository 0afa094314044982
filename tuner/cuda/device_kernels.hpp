// Internal to tuner/cuda: the tuner's own kernels, compiled once per GPU architecture with NVRTC and loaded
// into the GPU executor next to the configurations it measures: the L2 flush before each timed sample, the draw
// kernel that makes inputs on the device, the prefix kernels that make a scan's expected values there, and the
// comparison kernels that verify an output against expected values kept on the device (tuner/core/check.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/check.hpp"

namespace autotune::cuda::detail {

/// Path of the tool kernels' source among the embedded files (tuner/specs/embedded.hpp): kernels_src/tools/.
constexpr const char* kToolKernelsPath = "tools/device_kernels.cu";

/// CUDA source of every tool kernel (one program, one module): the embedded kernels_src/tools/device_kernels.cu.
/// Throws EnvironmentError when it is not embedded or its first lines do not hold the hash constants of
/// tuner/core/draw.hpp. Thread-safe.
///
/// autotune_l2_flush(const uint4* buffer, unsigned long long n, unsigned* sink) reads words [0, n) of a buffer
/// (16-byte loads cached in L2 only) and in practice never writes: it evicts whatever the L2 held, dirty lines
/// included (their write-back happens during the flush, not in the next timed run), and leaves no dirty line of
/// its own, unlike a memset.
///
/// autotune_draw(void* out, u64 count, u64 chunk, u64 seed, int kind, long long lo, long long hi, int sum,
/// u64* summary): draws the input of a DrawRecipe (tuner/core/draw.hpp; kind is DrawRecipe::Kind) into out, one
/// thread per chunk, bit for bit as make_inputs() on the host, and writes each chunk's DrawChunk as
/// kDrawSummaryWords words (sum, comp, max_abs, min, max as double bits, hash, wrapped) unless summary is null.
///
/// autotune_prefix_totals(const void* in, u64 count, u64 chunk, int elem, int is_max, double* state),
/// autotune_prefix_carries(double* state, u64 chunks, int elem, int is_max) and autotune_prefix_write(const void*
/// in, void* values, void* tolerance, u64 count, u64 chunk, int elem, int is_max, int exclusive, double scale,
/// double* state), in this order: the expected values of a PrefixRecipe (tuner/core/draw.hpp; elem is
/// PrefixRecipe::Elem), one thread per chunk, with kPrefixStateWords doubles of state per chunk; the write
/// leaves in the first word of each chunk's state the FNV-1a hash (kDrawHashBasis, kDrawHashPrime) of what it
/// wrote there, element by element: the value's bits, then (float sums) the tolerance's.
///
/// autotune_compare_<kind>(const void* got, const void* expected, const void* tolerance,
/// unsigned long long count, unsigned long long chunk, unsigned element_bytes, double relative,
/// unsigned long long* results): block b compares elements [b * chunk, min((b + 1) * chunk, count)) with the
/// predicate of element_matches() and writes results[2b] = its mismatches, results[2b + 1] = its lowest
/// mismatching index (all ones if none). Loads are streaming (evict-first): the buffers are read once.
///
/// The hash constants of tuner/core/draw.hpp (kDrawHashBasis, kDrawHashPrime) are written out in the source's
/// first lines, which tool_kernels_source() checks.
const std::string& tool_kernels_source();

/// NVRTC options of tool_kernels_source() (no fused multiply-add, so the comparisons round like the host's).
std::vector<std::string> tool_kernels_options();

/// Entry point of the draw kernel, its threads per block and the words of one chunk's summary.
constexpr const char* kDrawKernel = "autotune_draw";
constexpr unsigned kDrawBlockThreads = 32;
constexpr std::size_t kDrawSummaryWords = 7;

/// Entry points of the prefix kernels and the doubles of state per chunk.
constexpr const char* kPrefixTotalsKernel = "autotune_prefix_totals";
constexpr const char* kPrefixCarriesKernel = "autotune_prefix_carries";
constexpr const char* kPrefixWriteKernel = "autotune_prefix_write";
constexpr std::size_t kPrefixStateWords = 4;

/// Entry point of the L2 flush kernel.
constexpr const char* kL2FlushKernel = "autotune_l2_flush";

/// Bytes of the buffer the L2 flush reads on a GPU with l2_bytes of L2: twice the L2, in whole 32-bit words
/// (the buffer is filled with cuMemsetD32); 0 when the L2 size is not known (l2_bytes <= 0: no flush).
std::size_t l2_flush_bytes(int l2_bytes);

/// Entry point of the comparison kernel for a check's kind and element size.
std::string compare_kernel_name(const OutputCheck& c);

/// Threads per block of the comparison kernels.
constexpr unsigned kCompareBlockThreads = 256;
/// Most blocks of one comparison (its results buffer holds 2 x this many u64).
constexpr std::uint64_t kCompareMaxBlocks = 4096;
/// Elements a block compares at least (fewer blocks for small outputs).
constexpr std::uint64_t kCompareMinChunk = 8192;

}  // namespace autotune::cuda::detail
