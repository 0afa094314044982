#include "tuner/core/check.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "tuner/core/error.hpp"

namespace autotune {

namespace {

template <typename T>
T load(const unsigned char* base, std::size_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}

double load_float(const unsigned char* base, std::uint32_t bytes, std::size_t i) {
  return bytes == 4 ? static_cast<double>(load<float>(base, i)) : load<double>(base, i);
}

std::string number_text(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

/// One element's bytes as text, by the check's kind and element size.
std::string value_text(const OutputCheck& c, const std::vector<unsigned char>& b, bool expected_side) {
  const std::size_t n = b.size();
  const bool as_float =
      (c.kind != OutputCheck::Kind::bits && c.kind != OutputCheck::Kind::user_kernel) || c.floating;
  if (as_float && (n == 4 || n == 8)) {
    const double v = n == 4 ? static_cast<double>(load<float>(b.data(), 0)) : load<double>(b.data(), 0);
    return number_text(v, n == 4 && !(expected_side && c.kind == OutputCheck::Kind::abs_tolerance) ? 9 : 17);
  }
  switch (n) {
    case 1: return std::to_string(static_cast<int>(load<std::int8_t>(b.data(), 0)));
    case 2: return std::to_string(load<std::int16_t>(b.data(), 0));
    case 4: return std::to_string(load<std::int32_t>(b.data(), 0));
    case 8: return std::to_string(static_cast<long long>(load<std::int64_t>(b.data(), 0)));
    default: break;
  }
  std::string hex = "0x";
  static const char* digits = "0123456789abcdef";
  for (std::size_t k = n; k-- > 0;) {  // little-endian bytes, most significant first
    hex += digits[b[k] >> 4];
    hex += digits[b[k] & 15];
  }
  return hex;
}

}  // namespace

void OutputCheck::validate(std::size_t output_bytes, std::size_t expected_bytes, std::size_t tolerance_bytes) const {
  const std::string what = "comparison of output '" + output + "'";
  if (element_bytes == 0) throw UsageError(what + ": element size 0");
  if (kind == Kind::user_kernel && kernel.empty()) throw UsageError(what + ": no comparison kernel named");
  if (kind != Kind::bits && kind != Kind::user_kernel && element_bytes != 4 && element_bytes != 8)
    throw UsageError(what + ": a floating-point comparison needs elements of 4 or 8 bytes, not " +
                     std::to_string(element_bytes));
  if (kind == Kind::abs_tolerance && reference_bytes != 4 && reference_bytes != 8)
    throw UsageError(what + ": expected values and tolerances must be floats or doubles (4 or 8 bytes), not " +
                     std::to_string(reference_bytes));
  if (count > output_bytes / element_bytes)
    throw UsageError(what + ": " + std::to_string(count) + " elements of " + std::to_string(element_bytes) +
                     " bytes exceed the output's " + std::to_string(output_bytes) + " bytes");
  if (count > expected_bytes / expected_element_bytes())
    throw UsageError(what + ": expected buffer '" + expected + "' holds " + std::to_string(expected_bytes) +
                     " bytes, fewer than " + std::to_string(count) + " elements");
  if (kind == Kind::abs_tolerance && count > tolerance_bytes / reference_bytes)
    throw UsageError(what + ": tolerance buffer '" + tolerance + "' holds " + std::to_string(tolerance_bytes) +
                     " bytes, fewer than " + std::to_string(count) + " values of " + std::to_string(reference_bytes) +
                     " bytes");
}

bool nan_agrees(double got, double expected, const unsigned char* got_bits, std::uint32_t got_bytes) {
  if (!std::isnan(got) || !std::isnan(expected)) return false;
  for (std::uint32_t k = 0; k < got_bytes; ++k)
    if (got_bits[k] != kPoisonByte) return true;
  return false;  // the poison: never written
}

bool element_matches(const OutputCheck& c, const unsigned char* got, const unsigned char* expected,
                     const unsigned char* tol, std::size_t i) {
  const std::uint32_t es = c.element_bytes;
  switch (c.kind) {
    case OutputCheck::Kind::bits: return std::memcmp(got + i * es, expected + i * es, es) == 0;
    case OutputCheck::Kind::float_equal: {
      const double g = load_float(got, es, i), e = load_float(expected, es, i);
      return g == e || nan_agrees(g, e, got + i * es, es);
    }
    case OutputCheck::Kind::abs_tolerance: {
      const double g = load_float(got, es, i), e = load_float(expected, c.reference_bytes, i);
      return std::fabs(g - e) <= load_float(tol, c.reference_bytes, i) || nan_agrees(g, e, got + i * es, es);
    }
    case OutputCheck::Kind::rel_tolerance: {
      const double g = load_float(got, es, i), e = load_float(expected, es, i);
      return (std::isfinite(g) && std::fabs(g - e) <= c.absolute + c.relative * std::fmax(std::fabs(e), 1e-30)) ||
             nan_agrees(g, e, got + i * es, es);
    }
    case OutputCheck::Kind::user_kernel: break;  // compare_on_host refuses it
  }
  return false;
}

CheckVerdict compare_on_host(const OutputCheck& c, const std::vector<unsigned char>& got,
                             const std::vector<unsigned char>& expected, const std::vector<unsigned char>& tolerance) {
  if (c.kind == OutputCheck::Kind::user_kernel)
    throw UsageError("output '" + c.output + "' is verified by the comparison kernel '" + c.kernel +
                     "', which runs on the GPU only (not with --verify host)");
  c.validate(got.size(), expected.size(), tolerance.size());
  CheckVerdict v;
  if (c.kind == OutputCheck::Kind::bits && c.count > 0 &&
      std::memcmp(got.data(), expected.data(), c.count * c.element_bytes) == 0)
    return v;  // the common case at memcmp speed
  const std::size_t ees = c.expected_element_bytes();
  for (std::uint64_t i = 0; i < c.count; ++i) {
    if (element_matches(c, got.data(), expected.data(), tolerance.data(), i)) continue;
    if (v.mismatches++ < kMaxMismatchExamples) {
      Mismatch m;
      m.index = i;
      m.got.assign(got.begin() + static_cast<std::ptrdiff_t>(i * c.element_bytes),
                   got.begin() + static_cast<std::ptrdiff_t>((i + 1) * c.element_bytes));
      m.expected.assign(expected.begin() + static_cast<std::ptrdiff_t>(i * ees),
                        expected.begin() + static_cast<std::ptrdiff_t>((i + 1) * ees));
      if (c.kind == OutputCheck::Kind::abs_tolerance) m.tolerance = load_float(tolerance.data(), c.reference_bytes, i);
      v.examples.push_back(std::move(m));
    }
  }
  return v;
}

bool passes(const OutputCheck& c, const CheckVerdict& v) { return v.mismatches <= c.max_mismatches; }

bool is_verification_failure(const std::string& message) {
  return !message.empty() && message.rfind(kAcceptedPrefix, 0) != 0;
}

std::string verdict_message(const std::vector<OutputCheck>& checks, const std::vector<CheckVerdict>& verdicts,
                            const std::string& where) {
  std::string accepted;
  for (std::size_t i = 0; i < checks.size() && i < verdicts.size(); ++i) {
    if (!passes(checks[i], verdicts[i])) return describe(checks[i], verdicts[i], where);
    if (!verdicts[i].ok()) accepted += (accepted.empty() ? "" : "; ") + describe(checks[i], verdicts[i], where);
  }
  return accepted.empty() ? "" : kAcceptedPrefix + accepted;
}

std::string verify_on_host(const std::vector<OutputCheck>& checks, const HostBuffers& outputs,
                           const HostBuffers& expected, const std::string& where) {
  static const std::vector<unsigned char> none;
  std::vector<CheckVerdict> verdicts;
  for (const OutputCheck& c : checks) {
    auto got = outputs.find(c.output);
    if (got == outputs.end()) return "output '" + c.output + "' is missing" + where;
    auto want = expected.find(c.expected);
    if (want == expected.end()) return "expected values '" + c.expected + "' are missing" + where;
    const std::vector<unsigned char>* tol = &none;
    if (c.kind == OutputCheck::Kind::abs_tolerance) {
      auto t = expected.find(c.tolerance);
      if (t == expected.end()) return "tolerances '" + c.tolerance + "' are missing" + where;
      tol = &t->second;
    }
    verdicts.push_back(compare_on_host(c, got->second, want->second, *tol));
    if (!passes(c, verdicts.back())) break;
  }
  return verdict_message(checks, verdicts, where);
}

std::string describe(const OutputCheck& c, const CheckVerdict& v, const std::string& where) {
  if (v.ok()) return "";
  auto one = [&](const Mismatch& m) {
    std::string s = c.output + "[" + std::to_string(m.index) + "] = " + value_text(c, m.got, false) +
                    " but expected " + value_text(c, m.expected, true);
    if (c.kind == OutputCheck::Kind::abs_tolerance && m.got.size() == c.element_bytes &&
        m.expected.size() == c.reference_bytes) {
      const double err =
          std::fabs(load_float(m.got.data(), c.element_bytes, 0) - load_float(m.expected.data(), c.reference_bytes, 0));
      s += " (|error| " + number_text(err, 6) + " > tolerance " + number_text(m.tolerance, 6) + ")";
    }
    const bool float_kind = c.kind == OutputCheck::Kind::float_equal || c.kind == OutputCheck::Kind::abs_tolerance ||
                            c.kind == OutputCheck::Kind::rel_tolerance;
    const std::size_t ees = c.expected_element_bytes();
    if (float_kind && m.got.size() == c.element_bytes && m.expected.size() == ees && (ees == 4 || ees == 8)) {
      const bool got_nan = std::isnan(load_float(m.got.data(), c.element_bytes, 0));
      const bool want_nan = std::isnan(load_float(m.expected.data(), static_cast<std::uint32_t>(ees), 0));
      if (got_nan && want_nan)
        s += " (never written: the output still holds the poison)";
      else if (got_nan || want_nan)
        s += " (NaN in only one of them; NaN in both agrees)";
    }
    return s;
  };
  std::string msg = v.examples.empty() ? c.output + " differs" : one(v.examples.front());
  msg += "; " + std::to_string(v.mismatches) + " of " + std::to_string(c.count) + " elements differ";
  if (c.kind == OutputCheck::Kind::user_kernel) msg += " (comparison kernel " + c.kernel + ")";
  if (c.max_mismatches > 0) msg += " (at most " + std::to_string(c.max_mismatches) + " may)";
  for (std::size_t k = 1; k < v.examples.size(); ++k) {
    msg += (k == 1 ? "; also " : ", ") + one(v.examples[k]);
  }
  return msg + where;
}

}  // namespace autotune
