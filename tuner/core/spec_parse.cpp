#include "tuner/core/spec_parse.hpp"

#include <fstream>
#include <sstream>

#include "tuner/core/error.hpp"

namespace autotune::spec_parse {

ExprLanguage& expr_language() {
  thread_local ExprLanguage lang;
  return lang;
}

std::string join_ptr(const std::string& base, const std::string& key) { return base + "/" + key; }
std::string join_ptr(const std::string& base, std::size_t i) { return base + "/" + std::to_string(i); }

const char* type_name(const json& j) { return j.type_name(); }

void check_keys(const json& obj, const std::string& ptr, const std::set<std::string>& allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (!allowed.count(it.key())) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw SpecError(join_ptr(ptr, it.key()), "unknown key '" + it.key() + "' (allowed: " + list + ")");
    }
}

const json& require(const json& obj, const std::string& ptr, const std::string& key) {
  if (!obj.contains(key)) throw SpecError(join_ptr(ptr, key), "required key '" + key + "' is missing");
  return obj.at(key);
}

std::string get_string(const json& j, const std::string& ptr) {
  if (!j.is_string()) throw SpecError(ptr, std::string("expected a string, got ") + type_name(j));
  return j.get<std::string>();
}

std::int64_t get_int(const json& j, const std::string& ptr) {
  if (!j.is_number_integer()) throw SpecError(ptr, std::string("expected an integer, got ") + type_name(j));
  // Unsigned JSON integers above INT64_MAX would wrap to negative values (found by fuzz_spec).
  if (j.is_number_unsigned() && j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw SpecError(ptr, "integer " + j.dump() + " is out of range (largest: " + std::to_string(INT64_MAX) + ")");
  return j.get<std::int64_t>();
}

Expr get_expr(const json& j, const std::string& ptr) {
  std::string text;
  if (j.is_number_integer())
    text = std::to_string(get_int(j, ptr));
  else if (j.is_string())
    text = j.get<std::string>();
  else
    throw SpecError(ptr, std::string("expected an expression (string or integer), got ") + type_name(j));
  try {
    const ExprLanguage& lang = expr_language();
    return lang.python ? Expr::python(text, lang.decoders) : Expr::parse(text);
  } catch (const ExprError& e) {
    throw SpecError(ptr, e.what());
  }
}

void get_dim3(const json& obj, const std::string& ptr, const std::string& key, Expr& x, Expr& y, Expr& z,
              bool required) {
  Expr one = Expr::parse("1");
  x = y = z = one;
  if (!obj.contains(key)) {
    if (required) throw SpecError(join_ptr(ptr, key), "required key '" + key + "' is missing");
    return;
  }
  const json& j = obj.at(key);
  std::string p = join_ptr(ptr, key);
  if (j.is_array()) {
    if (j.empty() || j.size() > 3) throw SpecError(p, "expected 1 to 3 expressions");
    Expr* out[3] = {&x, &y, &z};
    for (std::size_t i = 0; i < j.size(); ++i) *out[i] = get_expr(j[i], join_ptr(p, i));
  } else {
    x = get_expr(j, p);
  }
}

LaunchSpec parse_launch(const json& j, const std::string& ptr, bool named) {
  if (!j.is_object()) throw SpecError(ptr, "expected an object");
  std::set<std::string> keys = {"kernel", "grid", "block", "shared_mem"};
  if (named) keys.insert({"name", "source"});
  check_keys(j, ptr, keys);
  LaunchSpec l;
  l.kernel = get_string(require(j, ptr, "kernel"), join_ptr(ptr, "kernel"));
  l.name = j.contains("name") ? get_string(j.at("name"), join_ptr(ptr, "name")) : l.kernel;
  get_dim3(j, ptr, "grid", l.grid_x, l.grid_y, l.grid_z, true);
  get_dim3(j, ptr, "block", l.block_x, l.block_y, l.block_z, true);
  l.shared_bytes =
      j.contains("shared_mem") ? get_expr(j.at("shared_mem"), join_ptr(ptr, "shared_mem")) : Expr::parse("0");
  return l;
}

std::string read_file(const std::string& path, const std::string& ptr) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(ptr, "cannot read source file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string resolve(const std::string& base_dir, const std::string& rel) {
  if (rel.empty() || rel[0] == '/' || base_dir.empty()) return rel;
  return base_dir + "/" + rel;
}

bool is_float_dtype(const std::string& d) { return d.rfind("float", 0) == 0; }

VerifyPolicy parse_policy(const json& j, const std::string& ptr) {
  if (!j.is_object())
    throw SpecError(ptr, "expected an object {\"relative\", \"absolute\", \"max_mismatch_fraction\", \"compare\"}");
  check_keys(j, ptr, {"relative", "absolute", "max_mismatch_fraction", "compare", "callback"});
  VerifyPolicy p;
  auto number = [&](const char* key, double max) -> std::optional<double> {
    if (!j.contains(key)) return std::nullopt;
    const json& v = j.at(key);
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() > max)
      throw SpecError(join_ptr(ptr, key), "expected a number from 0 to " + json(max).dump());
    return v.get<double>();
  };
  p.relative = number("relative", 1e300);
  p.absolute = number("absolute", 1e300);
  p.max_mismatch_fraction = number("max_mismatch_fraction", 1.0);
  if (j.contains("compare")) {
    const json& k = j.at("compare");
    if (!k.is_string() || k.get<std::string>().empty())
      throw SpecError(join_ptr(ptr, "compare"),
                      "expected the name of a comparison kernel (an entry point of the "
                      "reference's source)");
    if (p.relative || p.absolute)
      throw SpecError(join_ptr(ptr, "compare"),
                      "a comparison kernel decides alone: drop \"relative\" and \"absolute\"");
    p.compare = k.get<std::string>();
  }
  if (j.contains("callback")) {
    if (!j.at("callback").is_boolean()) throw SpecError(join_ptr(ptr, "callback"), "expected true or false");
    p.callback = j.at("callback").get<bool>();
    if (p.callback && p.compare)
      throw SpecError(join_ptr(ptr, "callback"), "a comparison kernel and a callback cannot both decide");
  }
  return p;
}

}  // namespace autotune::spec_parse
