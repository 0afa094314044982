// How an output buffer is compared with its expected values: a description that the CUDA backend runs as a
// comparison kernel on the GPU (the expected values stay on the device for the problem's lifetime, only a
// verdict comes back) and that compare_on_host() runs on the CPU, element by element with the same predicate.
// Adapters describe their comparisons with KernelAdapter::checks(); pure data, no CUDA.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/core/plan.hpp"

namespace autotune {

struct OutputCheck {
  enum class Kind : std::uint8_t {
    bits,           // every element bit-exact (integers, moved values, counts); any element size
    float_equal,    // float/double values equal as numbers (+0 == -0; NaN in both agrees, see nan_agrees());
                    // element 4 or 8 bytes
    abs_tolerance,  // |got - expected| <= tolerance[i] in double arithmetic, expected and tolerance as floats
                    // or doubles (reference_bytes); NaN in both agrees
    rel_tolerance,  // got finite and |got - expected| <= absolute + relative * max(|expected|, 1e-30), same type;
                    // NaN in both agrees
    user_kernel,    // the user's comparison kernel `kernel` decides (GPU only; see kUserCompareContract)
  };
  Kind kind = Kind::bits;
  std::string output;              // output buffer of the launch plan
  std::string expected;            // buffer of the adapter's expected HostBuffers
  std::string tolerance;           // abs_tolerance: expected buffer of per-element tolerances
  std::string kernel;              // user_kernel: entry point of the comparison kernel (extern "C" or C++ name)
  std::uint32_t element_bytes = 4; // of the output's elements (float kinds: 4 = float, 8 = double)
  std::uint64_t count = 0;         // elements compared, from the start of output and expected
  double relative = 0;             // rel_tolerance
  double absolute = 0;             // rel_tolerance: an absolute error accepted on top of the relative one
  std::uint64_t max_mismatches = 0;  // elements that may differ while the output still passes (a verification
                                     // policy's fraction of count); the log keeps them either way
  std::uint32_t reference_bytes = 8;  // abs_tolerance: bytes of each expected value and tolerance (8 double,
                                      // 4 float: half the bytes for the comparison kernel to read)
  bool floating = false;           // messages print bits elements of 4 or 8 bytes as float/double (else as
                                   // signed integers; other sizes as hex); float kinds always print as floats

  /// Bytes of one expected element (reference_bytes for abs_tolerance, else element_bytes).
  std::size_t expected_element_bytes() const { return kind == Kind::abs_tolerance ? reference_bytes : element_bytes; }
  /// UsageError unless the kind, element size and count fit buffers of these sizes (tolerance_bytes only read
  /// for abs_tolerance).
  void validate(std::size_t output_bytes, std::size_t expected_bytes, std::size_t tolerance_bytes) const;
};

/// What a user comparison kernel (OutputCheck::Kind::user_kernel) must be, for messages and docs: it is launched
/// once per verified run as kernel(const T* got, const T* expected, unsigned long long count,
/// unsigned long long* result) with kUserCompareBlockThreads threads per block and at most kUserCompareMaxBlocks
/// blocks (so it walks the elements with a grid-stride loop); result[0] starts at 0 and result[1] at ~0ull; the
/// kernel adds its number of mismatching elements to result[0] (atomicAdd) and lowers result[1] to the smallest
/// mismatching index (atomicMin).
inline constexpr unsigned kUserCompareBlockThreads = 256;
inline constexpr unsigned kUserCompareMaxBlocks = 4096;

/// The byte every output and scratch buffer is filled with before a verified run (NaN for floats, -1 for signed
/// integers), so that an element a configuration never writes cannot match.
inline constexpr unsigned char kPoisonByte = 0xFF;

/// The float kinds' rule for NaN (float_equal, abs_tolerance, rel_tolerance; the comparison kernels apply the same):
/// a NaN in the output where the expected value is a NaN too agrees (a kernel that computes NaN there, as its
/// reference did, is right), unless the output's element is the poison itself (every byte kPoisonByte), which means
/// the configuration never wrote it. A NaN in only one of them is a mismatch. `got_bits` are the element's bytes.
bool nan_agrees(double got, double expected, const unsigned char* got_bits, std::uint32_t got_bytes);

/// One mismatching element: its index and raw bytes (got: element_bytes; expected: expected_element_bytes()).
struct Mismatch {
  std::uint64_t index = 0;
  std::vector<unsigned char> got, expected;
  double tolerance = 0;  // abs_tolerance only
};

/// What a comparison found. examples are in ascending index order and examples[0] is the lowest mismatching
/// index; on the GPU the further examples are the first mismatch of later regions of the buffer, on the host
/// the next mismatches.
struct CheckVerdict {
  std::uint64_t mismatches = 0;
  std::vector<Mismatch> examples;
  bool ok() const { return mismatches == 0; }
};

/// Whether a verdict passes c: at most c.max_mismatches elements differ.
bool passes(const OutputCheck& c, const CheckVerdict& v);

/// Prefix of a verification message whose mismatches the checks' policies accept: the configuration is correct
/// and the message (the count and the first mismatches) goes to its log.
inline constexpr const char* kAcceptedPrefix = "accepted: ";

/// Whether a verification message (KernelAdapter::verify, verify_on_host, verdict_message) reports a failure:
/// not empty and not accepted.
bool is_verification_failure(const std::string& message);

/// The message of the verdicts of `checks` (same order): describe() of the first that does not pass; else
/// kAcceptedPrefix + the descriptions of those with accepted mismatches; else "".
std::string verdict_message(const std::vector<OutputCheck>& checks, const std::vector<CheckVerdict>& verdicts,
                            const std::string& where);

/// Examples a verdict carries at most.
constexpr std::size_t kMaxMismatchExamples = 8;

/// The predicate of the comparison for element i (pointers to the whole buffers; tol only for abs_tolerance).
bool element_matches(const OutputCheck& c, const unsigned char* got, const unsigned char* expected,
                     const unsigned char* tol, std::size_t i);

/// Host twin of the comparison kernel. Throws UsageError if the buffers are too small (validate()) or for a
/// user_kernel check (its predicate exists only as the user's GPU code).
CheckVerdict compare_on_host(const OutputCheck& c, const std::vector<unsigned char>& got,
                             const std::vector<unsigned char>& expected, const std::vector<unsigned char>& tolerance);

/// Runs every check of `checks` on the host against outputs and expected (by buffer name); the
/// verdict_message() of the verdicts. A missing buffer is a mismatch message.
std::string verify_on_host(const std::vector<OutputCheck>& checks, const HostBuffers& outputs,
                           const HostBuffers& expected, const std::string& where);

/// "out[12] = 3.5 but expected 4 (|error| 0.5 > tolerance 1e-06); 1 of 1048576 elements differ; also at
/// out[70000] (3 but expected 2), ... (where)". Values printed by kind, element size and `floating`.
std::string describe(const OutputCheck& c, const CheckVerdict& v, const std::string& where);

}  // namespace autotune
