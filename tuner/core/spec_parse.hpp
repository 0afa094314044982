// Internal to tuner/core: the pieces of the spec parser that spec.cpp (the spec as a whole) and
// spec_arguments.cpp (the arguments of user kernels and their data) share. Errors are SpecErrors with the JSON
// pointer of the field.
#pragma once
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "tuner/core/expr/pyexpr.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::spec_parse {

using nlohmann::json;

std::string join_ptr(const std::string& base, const std::string& key);
std::string join_ptr(const std::string& base, std::size_t i);
const char* type_name(const json& j);
/// SpecError at the first key of obj that is not in `allowed`, listing them.
void check_keys(const json& obj, const std::string& ptr, const std::set<std::string>& allowed);
const json& require(const json& obj, const std::string& ptr, const std::string& key);
std::string get_string(const json& j, const std::string& ptr);
std::int64_t get_int(const json& j, const std::string& ptr);

/// The expression language of the spec being parsed: the project's (C-like) or, with "expressions": "python",
/// Python's (T1 files), whose typed parameters decode through `decoders`. TuningSpec::from_json_text sets it for
/// its parse; thread-local, so specs parse on several threads at once.
struct ExprLanguage {
  bool python = false;
  PyDecoders decoders;
};
ExprLanguage& expr_language();

/// An expression (a string, or an integer) in the spec's language.
Expr get_expr(const json& j, const std::string& ptr);
/// "grid"/"block": one expression or an array of 1 to 3; missing dimensions are 1.
void get_dim3(const json& obj, const std::string& ptr, const std::string& key, Expr& x, Expr& y, Expr& z,
              bool required);
LaunchSpec parse_launch(const json& j, const std::string& ptr, bool named);
std::string read_file(const std::string& path, const std::string& ptr);
/// rel against base_dir ("" or an absolute rel: rel itself).
std::string resolve(const std::string& base_dir, const std::string& rel);
bool is_float_dtype(const std::string& d);
VerifyPolicy parse_policy(const json& j, const std::string& ptr);

/// "arguments" of a user kernel (spec_arguments.cpp); files are read when load_sources.
void parse_arguments(const json& j, TuningSpec& s, const std::string& base_dir, bool load_sources);

}  // namespace autotune::spec_parse
