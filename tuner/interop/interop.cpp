#include "tuner/interop/interop.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <type_traits>
#include <utility>

#include "db/merge.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/stats.hpp"
#include "tuner/interop/kt_stub.hpp"

namespace autotune::interop {

namespace {

using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

std::string dump_short(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string names_of(const std::vector<Param>& params) {
  std::string out;
  for (const auto& p : params) out += (out.empty() ? "" : ", ") + p.name;
  return out;
}

/// A parameter value from JSON: an integer, a float with an integral value, a bool (0/1), a string holding
/// an integer, or a string that is one of the parameter's labels.
Value to_value(const json& v, const Param& p, const std::string& where) {
  // A label first: strings, and numbers that a stub labels (a list that mixes numbers and names, fractions).
  if (v.is_string() || v.is_number()) {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    for (const auto& [val, label] : p.labels)
      if (label == text) return val;
  }
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_unsigned()) {
    auto u = v.get<std::uint64_t>();
    if (u <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return static_cast<Value>(u);
  }
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e18) return static_cast<Value>(d);
  }
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    try {
      std::size_t used = 0;
      long long x = std::stoll(s, &used);
      if (used == s.size()) return x;
    } catch (const std::exception&) {
    }
  }
  std::string labels;
  for (const auto& [val, label] : p.labels) labels += (labels.empty() ? "" : ", ") + label;
  throw UsageError(where + ": value " + dump_short(v) + " of parameter " + p.name +
                   " is not an integer" + (labels.empty() ? "" : " or one of its labels (" + labels + ")"));
}

/// Fills min/spread/samples from sample times in ms.
void fill_from_samples(Measurement& m, const json& samples, const std::string& where) {
  if (!samples.is_array()) return;
  std::vector<double> ns;
  for (const auto& x : samples) {
    if (!x.is_number()) throw UsageError(where + ": run times must be numbers (got " + dump_short(x) + ")");
    ns.push_back(x.get<double>() * 1e6);
  }
  if (ns.empty()) return;
  m.samples = static_cast<int>(ns.size());
  m.min_ns = *std::min_element(ns.begin(), ns.end());
  m.spread = stats::relative_spread(ns);
  m.sample_ns = std::move(ns);  // kept: an export writes them back
}

double number_or(const json& obj, const char* key, double fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const json& obj, const char* key, const std::string& fallback = "") {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

/// Parses JSON, naming the file on failure.
json parse_json(const std::string& text, const std::string& origin) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw UsageError(origin + " is not valid JSON: " + e.what());
  }
}

/// Spec workload/problem defaults, overridden by the file's, overridden by the options.
Workload pick_workload(const ImportOptions& opt, const std::string& from_file) {
  Workload w = opt.workload ? *opt.workload
               : !from_file.empty() ? Workload::parse(from_file)
                                    : opt.spec->workloads.front();
  opt.spec->check_workload(w);
  return w;
}

ProblemKey pick_problem(const ImportOptions& opt, const std::string& from_file) {
  ProblemKey p;
  if (opt.problem) p = *opt.problem;
  else if (!from_file.empty()) p = ProblemKey::parse(from_file);
  else if (!opt.spec->problem_sizes.empty()) p = opt.spec->problem_sizes.front();
  else
    throw UsageError("kernel " + opt.spec->name +
                     " has no default problem size: give --problem (or --n/--rows/--cols)");
  opt.spec->check_problem(p);
  // Data read from files is part of the problem (as ProblemRequest::problem_key says): a spec whose inputs come
  // from files gets the trials under its data tag, so that tune --simulate and compare-strategies find them.
  if (p.data.empty()) {
    try {
      p.data = data_tag(*opt.spec);
    } catch (const SpecError&) {
      // an input file that cannot be read: the problem stays untagged
    }
  }
  return p;
}

void finish_row(ImportedTrial& t, const ImportOptions& opt, const Config& c, const Workload& w, const ProblemKey& p,
                double gbps_from_file) {
  t.row.kernel = opt.spec->name;
  t.row.source_hash = opt.source_hash;
  t.row.workload = w.key();
  t.row.problem = p.key();
  t.row.problem_elements = p.elements();
  t.row.config_json = c.to_json();
  t.row.config_hash = c.hash();
  if (!t.row.m.ok()) {
    t.row.gbps = 0;
  } else if (gbps_from_file > 0) {
    t.row.gbps = gbps_from_file;
  } else if (opt.bytes_moved && t.row.m.median_ns > 0) {
    double bytes = opt.bytes_moved(w, p);
    t.row.gbps = bytes > 0 ? bytes / t.row.m.median_ns : 0;
  }
}

void check_options(const ImportOptions& opt) {
  if (!opt.spec) throw Error("import: no kernel spec given");
  if (opt.spec->workloads.empty()) throw UsageError("kernel " + opt.spec->name + " declares no workload");
}

const char* t4_invalidity(TrialStatus s) {
  switch (s) {
    case TrialStatus::ok: return "correct";
    case TrialStatus::compile_error: return "compile";
    case TrialStatus::launch_error:
    case TrialStatus::invalid_resources:
    case TrialStatus::runtime_fault: return "runtime";
    case TrialStatus::wrong_result: return "correctness";
    case TrialStatus::timeout: return "timeout";
    case TrialStatus::invalid: return "constraints";
  }
  return "runtime";
}

/// Time unit factor to nanoseconds; empty unit = ms (Kernel Tuner's convention). -1 = not a time unit.
double unit_to_ns(const std::string& unit) {
  if (unit.empty() || unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  if (unit == "us" || unit == "\xC2\xB5s") return 1e3;
  if (unit == "ns") return 1;
  return -1;
}

}  // namespace

ImportFormat import_format_from_string(const std::string& s) {
  if (s == "kt-cache") return ImportFormat::kt_cache;
  if (s == "t4") return ImportFormat::t4;
  throw UsageError("unknown import format '" + s + "' (known: kt-cache, t4)");
}

// ---- Kernel Tuner cache

namespace {

/// The cache's tune_params_keys (when it lists them) must be exactly the spec's parameters.
void check_kt_keys(const std::vector<std::string>& keys, const ImportOptions& opt) {
  if (keys.empty()) return;
  const std::string& origin = opt.origin;
  const auto& params = opt.spec->params;
  for (const auto& name : keys)
    if (!opt.spec->find_param(name))
      throw UsageError(origin + ": parameter '" + name + "' of the cache is not a parameter of kernel " +
                       opt.spec->name + " (its parameters: " + names_of(params) + ")");
  for (const auto& p : params)
    if (std::find(keys.begin(), keys.end(), p.name) == keys.end())
      throw UsageError(origin + ": parameter '" + p.name + "' of kernel " + opt.spec->name +
                       " is missing from the cache (the cache's parameters: " + [&] {
                         std::string s;
                         for (const auto& n : keys) s += (s.empty() ? "" : ", ") + n;
                         return s;
                       }() + ")");
}

/// The configuration of a cache entry: values from the entry, else from the key ("v1,v2,..." in
/// tune_params_keys order).
Config kt_config(const std::string& key, const json& entry, const std::vector<std::string>& keys,
                 const std::vector<Param>& params, const std::string& where) {
  std::vector<std::string> key_parts;
  {
    std::stringstream ss(key);
    std::string part;
    while (std::getline(ss, part, ',')) key_parts.push_back(part);
  }
  Config c;
  for (const auto& prm : params) {
    auto it = entry.find(prm.name);
    if (it != entry.end()) {
      c.set(prm.name, to_value(*it, prm, where));
      continue;
    }
    auto pos = std::find(keys.begin(), keys.end(), prm.name);
    if (pos == keys.end() || keys.size() != key_parts.size())
      throw UsageError(where + " has no value for parameter " + prm.name);
    c.set(prm.name, to_value(json(key_parts[pos - keys.begin()]), prm, where));
  }
  return c;
}

/// Status and times of a cache entry: "time" in ms (and "times"), or one of Kernel Tuner's error strings.
void kt_times(Measurement& m, const json& entry, const std::string& where) {
  auto time = entry.find("time");
  if (time == entry.end()) throw UsageError(where + " has no \"time\"");
  if (time->is_number()) {
    double ms = time->get<double>();
    if (!std::isfinite(ms) || ms <= 0) throw UsageError(where + ": \"time\" must be a positive number of ms");
    m.status = TrialStatus::ok;
    m.median_ns = ms * 1e6;
    m.min_ns = m.median_ns;
    if (entry.contains("times")) fill_from_samples(m, entry["times"], where);
  } else if (time->is_string()) {
    const std::string s = time->get<std::string>();
    if (s == "CompilationFailedConfig") m.status = TrialStatus::compile_error;
    else if (s == "RuntimeFailedConfig") m.status = TrialStatus::launch_error;
    else if (s == "InvalidConfig") m.status = TrialStatus::invalid;
    else
      throw UsageError(where + ": unknown \"time\" value \"" + s +
                       "\" (expected a number of ms, InvalidConfig, CompilationFailedConfig or RuntimeFailedConfig)");
    m.median_ns = 0;
    m.log = "Kernel Tuner: " + s;
  } else {
    throw UsageError(where + ": \"time\" is neither a number nor a Kernel Tuner error string");
  }
}

}  // namespace

std::vector<ImportedTrial> parse_kt_cache(const std::string& text, const ImportOptions& opt) {
  check_options(opt);
  const std::string& origin = opt.origin;
  const json root = read_kt_cache_json(text, origin);
  const KtCacheHeader header = read_kt_header(root, origin);
  const auto& params = opt.spec->params;

  // Parameter names: the file's tune_params_keys must be exactly the spec's parameters.
  const std::vector<std::string>& keys = header.keys;
  check_kt_keys(keys, opt);

  DeviceInfo dev;
  if (opt.device) dev.name = *opt.device;
  else dev.name = string_or(root, "device_name");
  if (dev.name.empty()) throw UsageError(origin + " names no device (\"device_name\"): give --device");
  // The architecture: --cc, else the board's known one (0 = unknown: storing then needs the device recorded).
  dev.cc = opt.cc ? *opt.cc : cc_from_board_name(dev.name);
  const Workload w = pick_workload(opt, "");
  // The problem: the flags', else the cache's problem_size. Never a default: the rows would claim a size that
  // was not measured, and a second cache of another size would collide with them. Decided at the first entry
  // (after its values), so that an empty cache needs none.
  std::optional<ProblemKey> problem;
  auto the_problem = [&]() -> const ProblemKey& {
    if (problem) return *problem;
    std::optional<ProblemKey> from_cache = opt.problem ? std::nullopt : kt_problem(header, *opt.spec, origin);
    if (!opt.problem && !from_cache)
      throw UsageError(origin + ": " + header.no_problem_reason() + ": give the size it was measured at (--n, or "
                       "--problem name=value,...)");
    problem = pick_problem(opt, from_cache ? from_cache->key() : "");
    return *problem;
  };
  const std::string objective = string_or(root, "objective", "time");

  std::vector<ImportedTrial> out;
  for (const auto& [key, entry] : root["cache"].items()) {
    const std::string where = origin + ": cache entry \"" + key + "\"";
    if (!entry.is_object()) throw UsageError(where + " is not an object");
    Config c = kt_config(key, entry, keys, params, where);

    ImportedTrial t;
    t.device = dev;
    Measurement& m = t.row.m;
    kt_times(m, entry, where);
    m.compile_ms = number_or(entry, "compile_time", 0);
    m.verify_ms = number_or(entry, "verification_time", 0);
    m.protocol = "import:kt-cache;time=kernel_tuner;objective=" + objective;
    t.row.created_at = string_or(entry, "timestamp");
    finish_row(t, opt, c, w, the_problem(), m.ok() ? number_or(entry, "GB/s", 0) : 0);
    out.push_back(std::move(t));
  }
  return out;
}

// ---- T4

namespace {

/// Device descriptions by "name#cc", with their copy bandwidth.
using T4Devices = std::map<std::string, std::pair<DeviceInfo, double>>;

// A device description's keys are DeviceInfo's field names (DeviceInfo::for_each_field); a key that is missing
// or of another type leaves the field at its default.
void read_device_field(const json& d, const char* key, std::string& v) { v = string_or(d, key, v); }
void read_device_field(const json& d, const char* key, int& v) { v = static_cast<int>(number_or(d, key, v)); }
void read_device_field(const json& d, const char* key, std::uint64_t& v) {
  if (d.contains(key) && d[key].is_number_unsigned()) v = d[key].get<std::uint64_t>();
}

DeviceInfo t4_device_info(const json& d) {
  DeviceInfo i;
  DeviceInfo::for_each_field(i, [&](const char* key, auto& v) { read_device_field(d, key, v); });
  return i;
}

/// Our top-level extension: full device descriptions by name.
T4Devices t4_known_devices(const json& root) {
  T4Devices known;
  if (!(root.contains("autotune") && root["autotune"].is_object() && root["autotune"].contains("devices")))
    return known;
  for (const auto& d : root["autotune"]["devices"]) {
    if (!d.is_object()) continue;
    DeviceInfo i = t4_device_info(d);
    if (!i.name.empty()) known[i.name + "#" + std::to_string(i.cc)] = {i, number_or(d, "copy_gbps", 0)};
  }
  return known;
}

/// The configuration of a result: every parameter of the spec and no other.
Config t4_config(const json& res, const json& ext, const ImportOptions& opt, const std::string& where) {
  if (!res.contains("configuration") || !res["configuration"].is_object())
    throw UsageError(where + " has no \"configuration\" object");
  // Our export's numbers where present (the configuration may hold labels of another spec version).
  // A stub's labels are matched by their text: its numbering may differ from that of the stub exported.
  const json& conf = !opt.spec->is_stub() && ext.contains("config_values") && ext["config_values"].is_object()
                         ? ext["config_values"]
                         : res["configuration"];
  const auto& params = opt.spec->params;
  for (const auto& [name, v] : conf.items())
    if (!opt.spec->find_param(name))
      throw UsageError(where + ": parameter '" + name + "' is not a parameter of kernel " + opt.spec->name +
                       " (its parameters: " + names_of(params) + ")");
  Config c;
  for (const auto& prm : params) {
    auto it = conf.find(prm.name);
    if (it == conf.end())
      throw UsageError(where + ": parameter '" + prm.name + "' of kernel " + opt.spec->name +
                       " is missing from the configuration");
    c.set(prm.name, to_value(*it, prm, where));
  }
  return c;
}

/// t.device (and t.copy_gbps): the options' device, else the result's, described by `known` where it can.
void t4_device(ImportedTrial& t, const json& ext, const ImportOptions& opt, const T4Devices& known,
               const std::string& where) {
  if (opt.device) {
    t.device.name = *opt.device;
    t.device.cc = opt.cc ? *opt.cc : cc_from_board_name(t.device.name);
    return;
  }
  t.device.name = string_or(ext, "device");
  if (t.device.name.empty())
    throw UsageError(where + " names no device (T4 files carry none unless exported by autotune): give --device");
  t.device.cc = opt.cc ? *opt.cc : static_cast<int>(number_or(ext, "cc", 0));
  auto k = known.find(t.device.name + "#" + std::to_string(t.device.cc));
  if (k != known.end()) {
    t.device = k->second.first;
    t.copy_gbps = k->second.second;
  }
}

/// Our exact status when exported by autotune, else the T4 invalidity.
TrialStatus t4_status(const json& res, const json& ext, const std::string& where) {
  std::string status = string_or(ext, "status");
  const std::string invalidity = string_or(res, "invalidity", "correct");
  if (!status.empty()) {
    try {
      return trial_status_from_string(status);
    } catch (const std::exception&) {
      throw UsageError(where + ": unknown autotune status '" + status + "'");
    }
  }
  if (invalidity == "correct") return TrialStatus::ok;
  if (invalidity == "compile") return TrialStatus::compile_error;
  if (invalidity == "runtime") return TrialStatus::runtime_fault;
  if (invalidity == "correctness") return TrialStatus::wrong_result;
  if (invalidity == "timeout") return TrialStatus::timeout;
  if (invalidity == "constraints") return TrialStatus::invalid;
  throw UsageError(where + ": unknown invalidity '" + invalidity +
                   "' (expected correct, compile, runtime, correctness, timeout or constraints)");
}

/// A result's "measurements" by name: value and unit.
class T4Measurements {
 public:
  explicit T4Measurements(const json& res) {
    if (res.contains("measurements") && res["measurements"].is_array())
      for (const auto& x : res["measurements"])
        if (x.is_object() && x.contains("name") && x["name"].is_string() && x.contains("value"))
          meas_[x["name"].get<std::string>()] = {x["value"], string_or(x, "unit")};
  }
  /// In ns; -1 = absent or not a time.
  double time_ns(const std::string& name) const {
    auto it = meas_.find(name);
    if (it == meas_.end() || !it->second.first.is_number()) return -1;
    double f = unit_to_ns(it->second.second);
    return f < 0 ? -1 : it->second.first.get<double>() * f;
  }
  /// The value of `name` where it is a number.
  std::optional<double> number(const std::string& name) const {
    auto it = meas_.find(name);
    if (it == meas_.end() || !it->second.first.is_number()) return std::nullopt;
    return it->second.first.get<double>();
  }

 private:
  std::map<std::string, std::pair<json, std::string>> meas_;
};

/// The times of a correct result: a "time" measurement, the objective's, or the median of times.runtimes.
void t4_times(Measurement& m, const json& res, const T4Measurements& meas, const json& times,
              const std::string& where) {
  std::string objective = "time";
  if (res.contains("objectives") && res["objectives"].is_array() && !res["objectives"].empty() &&
      res["objectives"][0].is_string())
    objective = res["objectives"][0].get<std::string>();
  const json runtimes = times.contains("runtimes") ? times["runtimes"] : json::array();
  double ns = meas.time_ns("time");
  if (ns < 0) ns = meas.time_ns(objective);
  if (ns < 0 && runtimes.is_array() && !runtimes.empty()) {
    Measurement tmp;
    fill_from_samples(tmp, runtimes, where);
    std::vector<double> v;
    for (const auto& x : runtimes) v.push_back(x.get<double>() * 1e6);
    ns = stats::median(v);
  }
  if (!(ns > 0) || !std::isfinite(ns))
    throw UsageError(where + " is marked correct but has no positive time (a \"time\" measurement, the "
                             "objective's measurement or times.runtimes)");
  m.median_ns = ns;
  m.min_ns = ns;
  fill_from_samples(m, runtimes, where);
  double mn = meas.time_ns("time_min");
  if (mn > 0) m.min_ns = mn;
  if (auto spread = meas.number("spread")) m.spread = *spread;
  if (auto samples = meas.number("samples")) m.samples = static_cast<int>(*samples);
}

/// One result of the file (an object) as a trial of opt.spec.
ImportedTrial t4_trial(const json& res, const json& ext, const ImportOptions& opt, const T4Devices& known,
                       const std::string& where) {
  Config c = t4_config(res, ext, opt, where);
  ImportedTrial t;
  t4_device(t, ext, opt, known, where);
  Measurement& m = t.row.m;
  m.status = t4_status(res, ext, where);
  const T4Measurements meas(res);
  const json times = res.contains("times") && res["times"].is_object() ? res["times"] : json::object();
  if (m.ok()) {
    t4_times(m, res, meas, times, where);
  } else {
    m.median_ns = 0;
    m.log = "T4 invalidity: " + string_or(res, "invalidity", "correct");
  }
  m.compile_ms = number_or(times, "compilation", number_or(times, "compilation_time", 0));
  m.verify_ms = number_or(times, "validation", 0);
  m.protocol = ext.contains("protocol") ? string_or(ext, "protocol") : "import:t4";
  if (ext.contains("log")) m.log = string_or(ext, "log");
  t.row.created_at = string_or(res, "timestamp");
  const double gbps = meas.number("GB/s").value_or(0);
  finish_row(t, opt, c, pick_workload(opt, string_or(ext, "workload")), pick_problem(opt, string_or(ext, "problem")),
             gbps);
  return t;
}

}  // namespace

std::vector<ImportedTrial> parse_t4(const std::string& text, const ImportOptions& opt, std::size_t* skipped) {
  check_options(opt);
  const std::string& origin = opt.origin;
  const json root = parse_json(text, origin);
  if (!root.is_object() || !root.contains("results") || !root["results"].is_array())
    throw UsageError(origin + " is not a T4 results file (no \"results\" array)");
  const T4Devices known_devices = t4_known_devices(root);
  std::vector<ImportedTrial> out;
  std::size_t skip = 0, n = 0;
  for (const auto& res : root["results"]) {
    const std::string where = origin + ": result " + std::to_string(n++);
    if (!res.is_object()) throw UsageError(where + " is not an object");
    const json ext = res.contains("autotune") && res["autotune"].is_object() ? res["autotune"] : json::object();
    const std::string kernel = string_or(ext, "kernel");
    if (!kernel.empty() && kernel != (opt.file_kernel.empty() ? opt.spec->name : opt.file_kernel)) {
      ++skip;
      continue;
    }
    out.push_back(t4_trial(res, ext, opt, known_devices, where));
  }
  if (skipped) *skipped = skip;
  return out;
}

// ---- storing

ImportReport store_trials(db::Database& db, const std::vector<ImportedTrial>& trials, const TuningSpec* spec) {
  ImportReport rep;
  rep.read = trials.size();
  std::vector<db::DeviceRow> existing = db.devices();
  std::map<std::string, std::int64_t> resolved;  // name#cc -> id
  std::set<std::string> groups;
  db.transaction([&] {
    for (const auto& it : trials) {
      const std::string key = it.device.name + "#" + std::to_string(it.device.cc);
      auto r = resolved.find(key);
      std::int64_t id = 0;
      if (r != resolved.end()) {
        id = r->second;
      } else {
        const std::string norm = it.device.normalised_name();
        for (const auto& d : existing)
          if ((d.info.name == it.device.name || d.info.normalised_name() == norm) &&
              (it.device.cc == 0 || d.info.cc == it.device.cc)) {
            id = d.id;
            break;
          }
        if (!id) {
          if (it.device.cc <= 0)
            throw UsageError("device '" + it.device.name + "' is not in " + db.path() + " and its compute capability "
                             "is not known from its name: give it with --cc (e.g. --cc 80 for sm_80)");
          id = db.upsert_device(it.device);
          if (it.copy_gbps > 0) db.set_copy_bandwidth(id, it.copy_gbps);
          existing = db.devices();
        }
        resolved[key] = id;
        if (std::find(rep.devices.begin(), rep.devices.end(), it.device.name) == rep.devices.end())
          rep.devices.push_back(it.device.name);
      }
      db::TrialRow row = it.row;
      row.id = 0;
      row.session_id = 0;
      row.device_id = id;
      if (db.insert_trial(row)) {
        ++rep.inserted;
      } else {
        // Same key: "already present" only when it is the same measurement; another one is a conflict.
        auto have =
            db.find_trial(row.kernel, row.source_hash, row.device_id, row.workload, row.problem, row.config_hash);
        if (have && db::same_measurement(have->m, row.m)) ++rep.duplicates;
        else ++rep.conflicts;
      }
      ++rep.by_status[to_string(row.m.status)];
      groups.insert(row.workload + " " + row.problem);
      if (spec) {
        Config c = Config::from_json(row.config_json);
        for (const auto& p : spec->params)
          if (c.has(p.name) && p.index_of(c.at(p.name)) < 0) {
            ++rep.outside_spec;
            break;
          }
      }
    }
  });
  rep.groups.assign(groups.begin(), groups.end());
  return rep;
}

// ---- export

namespace {

/// An observed quantity that Kernel Tuner's NVML observer has: its name there and unit, in the order T4 lists them.
struct T4Observed {
  const char* field;  // Observation::for_each_field
  const char* name;
  const char* unit;
};
constexpr T4Observed kT4Observed[] = {
    {"power_w", "nvml_power", "W"},        {"energy_j", "nvml_energy", "J"},
    {"sm_clock_mhz", "core_freq", "MHz"},  {"sm_clock_min_mhz", "core_freq_min", "MHz"},
    {"mem_clock_mhz", "mem_freq", "MHz"},  {"mem_clock_min_mhz", "mem_freq_min", "MHz"},
    {"temperature_c", "temperature", "C"},
};

const T4Observed* kt_observed_name(const char* field) {
  for (const T4Observed& k : kT4Observed)
    if (std::strcmp(k.field, field) == 0) return &k;
  return nullptr;
}

/// The number field `field` of o (Observation::for_each_field); NaN for another name.
double observed_number(const Observation& o, const char* field) {
  double out = std::nan("");
  Observation::for_each_field(o, [&](const char* name, const auto& v) {
    if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
      if (std::strcmp(name, field) == 0) out = v;
  });
  return out;
}

/// The unit of an observed field from its name's suffix (the project's naming: power_w, energy_j, sm_clock_mhz,
/// temperature_c, ..._pct); "" where the suffix names none.
const char* unit_of_field(const std::string& field) {
  static const std::pair<const char*, const char*> kSuffixes[] = {
      {"_mhz", "MHz"}, {"_w", "W"}, {"_j", "J"}, {"_c", "C"}, {"_pct", "%"}, {"_ms", "ms"}, {"_ns", "ns"}};
  for (const auto& [suffix, unit] : kSuffixes) {
    const std::size_t n = std::strlen(suffix);
    if (field.size() > n && field.compare(field.size() - n, n, suffix) == 0) return unit;
  }
  return "";
}

}  // namespace

std::string export_t4(const db::Database& db, const ExportFilter& f, std::size_t* count) {
  std::map<std::int64_t, db::DeviceRow> devices;
  std::string names;
  for (const auto& d : db.devices()) {
    names += (names.empty() ? "" : ", ") + d.info.name;
    if (!f.device || d.info.name == *f.device || d.info.normalised_name() == *f.device) devices[d.id] = d;
  }
  if (f.device && devices.empty())
    throw UsageError("device '" + *f.device + "' is not recorded in " + db.path() +
                     (names.empty() ? std::string(" (no devices)") : " (recorded: " + names + ")"));
  db::TrialFilter tf;
  tf.kernel = f.kernel;
  tf.workload = f.workload;
  tf.problem = f.problem;
  if (devices.size() == 1) tf.device_id = devices.begin()->first;

  ojson results = ojson::array();
  std::set<std::int64_t> used_devices;
  for (const auto& t : db.trials(tf)) {
    auto d = devices.find(t.device_id);
    if (d == devices.end()) continue;
    used_devices.insert(t.device_id);
    ojson r;
    r["timestamp"] = t.created_at;
    const Config config = Config::from_json(t.config_json);
    const std::vector<Param>* params = f.params_of ? f.params_of(t.kernel) : nullptr;
    r["configuration"] = ojson::parse(params ? config.to_labelled_json(*params) : config.to_json());
    ojson times = ojson::object();
    times["compilation"] = std::isfinite(t.m.compile_ms) ? t.m.compile_ms : 0.0;
    times["validation"] = std::isfinite(t.m.verify_ms) ? t.m.verify_ms : 0.0;
    ojson runtimes = ojson::array();  // the individual timings where they were kept (imports), in ms
    for (double ns : t.m.sample_ns) runtimes.push_back(ns / 1e6);
    times["runtimes"] = runtimes;
    r["times"] = times;
    r["invalidity"] = t4_invalidity(t.m.status);
    r["correctness"] = t.m.status == TrialStatus::wrong_result ? 0 : 1;
    ojson meas = ojson::array();
    auto add = [&](const char* name, double v, const char* unit) {
      if (std::isfinite(v)) meas.push_back(ojson{{"name", name}, {"value", v}, {"unit", unit}});
    };
    if (t.m.ok()) {
      add("time", t.m.median_ns / 1e6, "ms");
      add("time_min", t.m.min_ns / 1e6, "ms");
      add("spread", t.m.spread, "");
      meas.push_back(ojson{{"name", "samples"}, {"value", t.m.samples}, {"unit", ""}});
      if (t.gbps > 0) add("GB/s", t.gbps, "GB/s");
      // Observed quantities (docs/observers.md): every number of Observation::for_each_field but the power limit
      // (an "autotune" extension below), under Kernel Tuner's NVML observer names first, then any other under its
      // own field name.
      const Observation& o = t.m.observed;
      for (const T4Observed& k : kT4Observed) add(k.name, observed_number(o, k.field), k.unit);
      Observation::for_each_field(o, [&](const char* field, const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>)
          if (!kt_observed_name(field) && std::strcmp(field, "power_limit_w") != 0) add(field, v, unit_of_field(field));
      });
      // The observers' named values (hardware counters: docs/observers.md) under their own names and units.
      for (const Metric& mv : o.metrics) add(mv.name.c_str(), mv.value, mv.unit.c_str());
      if (t.gbps > 0 && o.power_w > 0) add("GB/s/W", t.gbps / o.power_w, "GB/s/W");
    }
    r["measurements"] = meas;
    r["objectives"] = ojson::array({"time"});
    ojson ext;
    ext["kernel"] = t.kernel;
    ext["config_values"] = ojson::parse(t.config_json);
    ext["source_hash"] = t.source_hash;
    ext["device"] = d->second.info.name;
    ext["cc"] = d->second.info.cc;
    ext["workload"] = t.workload;
    ext["problem"] = t.problem;
    ext["status"] = to_string(t.m.status);
    ext["protocol"] = t.m.protocol;
    ext["log"] = t.m.log;
    if (t.m.observed.observed()) {
      ext["observer"] = t.m.observed.method;
      ext["throttle_reasons"] = throttle_reason_names(t.m.observed.throttle_reasons);
      ext["throttled"] = t.m.observed.throttled();
      if (std::isfinite(t.m.observed.power_limit_w)) ext["power_limit_w"] = t.m.observed.power_limit_w;
    }
    r["autotune"] = ext;
    results.push_back(std::move(r));
  }
  ojson devs = ojson::array();
  for (std::int64_t id : used_devices) {
    const auto& d = devices[id];
    const DeviceInfo& i = d.info;
    ojson dev = ojson::object();
    DeviceInfo::for_each_field(i, [&](const char* key, const auto& v) { dev[key] = v; });
    dev["copy_gbps"] = d.copy_gbps;
    devs.push_back(std::move(dev));
  }
  if (count) *count = results.size();
  ojson root;
  root["schema_version"] = "1.0.0";
  root["results"] = std::move(results);
  root["autotune"] = ojson{{"exported_by", "autotune"}, {"devices", std::move(devs)}};
  return root.dump(1) + "\n";
}

}  // namespace autotune::interop
