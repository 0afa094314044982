// Tunable parameters and configurations.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace autotune {

/// Every tunable value is an integer (variants are enumerated; Param::labels names them for display).
using Value = std::int64_t;

/// One tunable parameter: the macro NAME passed as -DNAME=value.
struct Param {
  std::string name;
  std::vector<Value> values;             // in the order given by the spec, no duplicates
  Value default_value = 0;               // one of values
  std::map<Value, std::string> labels;   // optional names for values (e.g. variant names)
  std::string description;
  /// What the values are (spec "values" given as numbers, floats, strings or booleans, e.g. from a T1 file).
  /// integer: the value itself, in -DNAME=value and in expressions. The other kinds are stored as codes 0, 1, ...
  /// with their text as the label: -DNAME=<label> (macro_text), and in Python expressions the float, string or
  /// bool (docs/spec-format.md "Typed values").
  enum class Kind { integer, floating, string, boolean };
  Kind kind = Kind::integer;
  std::map<Value, std::string> macro_text;  // value -> the text after -DNAME= where it is not the number

  /// The text after -DNAME= for value v.
  std::string macro(Value v) const;

  /// Label for v, or the number as text.
  std::string label(Value v) const;
  /// Index of v in values, or -1.
  int index_of(Value v) const;
};

/// A full assignment of values to parameters, ordered by parameter name (canonical).
/// Value type; cheap to copy for small spaces. Comparable, printable, hashable.
class Config {
 public:
  Config() = default;
  explicit Config(std::map<std::string, Value> values) : values_(std::move(values)) {}

  const std::map<std::string, Value>& values() const { return values_; }
  bool has(const std::string& name) const { return values_.count(name) != 0; }
  /// Throws std::out_of_range naming the parameter if absent.
  Value at(const std::string& name) const;
  std::optional<Value> get(const std::string& name) const;
  void set(const std::string& name, Value v) { values_[name] = v; }

  /// Canonical JSON: {"A":1,"B":2} with keys sorted, no spaces. Stable across runs and platforms.
  std::string to_json() const;
  /// Parses the canonical (or any flat integer-valued) JSON object; throws SpecError on bad input.
  static Config from_json(const std::string& text);
  /// 16 hex digits of the hash of to_json().
  std::string hash() const;
  /// JSON for people and scripts: {"A":"label","B":2}, keys sorted; a value that its parameter labels is the
  /// label (a string), every other value the number. Config::from_json does not read it back; the number each
  /// label stands for is in to_json().
  std::string to_labelled_json(const std::vector<Param>& params) const;
  /// `text` with every identifier that names a parameter of this config replaced by its value, e.g. an entry
  /// point "reduce<BLOCK_SIZE, float>" -> "reduce<256, float>" (what NVRTC's name expression and the module's
  /// demangled names say).
  std::string substitute(const std::string& text) const;
  /// "A=1 B=2" (uses labels when params given).
  std::string str(const std::vector<Param>* params = nullptr) const;

  bool operator==(const Config& o) const { return values_ == o.values_; }
  bool operator!=(const Config& o) const { return values_ != o.values_; }
  bool operator<(const Config& o) const { return values_ < o.values_; }

 private:
  std::map<std::string, Value> values_;
};

}  // namespace autotune
