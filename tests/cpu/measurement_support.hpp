// Helpers of the tests that carry a whole measurement somewhere and back (test_trials.cpp: the trials table;
// test_protocol.cpp: the MPI JSON): every field set through the field visitors, and the fields that differ.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tuner/core/trial.hpp"

namespace autotune_test {

/// Sets every field that v's visitor (Measurement::for_each_field, Observation::for_each_field, or any record's
/// with the same shape) visits to a value of its own, none of them a default: strings "<field>-<offset>", numbers
/// offset + their position (doubles + 0.125, the 64-bit ones + 2^40), two samples, the status wrong_result.
struct DistinctFields {
  int offset = 0;
  int k = 0;

  template <typename T>
  void operator()(const char* name, T& v) {
    ++k;
    if constexpr (std::is_same_v<T, autotune::Observation>)
      autotune::Observation::for_each_field(v, *this);
    else if constexpr (std::is_same_v<T, autotune::TrialStatus>)
      v = autotune::TrialStatus::wrong_result;
    else if constexpr (std::is_same_v<T, std::string>)
      v = std::string(name) + "-" + std::to_string(offset);
    else if constexpr (std::is_same_v<T, std::vector<double>>)
      v = {offset + k + 0.5, offset + k + 1.25};
    else if constexpr (std::is_same_v<T, std::vector<autotune::Metric>>)
      v = {{std::string(name) + "-a", offset + k + 0.75, "byte"}, {std::string(name) + "-b", offset + k + 2.5, "ms"}};
    else if constexpr (std::is_same_v<T, double>)
      v = offset + k + 0.125;
    else if constexpr (std::is_same_v<T, int>)
      v = offset + k;
    else
      v = (T{1} << 40) + static_cast<T>(offset + k);
  }
};

/// A measurement with every field (Measurement::for_each_field, the observation's included) set by DistinctFields.
inline autotune::Measurement distinct_measurement(int offset = 0) {
  autotune::Measurement m;
  autotune::Measurement::for_each_field(m, DistinctFields{offset});
  return m;
}

/// Each visited field as (name, text); the observation's as "observed.<name>".
struct FieldTexts {
  std::vector<std::pair<std::string, std::string>> out;
  std::string prefix;

  template <typename T>
  void operator()(const char* name, const T& v) {
    const std::string key = prefix + name;
    if constexpr (std::is_same_v<T, autotune::Observation>) {
      FieldTexts inner{{}, key + "."};
      autotune::Observation::for_each_field(v, inner);
      out.insert(out.end(), inner.out.begin(), inner.out.end());
    } else if constexpr (std::is_same_v<T, autotune::TrialStatus>) {
      out.emplace_back(key, autotune::to_string(v));
    } else if constexpr (std::is_same_v<T, std::string>) {
      out.emplace_back(key, v);
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      std::string s;
      for (double x : v) s += number(x) + ",";
      out.emplace_back(key, s);
    } else if constexpr (std::is_same_v<T, std::vector<autotune::Metric>>) {
      std::string s;
      for (const autotune::Metric& m : v) s += m.name + "=" + number(m.value) + " " + m.unit + ",";
      out.emplace_back(key, s);
    } else if constexpr (std::is_integral_v<T>) {
      out.emplace_back(key, std::to_string(v));
    } else {
      out.emplace_back(key, number(v));
    }
  }
  static std::string number(double x) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  }
};

/// The fields of two measurements (Measurement::for_each_field) that differ, as "name: a-value != b-value".
inline std::vector<std::string> differing_fields(const autotune::Measurement& a, const autotune::Measurement& b) {
  FieldTexts ta, tb;
  autotune::Measurement::for_each_field(a, ta);
  autotune::Measurement::for_each_field(b, tb);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < ta.out.size(); ++i)
    if (ta.out[i].second != tb.out[i].second)
      out.push_back(ta.out[i].first + ": " + ta.out[i].second + " != " + tb.out[i].second);
  return out;
}

}  // namespace autotune_test
