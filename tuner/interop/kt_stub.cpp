#include "tuner/interop/kt_stub.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "tuner/core/error.hpp"

namespace autotune::interop {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

json read_kt_cache_json(const std::string& text, const std::string& origin) {
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    std::string t = text;
    while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
    if (!t.empty() && t.back() == ',') t.pop_back();
    t += "}\n}";
    try {
      root = json::parse(t);
    } catch (const json::parse_error&) {
      throw UsageError(origin + " is not a valid Kernel Tuner cache file (JSON error: " + e.what() + ")");
    }
  }
  if (!root.is_object() || !root.contains("cache") || !root["cache"].is_object())
    throw UsageError(origin + " is not a Kernel Tuner cache file (no \"cache\" object)");
  return root;
}

namespace {

std::string string_field(const json& root, const char* key, const std::string& origin) {
  auto it = root.find(key);
  if (it == root.end() || it->is_null()) return "";
  if (!it->is_string()) throw UsageError(origin + ": \"" + key + "\" is not a string");
  return it->get<std::string>();
}

/// An integral JSON value (integer, bool, float with an integral value, string holding an integer), if it is one.
std::optional<Value> integral(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) return static_cast<Value>(d);
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      std::size_t used = 0;
      const long long x = std::stoll(s, &used);
      if (used == s.size() && !s.empty()) return x;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

/// The label that stands for a non-integral value: the string itself, or the number as JSON writes it.
std::string label_text(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

/// One stub parameter under construction: either integer values, or labels of 0, 1, 2, ...
struct StubParam {
  std::string name;
  std::vector<Value> values;
  std::vector<std::string> labels;  // non-empty: labelled (values are 0 .. labels.size()-1)
};

StubParam stub_param(const std::string& name, const std::vector<json>& raw, const std::string& origin) {
  StubParam p;
  p.name = name;
  bool all_integral = true;
  for (const json& v : raw) {
    if (!(v.is_number() || v.is_boolean() || v.is_string()))
      throw UsageError(origin + ": value " + v.dump() + " of parameter " + name + " is not a number, bool or string");
    all_integral = all_integral && integral(v).has_value();
  }
  for (const json& v : raw) {
    if (all_integral) {
      const Value x = *integral(v);
      if (std::find(p.values.begin(), p.values.end(), x) == p.values.end()) p.values.push_back(x);
    } else {
      const std::string l = label_text(v);
      if (std::find(p.labels.begin(), p.labels.end(), l) == p.labels.end()) p.labels.push_back(l);
    }
  }
  for (std::size_t i = 0; i < p.labels.size(); ++i) p.values.push_back(static_cast<Value>(i));
  return p;
}

/// A stub parameter read back from a stored stub.
StubParam stored_param(const json& pj) {
  StubParam p;
  p.name = pj.at("name").get<std::string>();
  for (const auto& v : pj.at("values")) p.values.push_back(v.get<Value>());
  if (pj.contains("labels"))
    for (Value v : p.values) p.labels.push_back(pj["labels"].value(std::to_string(v), std::to_string(v)));
  return p;
}

/// Adds the values (or labels) of `more` to `p`.
void extend(StubParam& p, const StubParam& more, const std::string& origin) {
  if (p.labels.empty() != more.labels.empty())
    throw UsageError(origin + ": parameter " + p.name + " has " +
                     (p.labels.empty() ? "integer values" : "labelled values") +
                     " in the stored stub but not in this cache");
  if (p.labels.empty()) {
    for (Value v : more.values)
      if (std::find(p.values.begin(), p.values.end(), v) == p.values.end()) p.values.push_back(v);
    return;
  }
  for (const auto& l : more.labels)
    if (std::find(p.labels.begin(), p.labels.end(), l) == p.labels.end()) {
      p.labels.push_back(l);
      p.values.push_back(static_cast<Value>(p.labels.size() - 1));
    }
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

KtCacheHeader read_kt_header(const json& root, const std::string& origin) {
  KtCacheHeader h;
  h.kernel_name = string_field(root, "kernel_name", origin);
  h.device_name = string_field(root, "device_name", origin);
  if (root.contains("problem_size") && !root["problem_size"].is_null()) {
    const json& ps = root["problem_size"];
    const json list = ps.is_array() ? ps : json::array({ps});
    for (const auto& v : list) {
      if (v.is_string()) {  // a parameter's name: the size is that parameter's value, different per entry
        h.problem_size_names.push_back(v.get<std::string>());
        continue;
      }
      auto x = integral(v);
      if (!x || v.is_boolean())
        throw UsageError(origin + ": \"problem_size\" holds " + v.dump() + ", neither an integer nor a parameter name");
      h.problem_size.push_back(*x);
    }
    if (!h.problem_size_names.empty()) h.problem_size.clear();
  }
  if (root.contains("tune_params_keys")) {
    const json& k = root["tune_params_keys"];
    if (!k.is_array()) throw UsageError(origin + ": \"tune_params_keys\" is not an array");
    for (const auto& x : k) {
      if (!x.is_string()) throw UsageError(origin + ": \"tune_params_keys\" holds a non-string " + x.dump());
      h.keys.push_back(x.get<std::string>());
    }
  }
  return h;
}

std::string KtCacheHeader::no_problem_reason() const {
  if (!problem_size_names.empty())
    return "\"problem_size\" names the parameter" + std::string(problem_size_names.size() > 1 ? "s " : " ") +
           joined(problem_size_names) + " instead of the size the cache was measured at";
  if (problem_size.empty()) return "there is no \"problem_size\"";
  return "";
}

std::optional<ProblemKey> kt_problem(const KtCacheHeader& h, const TuningSpec& spec, const std::string& origin) {
  if (h.problem_size.empty()) return std::nullopt;
  if (h.problem_size.size() != spec.problem_dims.size())
    throw UsageError(origin + ": the cache's problem_size has " + std::to_string(h.problem_size.size()) +
                     " values, kernel " + spec.name + " has " + std::to_string(spec.problem_dims.size()) +
                     " problem dims (" + joined(spec.problem_dims) + "): give the problem with --problem");
  ProblemKey p;
  for (std::size_t i = 0; i < h.problem_size.size(); ++i) {
    if (h.problem_size[i] < 1)
      throw UsageError(origin + ": problem_size " + std::to_string(h.problem_size[i]) + " is below 1");
    p.dims[spec.problem_dims[i]] = h.problem_size[i];
  }
  return p;
}

std::string kt_stub_spec(const json& root, const std::string& name, const std::string& origin, const Workload& w,
                         const std::optional<ProblemKey>& problem, const std::optional<std::string>& existing) {
  const KtCacheHeader h = read_kt_header(root, origin);
  // Parameter names: tune_params_keys, else tune_params, else the first entry's keys that are not observers.
  std::vector<std::string> names = h.keys;
  const json tp =
      root.contains("tune_params") && root["tune_params"].is_object() ? root["tune_params"] : json::object();
  if (names.empty())
    for (const auto& [k, v] : tp.items()) names.push_back(k);
  if (names.empty()) throw UsageError(origin + " lists no tunable parameters (\"tune_params_keys\" / \"tune_params\")");
  std::vector<StubParam> params;
  for (const std::string& n : names) {
    std::vector<json> raw;
    if (tp.contains(n) && tp[n].is_array()) {
      raw.assign(tp[n].begin(), tp[n].end());
    } else {
      for (const auto& [key, entry] : root["cache"].items())
        if (entry.is_object() && entry.contains(n)) raw.push_back(entry[n]);
    }
    if (raw.empty()) throw UsageError(origin + ": parameter " + n + " has no values (\"tune_params\")");
    params.push_back(stub_param(n, raw, origin));
  }

  // Problem: the flags' or the cache's, in dims n (one value) or x, y, z.
  std::vector<std::string> dims;
  std::vector<ProblemKey> sizes;
  if (problem) {
    for (const auto& [d, v] : problem->dims) dims.push_back(d);
    sizes.push_back(*problem);
  } else if (!h.problem_size.empty()) {
    if (h.problem_size.size() > 3) throw UsageError(origin + ": problem_size has more than 3 values");
    static const char* kXyz[] = {"x", "y", "z"};
    ProblemKey p;
    for (std::size_t i = 0; i < h.problem_size.size(); ++i) {
      dims.push_back(h.problem_size.size() == 1 ? "n" : kXyz[i]);
      p.dims[dims.back()] = h.problem_size[i];
    }
    sizes.push_back(p);
  } else {
    throw UsageError(origin + ": " + h.no_problem_reason() + ": give the size the cache was measured at (--n, or "
                     "--problem name=value,...)");
  }
  std::vector<std::string> workloads = {w.key()};
  std::string description = "imported from Kernel Tuner cache " + origin + " (kernel " +
                            (h.kernel_name.empty() ? name : h.kernel_name) + ")";

  if (existing) {
    const json old = json::parse(*existing);
    std::vector<StubParam> have;
    for (const auto& pj : old.at("parameters")) have.push_back(stored_param(pj));
    std::vector<std::string> have_names;
    have_names.reserve(have.size());
    for (const auto& p : have) have_names.push_back(p.name);
    std::vector<std::string> a = have_names, b = names;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b)
      throw UsageError(origin + ": the parameters of the cache (" + joined(names) + ") differ from those of the " +
                       "kernel '" + name + "' imported before (" + joined(have_names) + "); import it under another "
                       "name with --as NAME");
    for (auto& p : have)
      for (const auto& q : params)
        if (q.name == p.name) extend(p, q, origin);
    params = std::move(have);
    std::vector<std::string> old_dims = old.at("problem").at("dims").get<std::vector<std::string>>();
    if (old_dims != dims && std::set<std::string>(old_dims.begin(), old_dims.end()) !=
                                std::set<std::string>(dims.begin(), dims.end()))
      throw UsageError(origin + ": problem dims (" + joined(dims) + ") differ from those of the kernel '" + name +
                       "' imported before (" + joined(old_dims) + ")");
    dims = old_dims;
    std::vector<ProblemKey> all;
    for (const auto& sz : old.at("problem").value("sizes", json::array())) {
      ProblemKey p;
      for (const auto& [k, v] : sz.items()) p.dims[k] = v.get<std::int64_t>();
      all.push_back(p);
    }
    for (const auto& p : sizes)
      if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
    sizes = std::move(all);
    std::vector<std::string> wl = old.at("workloads").get<std::vector<std::string>>();
    if (std::find(wl.begin(), wl.end(), w.key()) == wl.end()) wl.push_back(w.key());
    workloads = std::move(wl);
    description = old.value("description", description);
  }

  ojson spec;
  spec["name"] = name;
  spec["description"] = description;
  spec["family"] = "imported";
  spec["$comment"] =
      "A spec stub written by `autotune import`: parameters and problem sizes as the cache described them. To tune "
      "the kernel on a GPU, add source, kernels, launch, arguments and reference (docs/spec-format.md), change "
      "family to user and keep the parameter names.";
  ojson ps = ojson::array();
  for (const auto& p : params) {
    ojson pj;
    pj["name"] = p.name;
    pj["values"] = p.values;
    if (!p.labels.empty()) {
      ojson labels = ojson::object();
      for (std::size_t i = 0; i < p.labels.size(); ++i) labels[std::to_string(p.values[i])] = p.labels[i];
      pj["labels"] = labels;
    }
    ps.push_back(pj);
  }
  spec["parameters"] = ps;
  ojson sz = ojson::array();
  for (const auto& p : sizes) {
    ojson o = ojson::object();
    for (const auto& [k, v] : p.dims) o[k] = v;
    sz.push_back(o);
  }
  spec["problem"] = {{"dims", dims}, {"sizes", sz}};
  spec["workloads"] = workloads;
  return spec.dump(2);
}

std::string t4_stub_spec(const json& root, const std::string& file_kernel, const std::string& name,
                         const std::string& origin, const std::optional<Workload>& workload,
                         const std::optional<ProblemKey>& problem, const std::optional<std::string>& existing) {
  std::vector<std::string> keys;
  json values = json::object();  // parameter -> every value seen, in order (stub_param drops duplicates)
  std::vector<std::pair<Workload, ProblemKey>> groups;
  std::size_t n = 0;
  for (const auto& res : root.at("results")) {
    const std::string where = origin + ": result " + std::to_string(n++);
    if (!res.is_object()) throw UsageError(where + " is not an object");
    const json ext = res.contains("autotune") && res["autotune"].is_object() ? res["autotune"] : json::object();
    const std::string kernel = string_field(ext, "kernel", where);
    if (!kernel.empty() && !file_kernel.empty() && kernel != file_kernel) continue;
    if (!res.contains("configuration") || !res["configuration"].is_object())
      throw UsageError(where + " has no \"configuration\" object");
    for (const auto& [param, v] : res["configuration"].items()) {
      if (!values.contains(param)) {
        keys.push_back(param);
        values[param] = json::array();
      }
      values[param].push_back(v);
    }
    const std::string w_text = string_field(ext, "workload", where), p_text = string_field(ext, "problem", where);
    if (!problem && p_text.empty())
      throw UsageError(where +
                       " names no problem (T4 files carry none unless exported by autotune): give the size "
                       "it was measured at (--n, or --problem name=value,...)");
    Workload w{"float32", ""};
    if (workload) w = *workload;
    else if (!w_text.empty()) w = Workload::parse(w_text);
    const std::pair<Workload, ProblemKey> g{w, problem ? *problem : ProblemKey::parse(p_text)};
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  if (groups.empty())
    throw UsageError(origin + " holds no result" + (file_kernel.empty() ? "" : " of kernel " + file_kernel));
  const json kt = {
      {"kernel_name", name}, {"tune_params_keys", keys}, {"tune_params", values}, {"cache", json::object()}};
  std::optional<std::string> stub = existing;
  for (const auto& [w, p] : groups) stub = kt_stub_spec(kt, name, origin, w, p, stub);
  if (existing) return *stub;
  ojson spec = ojson::parse(*stub);
  spec["description"] =
      "imported from T4 file " + origin + " (kernel " + (file_kernel.empty() ? name : file_kernel) + ")";
  spec["$comment"] =
      "A spec stub written by `autotune import`: parameters and problem sizes as the T4 results described them. To "
      "tune the kernel on a GPU, add source, kernels, launch, arguments and reference (docs/spec-format.md), change "
      "family to user and keep the parameter names.";
  return spec.dump(2);
}

}  // namespace autotune::interop
