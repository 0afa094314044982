// What a workload of the reduction family asks for: the custom operators of the spec's family_options and the
// classification of a workload (element type, operator). See tuner/kernels/reduction_kind.hpp.
#include "tuner/kernels/reduction_kind.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "tuner/core/error.hpp"

namespace autotune::kernels::reduction::detail {

namespace {

using json = nlohmann::json;

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string custom_string(const json& op, const std::string& ptr, const char* key, bool required) {
  if (!op.contains(key)) {
    if (required) throw SpecError(ptr, std::string("custom operator needs \"") + key + "\"");
    return {};
  }
  const json& v = op.at(key);
  if (!v.is_string()) throw SpecError(ptr + "/" + key, "expected a string");
  std::string s = v.get<std::string>();
  if (s.find_first_of("\n\r") != std::string::npos)
    throw SpecError(ptr + "/" + key, "must be a single line (it is passed to NVRTC as a -D macro)");
  if (required && s.find_first_not_of(" \t") == std::string::npos)
    throw SpecError(ptr + "/" + key, "must not be empty");
  return s;
}

}  // namespace

std::vector<CustomOp> parse_custom_ops(const std::string& family_options_json) {
  json fo;
  try {
    fo = json::parse(family_options_json);
  } catch (const json::parse_error& e) {
    throw SpecError("/family_options", std::string("malformed JSON: ") + e.what());
  }
  std::vector<CustomOp> out;
  if (!fo.is_object()) throw SpecError("/family_options", "expected an object");
  for (auto it = fo.begin(); it != fo.end(); ++it)
    if (it.key() != "custom_ops" && it.key() != "$comment")
      throw SpecError("/family_options/" + it.key(), "unknown key (the reduction family knows \"custom_ops\")");
  if (!fo.contains("custom_ops")) return out;
  const json& ops = fo["custom_ops"];
  if (!ops.is_array()) throw SpecError("/family_options/custom_ops", "expected an array of operators");
  std::set<std::string> names;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const std::string ptr = "/family_options/custom_ops/" + std::to_string(i);
    const json& o = ops[i];
    if (!o.is_object()) throw SpecError(ptr, "expected an object");
    for (auto it = o.begin(); it != o.end(); ++it) {
      static const std::set<std::string> known = {"name",    "dtype",         "combine",     "identity",
                                                  "prelude", "cpu_reference", "description", "$comment"};
      if (!known.count(it.key())) throw SpecError(ptr + "/" + it.key(), "unknown key");
    }
    CustomOp op;
    op.name = custom_string(o, ptr, "name", true);
    if (!is_identifier(op.name)) throw SpecError(ptr + "/name", "'" + op.name + "' is not an identifier");
    if (op.name == "sum" || op.name == "min" || op.name == "max")
      throw SpecError(ptr + "/name", "'" + op.name + "' is a built-in operator");
    if (!names.insert(op.name).second) throw SpecError(ptr + "/name", "duplicate operator '" + op.name + "'");
    op.dtype = custom_string(o, ptr, "dtype", true);
    static const std::set<std::string> dtypes = {"int32", "float32", "float64", "float2", "float3", "float4"};
    if (!dtypes.count(op.dtype))
      throw SpecError(ptr + "/dtype", "unsupported dtype '" + op.dtype +
                                          "' (custom operators: int32, float32, float64, float2, float3, float4)");
    op.combine = custom_string(o, ptr, "combine", true);
    op.identity = custom_string(o, ptr, "identity", true);
    op.prelude = custom_string(o, ptr, "prelude", false);
    op.cpu_reference = custom_string(o, ptr, "cpu_reference", false);
    if (!op.cpu_reference.empty()) {
      if (op.cpu_reference != "maxmag")
        throw SpecError(ptr + "/cpu_reference", "unknown CPU reference '" + op.cpu_reference + "' (known: maxmag)");
      if (op.dtype != "float3") throw SpecError(ptr + "/cpu_reference", "the maxmag CPU reference needs dtype float3");
    }
    if (o.contains("description") && !o["description"].is_string())
      throw SpecError(ptr + "/description", "expected a string");
    out.push_back(std::move(op));
  }
  return out;
}

Kind classify(const TuningSpec& spec, const std::vector<CustomOp>& custom_ops, const Workload& w) {
  spec.check_workload(w);
  Kind k;
  const CustomOp* custom = nullptr;
  for (const auto& op : custom_ops)
    if (op.name == w.op) custom = &op;
  if (custom != nullptr) {
    if (custom->dtype != w.dtype)
      throw UsageError("workload " + w.key() + ": custom operator '" + w.op + "' is defined for dtype " +
                       custom->dtype);
    k.op = Op::custom;
    k.custom = custom;
  } else if (w.op == "sum") {
    k.op = Op::sum;
  } else if (w.op == "min") {
    k.op = Op::min;
  } else if (w.op == "max") {
    k.op = Op::max;
  } else {
    throw UsageError("workload " + w.key() + ": unknown operator '" + w.op +
                     "' (built-in: sum, min, max; custom operators come from family_options.custom_ops)");
  }
  if (w.dtype == "int32") {
    k.elem = Elem::int32;
  } else if (w.dtype == "float32") {
    k.elem = Elem::float32;
  } else if (w.dtype == "float64") {
    k.elem = Elem::float64;
  } else if (custom != nullptr && (w.dtype == "float2" || w.dtype == "float3" || w.dtype == "float4")) {
    k.elem = Elem::vector;
    k.components = w.dtype[5] - '0';
  } else {
    throw UsageError("workload " + w.key() + ": unsupported dtype '" + w.dtype +
                     "' (int32, float32, float64; float2/3/4 with a custom operator)");
  }
  k.size = dtype_size(w.dtype);
  return k;
}

}  // namespace autotune::kernels::reduction::detail
