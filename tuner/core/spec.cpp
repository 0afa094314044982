#include "tuner/core/spec.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"
#include "tuner/core/spec_parse.hpp"

namespace autotune {

using nlohmann::json;

namespace {

using namespace spec_parse;

/// Deepest nesting of arrays and objects a spec may have.
constexpr int kMaxJsonDepth = 64;

json parse_spec_json(const std::string& text) {
  try {
    // Serialising (spec_text) and the checks below recurse into nested values: bound the nesting so that
    // no input can exhaust the stack. Real specs are 4 levels deep.
    return json::parse(text, [](int depth, json::parse_event_t, json&) {
      if (depth > kMaxJsonDepth)
        throw SpecError("", "malformed JSON: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      return true;
    });
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for numbers such as 1e999 (found by fuzz_spec).
    throw SpecError("", std::string("malformed JSON: ") + e.what());
  }
}

/// name, description, family, source and kernels.
void parse_identity(const json& j, TuningSpec& s, const std::string& base_dir, bool load_sources) {
  s.name = get_string(require(j, "", "name"), "/name");
  if (s.name.empty()) throw SpecError("/name", "name must not be empty");
  if (j.contains("description")) s.description = get_string(j["description"], "/description");
  s.family = get_string(require(j, "", "family"), "/family");
  // A stub (family "imported", written by an import) has parameters and problem sizes only: no source, no
  // entry points, no launch until it is completed.
  const bool stub = s.is_stub();
  if (!stub || j.contains("source")) {
    s.source_path = get_string(require(j, "", "source"), "/source");
    if (load_sources && !s.source_path.empty()) s.source_text = read_file(resolve(base_dir, s.source_path), "/source");
  }
  if (!stub || j.contains("kernels")) {
    const json& ks = require(j, "", "kernels");
    if (!ks.is_array() || ks.empty()) throw SpecError("/kernels", "expected a non-empty array of entry-point names");
    for (std::size_t i = 0; i < ks.size(); ++i) s.kernels.push_back(get_string(ks[i], join_ptr("/kernels", i)));
  }
}

/// The name of parameter pj: a valid macro name, not one of `names` (which it joins).
std::string parse_param_name(const json& pj, const std::string& ptr, std::set<std::string>& names) {
  std::string name = get_string(require(pj, ptr, "name"), join_ptr(ptr, "name"));
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_'))
    throw SpecError(join_ptr(ptr, "name"), "'" + name + "' is not a valid macro name");
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      throw SpecError(join_ptr(ptr, "name"), "'" + name + "' is not a valid macro name");
  if (!names.insert(name).second) throw SpecError(join_ptr(ptr, "name"), "duplicate parameter '" + name + "'");
  return name;
}

/// Typed values (docs/spec-format.md "Typed values"): a "values" list of strings, of booleans, or of numbers with
/// a fraction, stored as codes 0, 1, ... with their text as label and macro text. Returns false for a list of
/// integers (stored as themselves). Throws SpecError for a list that mixes kinds or repeats a value.
bool parse_typed_values(const json& vs, const std::string& vp, Param& p) {
  bool strings = true, bools = true, numbers = true, integers = true;
  for (const json& v : vs) {
    strings = strings && v.is_string();
    bools = bools && v.is_boolean();
    numbers = numbers && v.is_number();
    integers = integers && (v.is_number_integer() || (v.is_number_float() && std::isfinite(v.get<double>()) &&
                                                       v.get<double>() == std::floor(v.get<double>()) &&
                                                       std::fabs(v.get<double>()) < 9.2e18 && false));
  }
  if (integers) return false;
  if (!strings && !bools && !numbers) {
    // Name the first value of another kind than the first one.
    auto kind = [](const json& v) { return v.is_string() ? 's' : v.is_boolean() ? 'b' : v.is_number() ? 'n' : 'x'; };
    for (std::size_t k = 0; k < vs.size(); ++k)
      if (kind(vs[k]) != kind(vs[0]) || kind(vs[k]) == 'x')
        throw SpecError(join_ptr(vp, k), std::string("expected ") +
                                             (vs[0].is_number_integer() ? "an integer" : "a value of the first one's kind") +
                                             ", got " + vs[k].dump() + " (one kind of value per parameter)");
  }
  p.kind = strings ? Param::Kind::string : bools ? Param::Kind::boolean : Param::Kind::floating;
  for (std::size_t k = 0; k < vs.size(); ++k) {
    std::string text;
    if (strings) text = vs[k].get<std::string>();
    else if (bools) text = vs[k].get<bool>() ? "1" : "0";
    else text = vs[k].dump();  // the number as written (shortest round trip)
    if (strings && text.empty()) throw SpecError(join_ptr(vp, k), "an empty string is not a macro value");
    const Value code = bools ? (vs[k].get<bool>() ? 1 : 0) : static_cast<Value>(k);
    for (const auto& [c, t] : p.macro_text)
      if (t == text) throw SpecError(join_ptr(vp, k), "duplicate value " + vs[k].dump());
    p.values.push_back(code);
    p.macro_text[code] = text;
    p.labels[code] = bools ? (vs[k].get<bool>() ? "True" : "False") : text;
  }
  return true;
}

/// The values of parameter pj, from exactly one of "values" or "range".
void parse_param_values(const json& pj, const std::string& ptr, Param& p) {
  if (pj.contains("values") == pj.contains("range"))
    throw SpecError(ptr, "give exactly one of 'values' or 'range'");
  if (pj.contains("values")) {
    const json& vs = pj["values"];
    std::string vp = join_ptr(ptr, "values");
    if (!vs.is_array() || vs.empty()) throw SpecError(vp, "expected a non-empty array of integers");
    if (parse_typed_values(vs, vp, p)) return;
    for (std::size_t k = 0; k < vs.size(); ++k) {
      Value v = get_int(vs[k], join_ptr(vp, k));
      if (p.index_of(v) >= 0) throw SpecError(join_ptr(vp, k), "duplicate value " + std::to_string(v));
      p.values.push_back(v);
    }
    return;
  }
  const json& r = pj["range"];
  std::string rp = join_ptr(ptr, "range");
  if (!r.is_array() || r.size() < 2 || r.size() > 3) throw SpecError(rp, "expected [first, last] or [first, last, step]");
  Value a = get_int(r[0], rp + "/0"), b = get_int(r[1], rp + "/1"), st = r.size() == 3 ? get_int(r[2], rp + "/2") : 1;
  if (st <= 0 || b < a) throw SpecError(rp, "range needs first <= last and step > 0");
  // In unsigned arithmetic: b - a and a + k * st overflow int64 near its limits.
  const std::uint64_t steps = (static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)) / static_cast<std::uint64_t>(st);
  if (steps > 65535) throw SpecError(rp, "range has too many values");
  for (std::uint64_t k = 0; k <= steps; ++k)
    p.values.push_back(static_cast<Value>(static_cast<std::uint64_t>(a) + k * static_cast<std::uint64_t>(st)));
}

/// The "labels" object of a parameter ({"value": "label"}), each key one of p's values.
void parse_param_labels(const json& ls, const std::string& lp, Param& p) {
  if (!ls.is_object()) throw SpecError(lp, "expected an object {\"value\": \"label\"}");
  for (auto it = ls.begin(); it != ls.end(); ++it) {
    Value v = 0;
    try {
      std::size_t used = 0;
      v = std::stoll(it.key(), &used);
      if (used != it.key().size()) throw std::invalid_argument("x");
    } catch (const std::exception&) {
      throw SpecError(join_ptr(lp, it.key()), "label key must be an integer value");
    }
    if (p.index_of(v) < 0) throw SpecError(join_ptr(lp, it.key()), "labelled value is not one of the values");
    p.labels[v] = get_string(it.value(), join_ptr(lp, it.key()));
  }
}

Param parse_param(const json& pj, const std::string& ptr, std::set<std::string>& names) {
  if (!pj.is_object()) throw SpecError(ptr, "expected an object");
  check_keys(pj, ptr, {"name", "values", "range", "default", "labels", "description"});
  Param p;
  p.name = parse_param_name(pj, ptr, names);
  parse_param_values(pj, ptr, p);
  if (pj.contains("default") && p.kind != Param::Kind::integer) {
    const json& d = pj["default"];
    const std::string text = d.is_string() ? d.get<std::string>() : d.is_boolean() ? (d.get<bool>() ? "1" : "0") : d.dump();
    auto it = std::find_if(p.macro_text.begin(), p.macro_text.end(), [&](const auto& e) { return e.second == text; });
    if (it == p.macro_text.end()) throw SpecError(join_ptr(ptr, "default"), "default " + d.dump() + " is not one of the values");
    p.default_value = it->first;
  } else if (pj.contains("default")) {
    p.default_value = get_int(pj["default"], join_ptr(ptr, "default"));
    if (p.index_of(p.default_value) < 0)
      throw SpecError(join_ptr(ptr, "default"), "default " + std::to_string(p.default_value) + " is not one of the values");
  } else {
    p.default_value = p.values.front();
  }
  if (pj.contains("labels") && p.kind != Param::Kind::integer)
    throw SpecError(join_ptr(ptr, "labels"), "typed values (strings, floats, booleans) are their own labels");
  if (pj.contains("labels")) parse_param_labels(pj["labels"], join_ptr(ptr, "labels"), p);
  if (pj.contains("description")) p.description = get_string(pj["description"], join_ptr(ptr, "description"));
  return p;
}

/// "parameters"; returns their names (problem dims must differ from them).
std::set<std::string> parse_parameters(const json& j, TuningSpec& s) {
  const json& ps = require(j, "", "parameters");
  if (!ps.is_array()) throw SpecError("/parameters", "expected an array");
  std::set<std::string> names;
  for (std::size_t i = 0; i < ps.size(); ++i) {
    s.params.push_back(parse_param(ps[i], join_ptr("/parameters", i), names));
    if (ps[i].contains("default")) s.default_named = true;
  }
  return names;
}

void parse_constraints(const json& j, TuningSpec& s) {
  if (!j.contains("constraints")) return;
  const json& cs = j["constraints"];
  if (!cs.is_array()) throw SpecError("/constraints", "expected an array of expression strings");
  for (std::size_t i = 0; i < cs.size(); ++i) {
    std::string ptr = join_ptr("/constraints", i);
    if (!cs[i].is_string()) throw SpecError(ptr, std::string("expected an expression string, got ") + type_name(cs[i]));
    s.constraints.push_back(get_expr(cs[i], ptr));
  }
}

/// "nondeterministic": expressions over the names constraints see (parameters, problem dims, device and workload
/// variables); parsed after the problem, so that an unknown name is an error at its pointer.
void parse_nondeterministic(const json& j, TuningSpec& s) {
  if (!j.contains("nondeterministic")) return;
  const json& ns = j["nondeterministic"];
  if (!ns.is_array()) throw SpecError("/nondeterministic", "expected an array of expression strings");
  Bindings known = DeviceInfo{}.bindings();
  for (const auto& [k, v] : workload_bindings(Workload{"float32", "sum"})) known[k] = v;
  for (const std::string& d : s.problem_dims) known[d] = 1;
  for (std::size_t i = 0; i < ns.size(); ++i) {
    const std::string ptr = join_ptr("/nondeterministic", i);
    if (!ns[i].is_string()) throw SpecError(ptr, std::string("expected an expression string, got ") + type_name(ns[i]));
    Expr e = get_expr(ns[i], ptr);
    for (const std::string& v : e.variables())
      if (!known.count(v) && s.find_param(v) == nullptr)
        throw SpecError(ptr, "\"" + e.text() + "\" uses unknown name '" + v +
                                 "' (not a parameter, problem dimension, device or workload variable)");
    s.nondeterministic.push_back(std::move(e));
  }
}

/// "launch": steps whose kernels are listed in "kernels".
void parse_launches(const json& j, TuningSpec& s) {
  if (!j.contains("launch")) return;
  const json& ls = j["launch"];
  if (!ls.is_array()) throw SpecError("/launch", "expected an array of launch steps");
  for (std::size_t i = 0; i < ls.size(); ++i) {
    std::string ptr = join_ptr("/launch", i);
    LaunchSpec l = parse_launch(ls[i], ptr, true);
    bool known = false;
    for (const auto& k : s.kernels) known = known || k == l.kernel;
    if (!known) throw SpecError(join_ptr(ptr, "kernel"), "kernel '" + l.kernel + "' is not listed in /kernels");
    s.launches.push_back(std::move(l));
  }
}

/// "problem": dims (none a parameter name) and the suggested sizes.
void parse_problem(const json& j, TuningSpec& s, const std::set<std::string>& param_names) {
  const json& pr = require(j, "", "problem");
  if (!pr.is_object()) throw SpecError("/problem", "expected an object {\"dims\": [...], \"sizes\": [...]}");
  check_keys(pr, "/problem", {"dims", "sizes"});
  const json& dims = require(pr, "/problem", "dims");
  if (!dims.is_array() || dims.empty()) throw SpecError("/problem/dims", "expected a non-empty array of names");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    std::string d = get_string(dims[i], join_ptr("/problem/dims", i));
    if (param_names.count(d)) throw SpecError(join_ptr("/problem/dims", i), "'" + d + "' is also a parameter name");
    s.problem_dims.push_back(d);
  }
  if (!pr.contains("sizes")) return;
  const json& sz = pr["sizes"];
  if (!sz.is_array()) throw SpecError("/problem/sizes", "expected an array of objects");
  for (std::size_t i = 0; i < sz.size(); ++i) {
    std::string ptr = join_ptr("/problem/sizes", i);
    if (!sz[i].is_object()) throw SpecError(ptr, "expected an object like {\"n\": 1024}");
    ProblemKey p;
    for (auto it = sz[i].begin(); it != sz[i].end(); ++it) {
      std::int64_t v = get_int(it.value(), join_ptr(ptr, it.key()));
      if (v < 1) throw SpecError(join_ptr(ptr, it.key()), "problem sizes must be at least 1");
      p.dims[it.key()] = v;
    }
    try {
      s.check_problem(p);
    } catch (const UsageError& e) {
      throw SpecError(ptr, e.what());
    }
    s.problem_sizes.push_back(p);
  }
}

void parse_workloads(const json& j, TuningSpec& s) {
  const json& ws = require(j, "", "workloads");
  if (!ws.is_array() || ws.empty()) throw SpecError("/workloads", "expected a non-empty array like [\"float32/sum\"]");
  for (std::size_t i = 0; i < ws.size(); ++i) {
    std::string ptr = join_ptr("/workloads", i);
    try {
      s.workloads.push_back(Workload::parse(get_string(ws[i], ptr)));
    } catch (const UsageError& e) {
      throw SpecError(ptr, e.what());
    }
  }
}

/// "tuning": {"budget": N, "budget_fraction": f, "time_limit": s, "strategy": "name", "strategy_options": {...}}.
TuningDefaults parse_tuning(const json& t) {
  if (!t.is_object()) throw SpecError("/tuning", "expected an object");
  check_keys(t, "/tuning", {"budget", "budget_fraction", "time_limit", "strategy", "strategy_options"});
  TuningDefaults d;
  if (t.contains("budget")) {
    const std::int64_t b = get_int(t["budget"], "/tuning/budget");
    if (b < 1) throw SpecError("/tuning/budget", "expected a positive integer");
    d.budget = static_cast<std::size_t>(b);
  }
  auto positive = [&](const char* key) {
    const std::string p = join_ptr("/tuning", key);
    if (!t[key].is_number() || !(t[key].get<double>() > 0)) throw SpecError(p, "expected a positive number");
    return t[key].get<double>();
  };
  if (t.contains("budget_fraction")) {
    d.budget_fraction = positive("budget_fraction");
    if (*d.budget_fraction > 1) throw SpecError("/tuning/budget_fraction", "expected a fraction in (0, 1]");
  }
  if (t.contains("time_limit")) d.time_limit_s = positive("time_limit");
  if (t.contains("strategy")) d.strategy = get_string(t["strategy"], "/tuning/strategy");
  if (t.contains("strategy_options")) {
    const json& o = t["strategy_options"];
    if (!o.is_object()) throw SpecError("/tuning/strategy_options", "expected an object {\"key\": value}");
    for (auto it = o.begin(); it != o.end(); ++it)
      d.strategy_options[it.key()] = it.value().is_string() ? it.value().get<std::string>() : it.value().dump();
  }
  return d;
}

/// tolerance, bytes_moved, blocks, defines and family_options.
void parse_build_options(const json& j, TuningSpec& s) {
  if (j.contains("tolerance")) {
    if (!j["tolerance"].is_number() || j["tolerance"].get<double>() < 0)
      throw SpecError("/tolerance", "expected a non-negative number");
    s.tolerance = j["tolerance"].get<double>();
  }
  if (j.contains("bytes_moved")) s.bytes_moved = get_expr(j["bytes_moved"], "/bytes_moved");
  if (j.contains("blocks")) {
    s.blocks = get_expr(j["blocks"], "/blocks");
    std::string dims;
    for (const std::string& d : s.problem_dims)
      if (s.blocks->variables().count(d)) dims += (dims.empty() ? "'" : ", '") + d + "'";
    if (dims.find(',') != std::string::npos)
      throw SpecError("/blocks", "\"" + s.blocks->text() + "\" reads the problem dimensions " + dims +
                                     ": the blocks of a launch may follow one dimension only");
  }
  if (j.contains("defines")) {
    const json& d = j["defines"];
    if (!d.is_object()) throw SpecError("/defines", "expected an object {\"NAME\": value}");
    for (auto it = d.begin(); it != d.end(); ++it) {
      if (it.value().is_string()) s.defines[it.key()] = it.value().get<std::string>();
      else if (it.value().is_number_integer()) s.defines[it.key()] = std::to_string(it.value().get<std::int64_t>());
      else throw SpecError(join_ptr("/defines", it.key()), "expected a string or integer");
    }
  }
  if (j.contains("compile_options")) {
    const json& o = j["compile_options"];
    if (!o.is_array()) throw SpecError("/compile_options", "expected an array of NVRTC options");
    for (std::size_t i = 0; i < o.size(); ++i)
      s.compile_options.push_back(get_string(o[i], join_ptr("/compile_options", i)));
  }
  if (j.contains("tuning")) s.tuning = parse_tuning(j["tuning"]);
  if (j.contains("family_options")) {
    if (!j["family_options"].is_object()) throw SpecError("/family_options", "expected an object");
    s.family_options_json = j["family_options"].dump();
  }
}

/// "configuration": "default", or {"PARAM": value or label, ...} over the defaults.
Config parse_reference_configuration(const json& c, const std::string& ptr, const TuningSpec& s) {
  const char* const usage = "expected \"default\" or an object {\"PARAM\": value or label, ...}";
  Config cfg = s.default_config();
  if (c.is_string()) {
    if (c.get<std::string>() != "default") throw SpecError(ptr, usage);
    return cfg;
  }
  if (!c.is_object()) throw SpecError(ptr, usage);
  for (auto it = c.begin(); it != c.end(); ++it) {
    const std::string p = join_ptr(ptr, it.key());
    const Param* param = s.find_param(it.key());
    if (!param) {
      std::string known;
      for (const Param& q : s.params) known += (known.empty() ? "" : ", ") + q.name;
      throw SpecError(p, "unknown parameter '" + it.key() + "' (parameters: " + known + ")");
    }
    std::string values;
    for (Value v : param->values) values += (values.empty() ? "" : ", ") + param->label(v);
    std::optional<Value> v;
    if (it.value().is_string()) {
      for (const auto& [value, label] : param->labels)
        if (label == it.value().get<std::string>()) v = value;
      if (!v) throw SpecError(p, it.value().dump() + " is not a label of " + it.key() + " (values: " + values + ")");
    } else if (it.value().is_number_integer()) {
      v = get_int(it.value(), p);
    } else {
      throw SpecError(p, "expected a value (integer) or a label (string) of " + it.key());
    }
    if (param->index_of(*v) < 0)
      throw SpecError(p, std::to_string(*v) + " is not a value of " + it.key() + " (values: " + values + ")");
    cfg.set(it.key(), *v);
  }
  return cfg;
}

/// "reference": a launch step, its source the spec's unless it names one; or {"configuration": ...}.
void parse_reference(const json& j, TuningSpec& s, const std::string& base_dir, bool load_sources) {
  if (!j.contains("reference")) return;
  const json& r = j["reference"];
  if (!r.is_object()) throw SpecError("/reference", "expected an object");
  ReferenceSpec ref;
  if (r.contains("configuration")) {
    if (r.size() != 1)
      throw SpecError("/reference",
                      "a reference is a kernel of its own (\"kernel\", \"grid\", \"block\", ...) or "
                      "{\"configuration\": ...} of the tuned kernel, not both");
    ref.configuration = parse_reference_configuration(r["configuration"], "/reference/configuration", s);
    s.reference = std::move(ref);
    return;
  }
  ref.launch = parse_launch(r, "/reference", true);
  if (r.contains("source")) {
    ref.source = get_string(r["source"], "/reference/source");
    if (load_sources) ref.source_text = read_file(resolve(base_dir, ref.source), "/reference/source");
  } else {
    ref.source_text = s.source_text;
  }
  s.reference = std::move(ref);
}

/// "captured": {"spec_hash": ..., "data": ..., and what the capture records for people: from, problem,
/// configuration, match, device, time}.
void parse_captured(const json& j, TuningSpec& s) {
  if (!j.contains("captured")) return;
  const json& c = j["captured"];
  if (!c.is_object()) throw SpecError("/captured", "expected an object");
  check_keys(c, "/captured", {"spec_hash", "data", "from", "problem", "configuration", "match", "device", "time"});
  CaptureOrigin o;
  o.spec_hash = get_string(require(c, "/captured", "spec_hash"), "/captured/spec_hash");
  o.data = c.contains("data") ? get_string(c["data"], "/captured/data") : std::string();
  s.captured = std::move(o);
}

/// A user kernel needs arguments and a launch step. Its reference is the default configuration unless the spec
/// names one, or none where every output has expected values from a file.
void check_user_kernel(TuningSpec& s) {
  if (s.family != "user") return;
  if (s.arguments.empty()) throw SpecError("/arguments", "a user kernel needs its arguments listed");
  if (s.launches.empty()) throw SpecError("/launch", "a user kernel needs a launch step");
  bool any_output = false, all_expected = true;
  for (const ArgSpec& a : s.arguments)
    if (a.is_output()) {
      any_output = true;
      all_expected = all_expected && a.expected.has_value();
    }
  if (any_output && all_expected) {
    if (s.reference)
      throw SpecError("/reference",
                      "every output takes its expected values from a file (\"expected\"), so the "
                      "reference would never run: drop \"reference\"");
    return;
  }
  if (!s.reference) {
    ReferenceSpec ref;
    ref.configuration = s.default_config();
    s.reference = std::move(ref);
  }
}

}  // namespace

TuningSpec TuningSpec::from_json_text(const std::string& text, const std::string& base_dir, bool load_sources) {
  const json j = parse_spec_json(text);
  if (!j.is_object()) throw SpecError("", "a spec must be a JSON object");
  check_keys(j, "", {"name",           "description",  "family",           "source",          "kernels",
                     "parameters",     "constraints",  "launch",           "problem",         "workloads",
                     "tolerance",      "bytes_moved",  "defines",          "arguments",       "reference",
                     "family_options", "verification", "expressions",      "compile_options", "tuning",
                     "captured",       "blocks",       "nondeterministic", "$comment"});
  TuningSpec s;
  s.spec_text = j.dump();
  // Hints that change no measurement ("blocks" for the lookup; "nondeterministic", which configurations a
  // deterministic run leaves out) stay out of the hash, so that trials stay those of the same spec.
  if (j.contains("blocks") || j.contains("nondeterministic")) {
    json hashed = j;
    hashed.erase("blocks");
    hashed.erase("nondeterministic");
    s.hashed_text = hashed.dump();
  }
  parse_identity(j, s, base_dir, load_sources);
  const std::set<std::string> param_names = parse_parameters(j, s);
  if (j.contains("expressions")) {
    const std::string lang = get_string(j["expressions"], "/expressions");
    if (lang != "python" && lang != "native")
      throw SpecError("/expressions", "expected \"native\" (the default) or \"python\"");
    s.python_expressions = lang == "python";
  }
  // Every expression from here on is in the spec's language.
  struct LanguageScope {
    explicit LanguageScope(const TuningSpec& spec) {
      expr_language().python = spec.python_expressions;
      expr_language().decoders = spec.python_decoders();
    }
    ~LanguageScope() { expr_language() = ExprLanguage{}; }
    LanguageScope(const LanguageScope&) = delete;
    LanguageScope& operator=(const LanguageScope&) = delete;
  } scope(s);
  parse_constraints(j, s);
  parse_launches(j, s);
  parse_problem(j, s, param_names);
  parse_nondeterministic(j, s);
  parse_workloads(j, s);
  parse_build_options(j, s);
  parse_arguments(j, s, base_dir, load_sources);
  parse_reference(j, s, base_dir, load_sources);
  if (j.contains("verification")) s.verification = parse_policy(j["verification"], "/verification");
  parse_captured(j, s);
  check_user_kernel(s);
  return s;
}

TuningSpec TuningSpec::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError("", "cannot read spec file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  auto slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  try {
    return from_json_text(ss.str(), dir, true);
  } catch (const SpecError& e) {
    throw SpecError::in_context(path, e);
  }
}

std::string TuningSpec::source_hash() const {
  if (is_stub()) return kImportedSourceHash;  // the rows an import stored for it
  std::string all = source_text;
  for (const auto& [name, text] : headers) all += "\n//header " + name + "\n" + text;
  if (reference) all += "\n//reference\n" + reference->source_text;
  return content_hash(all);
}

std::optional<std::int64_t> TuningSpec::blocks_at(const Config& c, const ProblemKey& p, const DeviceInfo& d,
                                                  const Workload& w) const {
  if (!blocks) return std::nullopt;
  try {
    return eval_expr(*blocks, c, p, d, w);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string TuningSpec::blocks_dim() const {
  if (blocks)
    for (const std::string& d : problem_dims)
      if (blocks->variables().count(d)) return d;
  return "";
}

std::string TuningSpec::spec_hash() const {
  if (captured) return captured->spec_hash;
  return content_hash(hashed_text.empty() ? spec_text : hashed_text);
}

void TuningSpec::restrict_values(const std::string& name, const std::vector<std::string>& values) {
  auto it = std::find_if(params.begin(), params.end(), [&](const Param& p) { return p.name == name; });
  if (it == params.end()) throw UsageError("kernel " + this->name + " has no parameter '" + name + "'");
  Param& p = *it;
  std::vector<Value> keep;
  for (const std::string& text : values) {
    std::optional<Value> v;
    for (const auto& [value, label] : p.labels)
      if (label == text) v = value;
    if (!v) {
      char* end = nullptr;
      errno = 0;
      const long long n = std::strtoll(text.c_str(), &end, 10);
      if (!text.empty() && end != nullptr && *end == '\0' && errno == 0) v = n;
    }
    if (!v || p.index_of(*v) < 0) {
      std::string known;
      for (Value k : p.values) known += (known.empty() ? "" : ", ") + p.label(k);
      throw UsageError("'" + text + "' is not a value of " + name + " (values: " + known + ")");
    }
    keep.push_back(*v);
  }
  if (keep.empty()) throw UsageError("no values given for " + name);
  std::vector<Value> kept;
  for (Value v : p.values)
    if (std::find(keep.begin(), keep.end(), v) != keep.end()) kept.push_back(v);
  p.values = kept;
  if (p.index_of(p.default_value) < 0) p.default_value = p.values.front();
}

PyDecoders TuningSpec::python_decoders() const {
  PyDecoders out;
  for (const Param& p : params) {
    if (p.kind == Param::Kind::integer) continue;
    PyDecoder& d = out[p.name];
    for (Value v : p.values) {
      const std::string text = p.macro(v);
      if (p.kind == Param::Kind::string)
        d[v] = PyValue::string(text);
      else if (p.kind == Param::Kind::boolean)
        d[v] = PyValue::boolean(v != 0);
      else
        d[v] = PyValue::floating(std::strtod(text.c_str(), nullptr));
    }
  }
  return out;
}

Expr TuningSpec::parse_expression(const std::string& text) const {
  return python_expressions ? Expr::python(text, python_decoders()) : Expr::parse(text);
}

void TuningSpec::add_constraint(const std::string& text) {
  try {
    constraints.push_back(parse_expression(text));
  } catch (const ExprError& e) {
    throw UsageError(e.what());
  }
}

void TuningSpec::drop_constraint(const std::string& text) {
  auto squeeze = [](const std::string& t) {
    std::string out;
    for (char c : t)
      if (!std::isspace(static_cast<unsigned char>(c))) out += c;
    return out;
  };
  const std::string want = squeeze(text);
  auto it = std::find_if(constraints.begin(), constraints.end(), [&](const Expr& e) { return squeeze(e.text()) == want; });
  if (it == constraints.end()) {
    std::string known;
    for (const Expr& e : constraints) known += "\n  " + e.text();
    throw UsageError("kernel " + name + " has no constraint \"" + text + "\"; its constraints:" + known);
  }
  constraints.erase(it);
}

const Param* TuningSpec::find_param(const std::string& name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

const LaunchSpec* TuningSpec::find_launch(const std::string& n) const {
  for (const auto& l : launches)
    if (l.name == n) return &l;
  return nullptr;
}

Config TuningSpec::default_config() const {
  Config c;
  for (const auto& p : params) c.set(p.name, p.default_value);
  return c;
}

std::string TuningSpec::reference_text() const {
  if (family != "user") return {};
  std::vector<std::string> parts;
  if (reference && reference->configuration) {
    const Config& c = *reference->configuration;
    parts.push_back(c == default_config() ? "the default configuration (" + c.str(&params) + ")"
                                          : "the configuration " + c.str(&params));
  } else if (reference) {
    parts.push_back("the reference kernel " + reference->launch.kernel +
                    (reference->source.empty() ? "" : " of " + reference->source));
  }
  std::string files;
  for (const ArgSpec& a : arguments)
    if (a.expected)
      files +=
          (files.empty() ? "" : ", ") + a.name + " from " +
          (a.expected->kind == DataSource::Kind::generator ? "\"" + a.expected->generator + "\"" : a.expected->file);
  if (!files.empty()) parts.push_back("expected values of " + files);
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : "; ") + p;
  return out;
}

void TuningSpec::check_problem(const ProblemKey& p) const {
  for (const auto& d : problem_dims)
    if (!p.dims.count(d)) throw UsageError("kernel " + name + " needs problem dimension '" + d + "' (e.g. --" + d + ")");
  for (const auto& [k, v] : p.dims) {
    bool known = false;
    for (const auto& d : problem_dims) known = known || d == k;
    if (!known) throw UsageError("kernel " + name + " has no problem dimension '" + k + "'");
  }
}

void TuningSpec::check_workload(const Workload& w) const {
  for (const auto& x : workloads)
    if (x == w) return;
  std::string list;
  for (const auto& x : workloads) list += (list.empty() ? "" : ", ") + x.key();
  throw UsageError("kernel " + name + " does not support workload '" + w.key() + "' (supported: " + list + ")");
}

ParameterSpace TuningSpec::space(const ProblemKey& problem, const DeviceInfo& device, const Workload& w) const {
  Bindings fixed = device.bindings();
  for (const auto& [k, v] : problem.dims) fixed[k] = v;
  for (const auto& [k, v] : workload_bindings(w)) fixed[k] = v;
  if (blocks)
    for (const std::string& v : blocks->variables())
      if (!fixed.count(v) && find_param(v) == nullptr)
        throw SpecError("/blocks", "\"" + blocks->text() + "\" uses unknown name '" + v +
                                       "' (not a parameter, problem dimension or device variable)");
  // A stub's defaults are its parameters' first values, nobody's choice: its space has no default config.
  if (is_stub() && !default_named) return ParameterSpace(params, constraints, fixed).without_default();
  if (!deterministic || nondeterministic.empty()) return ParameterSpace(params, constraints, fixed);
  std::vector<Expr> all = constraints;
  for (const Expr& e : nondeterministic)
    all.push_back(parse_expression((python_expressions ? "not (" : "!(") + e.text() + ")"));
  return ParameterSpace(params, all, fixed);
}

const Expr* TuningSpec::nondeterministic_reason(const Config& c, const ProblemKey& p, const DeviceInfo& d,
                                                const Workload& w) const {
  for (const Expr& e : nondeterministic)
    if (eval_expr(e, c, p, d, w) != 0) return &e;
  return nullptr;
}

std::string TuningSpec::nondeterministic_text() const {
  std::string out;
  for (const Expr& e : nondeterministic) out += (out.empty() ? "" : " or ") + e.text();
  return out;
}

std::string deterministic_summary(const TuningSpec& s, const ProblemKey& p, const DeviceInfo& d, const Workload& w) {
  if (!s.deterministic) return {};
  const std::string what = s.name + " " + w.key() + " " + p.key();
  if (s.nondeterministic.empty())
    return "deterministic: " + s.name + " marks no configuration \"nondeterministic\": every valid one is kept";
  TuningSpec all = s;
  all.deterministic = false;
  const std::size_t valid = all.space(p, d, w).size();
  const std::size_t kept = s.space(p, d, w).size();
  const std::string why = "not bit-reproducible run to run where " + s.nondeterministic_text();
  if (kept == 0 && valid > 0)
    throw UsageError("--deterministic: none of the " + std::to_string(valid) + " valid configurations of " + what +
                     " is deterministic (" + why + ")");
  return "deterministic: " + std::to_string(kept) + " of " + std::to_string(valid) + " valid configurations kept, " +
         std::to_string(valid - kept) + " left out (" + why + ")";
}

Bindings workload_bindings(const Workload& w) {
  Bindings b;
  b["sizeof_t"] = dtype_size(w.dtype);
  b["is_float"] = is_float_dtype(w.dtype) ? 1 : 0;
  b["is_sum"] = w.op == "sum" ? 1 : 0;
  return b;
}

Bindings make_bindings(const Config& c, const ProblemKey& p, const DeviceInfo& d, const Workload& w) {
  Bindings b = d.bindings();
  for (const auto& [k, v] : workload_bindings(w)) b[k] = v;
  for (const auto& [k, v] : p.dims) b[k] = v;
  for (const auto& [k, v] : c.values()) b[k] = v;
  return b;
}

std::int64_t eval_expr(const Expr& e, const Config& c, const ProblemKey& p, const DeviceInfo& d, const Workload& w) {
  Bindings b = make_bindings(c, p, d, w);
  return e.eval([&](const std::string& n) -> std::optional<std::int64_t> {
    auto it = b.find(n);
    if (it == b.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace autotune
