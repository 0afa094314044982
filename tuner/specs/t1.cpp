#include "tuner/specs/t1.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "tuner/core/error.hpp"
#include "tuner/core/expr/pyexpr.hpp"
#include "tuner/core/keys.hpp"
#include "tuner/core/space.hpp"
#include "tuner/core/spec.hpp"

namespace autotune::specs {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

std::string at(const std::string& base, const std::string& key) { return base + "/" + key; }
std::string at(const std::string& base, std::size_t i) { return base + "/" + std::to_string(i); }

const json& need(const json& obj, const std::string& ptr, const std::string& key) {
  if (!obj.is_object() || !obj.contains(key)) throw SpecError(at(ptr, key), "required field '" + key + "' is missing");
  return obj.at(key);
}

std::string text_of(const json& j, const std::string& ptr) {
  if (!j.is_string()) throw SpecError(ptr, std::string("expected a string, got ") + j.type_name());
  return j.get<std::string>();
}

/// An expression field: a string, or a number (T1 files write sizes both ways).
std::string expression_of(const json& j, const std::string& ptr) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number_integer()) return j.dump();
  throw SpecError(ptr, std::string("expected an expression (a string or an integer), got ") + j.type_name());
}

/// Fields of KTT's flavour of T1 (its tuning scripts, read by KTT's TuningLoader) that change nothing here, by
/// pointer, with what the tuner does instead (docs/spec-format.md "KTT's flavour").
const std::map<std::string, std::string>& explained_fields() {
  static const std::map<std::string, std::string> kSaid = {
      {"/General/LoggingLevel", "KTT's level of log messages; not used (this tuner's messages do not change)"},
      {"/General/TimeUnit",
       "KTT's unit of the times it prints; not used (times are recorded in milliseconds; `summary` and `best` "
       "print them)"},
      {"/General/OutputFile",
       "KTT's results file; not written (every trial is recorded in the database, --db; `autotune export "
       "--format t4` writes a results file)"},
      {"/General/OutputFormat", "the format of KTT's results file; not used (see OutputFile)"},
      {"/KernelSpecification/SimulationInput",
       "KTT's recorded results, replayed instead of tuning; not used (this tuner measures on the GPU; trials "
       "recorded in a database replay with `tune --simulate`)"},
      {"/KernelSpecification/Profiling",
       "KTT's profiling counters; not collected (each configuration is timed as usual)"},
      {"/KernelSpecification/Device", "the device of KTT's run; not used (choose the GPU with --gpu)"},
      {"/KernelSpecification/KernelTypeNames",
       "KTT's template arguments of the kernel; not used (name the instantiation in KernelName, e.g. \"k<float>\")"},
      {"/KernelSpecification/Stream", "informative, not used"},
      {"/KernelSpecification/BenchmarkName", "informative, not used"},
  };
  return kSaid;
}

/// Notes of fields that are read but change nothing, and the check that no field goes unread.
class Fields {
 public:
  explicit Fields(std::vector<std::string>& notes) : notes_(notes) {}
  /// Every key of obj is one of `used`, or one of `informative` (noted as not used, with the reason
  /// explained_fields() gives where it has one), else noted as unknown.
  void check(const json& obj, const std::string& ptr, const std::set<std::string>& used,
             const std::set<std::string>& informative = {}) {
    if (!obj.is_object()) throw SpecError(ptr, std::string("expected an object, got ") + obj.type_name());
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      if (used.count(it.key())) continue;
      const std::string field = at(ptr, it.key());
      if (informative.count(it.key())) {
        auto said = explained_fields().find(field);
        notes_.push_back(field + ": " + (said != explained_fields().end() ? said->second : "informative, not used"));
      } else {
        notes_.push_back(field + ": not a T1 field this tuner knows; ignored");
      }
    }
  }
  /// A note of the conversion for the user.
  void note(std::string text) { notes_.push_back(std::move(text)); }

 private:
  std::vector<std::string>& notes_;
};

// ---- the problem ---------------------------------------------------------------------------------------------

/// T1's ProblemSize as problem dims: n for one value, nx, ny (, nz) for a list.
struct Problem {
  std::vector<std::string> dims;
  std::vector<std::int64_t> sizes;
};

Problem read_problem(const json& ks) {
  Problem p;
  if (!ks.contains("ProblemSize") || ks["ProblemSize"].is_null()) {
    p.dims = {"n"};
    p.sizes = {1};
    return p;
  }
  const json& ps = ks["ProblemSize"];
  const std::string ptr = "/KernelSpecification/ProblemSize";
  const json list = ps.is_array() ? ps : json::array({ps});
  if (list.empty() || list.size() > 3) throw SpecError(ptr, "expected a size or a list of 1 to 3 sizes");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_number_integer() || list[i].get<std::int64_t>() < 1)
      throw SpecError(at(ptr, i), "expected a positive integer, got " + list[i].dump());
    p.sizes.push_back(list[i].get<std::int64_t>());
    static const char* const kXyz[] = {"nx", "ny", "nz"};
    p.dims.push_back(list.size() == 1 && !ps.is_array() ? "n" : kXyz[i]);
  }
  return p;
}

/// The text with ProblemSize[k] replaced by the k-th problem dim (and a bare ProblemSize of one size by it).
std::string with_dims(const std::string& text, const Problem& pr, const std::string& ptr) {
  static const std::regex indexed(R"(\bProblemSize\s*\[\s*(\d+)\s*\])");
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), indexed);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::size_t k = std::stoul((*it)[1].str());
    if (k >= pr.dims.size())
      throw SpecError(ptr, "\"" + text + "\" reads ProblemSize[" + std::to_string(k) + "], but ProblemSize has " +
                               std::to_string(pr.dims.size()) + " value(s)");
    out += text.substr(last, static_cast<std::size_t>(it->position()) - last) + pr.dims[k];
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  out += text.substr(last);
  static const std::regex bare(R"(\bProblemSize\b)");
  if (std::regex_search(out, bare)) {
    if (pr.dims.size() != 1)
      throw SpecError(ptr, "\"" + text + "\" reads ProblemSize as one number, but it has " +
                               std::to_string(pr.dims.size()) + " values: index it (ProblemSize[0])");
    out = std::regex_replace(out, bare, pr.dims[0]);
  }
  return out;
}

// ---- parameters ----------------------------------------------------------------------------------------------

/// A PyValue as JSON (ints, floats, strings, bools).
json to_json(const PyValue& v, const std::string& ptr) {
  if (const std::int64_t* i = v.if_int()) return *i;
  if (const double* f = v.if_float()) return *f;
  if (const bool* b = v.if_bool()) return *b;
  if (const std::string* s = v.if_str()) return *s;
  throw SpecError(ptr, std::string("a value of type ") + v.type_name() + " cannot be a parameter value");
}

struct Params {
  json native = json::array();
  std::map<std::string, PyValue> lists;  // name -> the list of its values (what T1's size expressions read)
};

json read_parameter(const json& tp, const std::string& ptr, Fields& fields, Params& params,
                    std::vector<std::string>& notes) {
  fields.check(tp, ptr, {"Name", "Type", "Values", "Default"}, {"Description"});
  const std::string name = text_of(need(tp, ptr, "Name"), at(ptr, "Name"));
  const std::string type = text_of(need(tp, ptr, "Type"), at(ptr, "Type"));
  if (type != "int" && type != "uint" && type != "float" && type != "bool" && type != "string")
    throw SpecError(at(ptr, "Type"), "expected int, uint, float, bool or string, got '" + type + "'");
  const json& vj = need(tp, ptr, "Values");
  const std::string vptr = at(ptr, "Values");
  PyValue values;
  try {
    values = vj.is_string()
                 ? PyExpr::parse(vj.get<std::string>()).eval([](const std::string&) -> std::optional<PyValue> {
                     return std::nullopt;
                   })
                 : PyExpr::parse(vj.dump()).eval([](const std::string&) { return std::optional<PyValue>(); });
  } catch (const PyExprError& e) {
    throw SpecError(vptr, e.what());
  }
  if (!values.is_list() || values.as_list().empty())
    throw SpecError(vptr, "expected a non-empty list of values, got " + values.repr());
  json out = json::array();
  PyValue::List kept;
  for (const PyValue& v : values.as_list()) {
    const bool ok = (type == "int" && v.is_int()) || (type == "uint" && v.is_int() && v.as_int() >= 0) ||
                    (type == "float" && (v.is_float() || v.is_int())) || (type == "bool" && v.is_bool()) ||
                    (type == "string" && v.is_str());
    if (!ok) throw SpecError(vptr, "value " + v.repr() + " is not of Type " + type);
    if (std::any_of(kept.begin(), kept.end(), [&](const PyValue& k) { return k.equals(v) && k.type() == v.type(); })) {
      notes.push_back(vptr + ": the value " + v.repr() + " is listed twice; taken once");
      continue;
    }
    kept.push_back(v);
    out.push_back(to_json(v, vptr));
  }
  json p = {{"name", name}, {"values", out}};
  if (tp.contains("Default")) {
    // Kernel Tuner does not read Default; a default that is not a value is noted, and the first value is taken.
    const json& d = tp["Default"];
    if (std::find(out.begin(), out.end(), d) == out.end())
      notes.push_back(at(ptr, "Default") + ": " + d.dump() + " is not one of the values; the first value, " +
                      out.front().dump() + ", is the default");
    else
      p["default"] = d;
  }
  params.lists[name] = PyValue::list(kept);
  return p;
}

// ---- launch --------------------------------------------------------------------------------------------------

/// "x" of a T1 size object, or "1".
std::string dim_of(const json& obj, const std::string& ptr, const char* key, const Problem& pr) {
  if (!obj.contains(key)) return "1";
  return with_dims(expression_of(obj[key], at(ptr, key)), pr, at(ptr, key));
}

/// The launch step: block from LocalSize; grid as Kernel Tuner computes it from ProblemSize and GridDivX/Y/Z when
/// a GridDiv is given (grid = ceil(size / product of the divisors), the divisors defaulting to block_size_x/y/z
/// where such a parameter exists), else from GlobalSize (blocks for GlobalSizeType CUDA, threads for OpenCL).
json read_launch(const json& ks, const std::string& kernel, const Problem& pr, const Params& params) {
  const std::string ptr = "/KernelSpecification";
  const json& local = need(ks, ptr, "LocalSize");
  if (!local.is_object())
    throw SpecError(at(ptr, "LocalSize"), "expected an object {\"X\": ..., \"Y\": ..., \"Z\": ...}");
  std::vector<std::string> block = {dim_of(local, at(ptr, "LocalSize"), "X", pr),
                                    dim_of(local, at(ptr, "LocalSize"), "Y", pr),
                                    dim_of(local, at(ptr, "LocalSize"), "Z", pr)};
  std::vector<std::string> grid(3, "1");
  bool divs = false;
  for (const char* g : {"GridDivX", "GridDivY", "GridDivZ"})
    divs = divs || (ks.contains(g) && ks[g].is_array() && !ks[g].empty());
  if (divs && ks.contains("ProblemSize")) {
    static const char* const kDiv[] = {"GridDivX", "GridDivY", "GridDivZ"};
    static const char* const kDefault[] = {"block_size_x", "block_size_y", "block_size_z"};
    for (std::size_t d = 0; d < 3; ++d) {
      std::vector<std::string> by;
      if (ks.contains(kDiv[d]) && !ks[kDiv[d]].is_null()) {
        const json& l = ks[kDiv[d]];
        if (!l.is_array()) throw SpecError(at(ptr, kDiv[d]), "expected a list of parameter names or expressions");
        for (std::size_t i = 0; i < l.size(); ++i)
          by.push_back("(" + with_dims(expression_of(l[i], at(at(ptr, kDiv[d]), i)), pr, at(at(ptr, kDiv[d]), i)) +
                       ")");
      } else if (params.lists.count(kDefault[d])) {
        by.push_back(kDefault[d]);
      }
      const std::string size = d < pr.dims.size() ? pr.dims[d] : "1";
      std::string product;
      for (const std::string& b : by) product += (product.empty() ? "" : " * ") + b;
      grid[d] = product.empty() ? size : "-(-" + size + " // (" + product + "))";
    }
  } else {
    const json& global = need(ks, ptr, "GlobalSize");
    if (!global.is_object()) throw SpecError(at(ptr, "GlobalSize"), "expected an object {\"X\": ...}");
    const std::string type =
        ks.contains("GlobalSizeType") ? text_of(ks["GlobalSizeType"], at(ptr, "GlobalSizeType")) : "CUDA";
    if (type != "CUDA" && type != "OpenCL")
      throw SpecError(at(ptr, "GlobalSizeType"),
                      "expected CUDA (GlobalSize in blocks) or OpenCL (in threads), got '" + type + "'");
    static const char* const kXyz[] = {"X", "Y", "Z"};
    for (std::size_t d = 0; d < 3; ++d) {
      const std::string g = dim_of(global, at(ptr, "GlobalSize"), kXyz[d], pr);
      grid[d] = type == "CUDA" ? g : "-(-(" + g + ") // (" + block[d] + "))";
    }
  }
  json step = {{"kernel", kernel}, {"grid", grid}, {"block", block}};
  if (ks.contains("SharedMemory") && !ks["SharedMemory"].is_null())
    step["shared_mem"] =
        with_dims(expression_of(ks["SharedMemory"], at(ptr, "SharedMemory")), pr, at(ptr, "SharedMemory"));
  return step;
}

// ---- arguments -----------------------------------------------------------------------------------------------

/// T1 Type -> (element dtype, elements per value): vector types are their element type times the width.
std::pair<std::string, int> element_type(const std::string& t, const std::string& ptr) {
  static const std::map<std::string, std::string> scalar = {
      {"bool", "uint8"},    {"int8", "int8"},    {"uint8", "uint8"},   {"int16", "int16"},
      {"uint16", "uint16"}, {"int32", "int32"},  {"uint32", "uint32"}, {"int64", "int64"},
      {"uint64", "uint64"}, {"half", "float16"}, {"float", "float32"}, {"double", "float64"}};
  if (auto it = scalar.find(t); it != scalar.end()) return {it->second, 1};
  static const std::regex vec(R"((half|float|double)(2|4|8|16))");
  std::smatch m;
  if (std::regex_match(t, m, vec)) return {scalar.at(m[1].str()), std::stoi(m[2].str())};
  if (t == "custom") return {"uint8", 0};  // TypeSize bytes per value
  throw SpecError(ptr, "unknown Type '" + t + "'");
}

/// A data file named by DataSource, as the path to put in the spec (relative to the T1 file's folder where the
/// file is found there or one folder up, else as given).
std::string data_path(const std::string& given, const fs::path& t1_dir) {
  std::error_code ec;
  if (fs::exists(t1_dir / given, ec)) return given;
  if (fs::exists(t1_dir.parent_path() / given, ec)) return (fs::path("..") / given).string();
  if (fs::exists(given, ec)) return fs::absolute(given, ec).string();
  return given;  // the spec names it; loading reports the missing file with the pointer
}

/// A FillValue for an element of dtype: integral numbers as integers for integer types (T1 files write 0.0).
json fill_value(const json& v, const std::string& dtype, const std::string& ptr) {
  if (!v.is_number()) throw SpecError(ptr, std::string("expected a number, got ") + v.type_name());
  if (dtype.rfind("float", 0) == 0 || v.is_number_integer()) return v;
  const double x = v.get<double>();
  if (x != std::floor(x)) throw SpecError(ptr, "a fraction, " + v.dump() + ", for an argument of type " + dtype);
  return static_cast<std::int64_t>(x);
}

/// A Generator's expression as KTT evaluates it: Python, once per element with the element's index bound to `i` (and
/// nothing else bound). Throws SpecError at `ptr` naming the expression when it does not parse or reads another name.
std::string generator_of(const json& r, const std::string& ptr) {
  std::string text = text_of(need(r, ptr, "DataSource"), at(ptr, "DataSource"));
  try {
    const PyExpr e = PyExpr::parse(text);
    for (const std::string& v : e.variables())
      if (v != "i")
        throw SpecError(at(ptr, "DataSource"), "the Generator \"" + text + "\" reads '" + v +
                                                   "': a Generator is an expression of the element index i");
  } catch (const PyExprError& e) {
    throw SpecError(at(ptr, "DataSource"), "the Generator \"" + text + "\": " + e.what());
  }
  return text;
}

/// The init of an input from its FillType (and FillValue, RandomSeed, DataSource).
json read_fill(const json& a, const std::string& ptr, const fs::path& t1_dir, const std::string& dtype) {
  const std::string fill = a.contains("FillType") ? text_of(a["FillType"], at(ptr, "FillType")) : "Constant";
  const double value = a.contains("FillValue") && a["FillValue"].is_number() ? a["FillValue"].get<double>() : 0.0;
  if (fill == "Constant")
    return {{"constant", a.contains("FillValue") ? fill_value(a["FillValue"], dtype, at(ptr, "FillValue")) : json(0)}};
  if (fill == "Random") {
    json r = json::object();
    if (a.contains("RandomSeed")) r["seed"] = a["RandomSeed"];
    if (value > 0) {
      r["min"] = 0;
      r["max"] = fill_value(a["FillValue"], dtype, at(ptr, "FillValue"));
    }
    return {{"random", r}};
  }
  if (fill == "Generator") return {{"generator", generator_of(a, ptr)}};
  if (fill == "BinaryRaw") {
    const std::string file = data_path(text_of(need(a, ptr, "DataSource"), at(ptr, "DataSource")), t1_dir);
    json f = {{"file", file}};
    if (fs::path(file).extension() != ".npy") f["format"] = "raw";
    return f;
  }
  if (fill == "BinaryHDF")
    throw SpecError(at(ptr, "FillType"),
                    "BinaryHDF: HDF5 inputs are not read by this tuner; give the data as a raw "
                    "binary file (BinaryRaw) or a NumPy .npy file");
  if (fill == "Script")
    throw SpecError(at(ptr, "FillType"),
                    "Script fills run code of another tool; give the data as a file (BinaryRaw) "
                    "or an expression of the index (Generator)");
  throw SpecError(at(ptr, "FillType"), "unknown FillType '" + fill + "'");
}

/// The element count of a Vector argument: Size times the width. Size reads ProblemSize (the problem dims) and
/// the parameters as their lists of values (Kernel Tuner's rule: max(filter_width) is the largest value).
json read_count(const json& a, const std::string& ptr, int width, const Problem& pr, const Params& params) {
  const json& sj = need(a, ptr, "Size");
  const std::string sptr = at(ptr, "Size");
  std::string text = expression_of(sj, sptr);
  std::string dims_text = with_dims(text, pr, sptr);
  // Parameters read here stand for their lists: put the lists in.
  try {
    const PyExpr e = PyExpr::parse(dims_text);
    for (const std::string& v : e.variables()) {
      auto l = params.lists.find(v);
      if (l == params.lists.end()) continue;
      dims_text = std::regex_replace(dims_text, std::regex("\\b" + v + "\\b"), l->second.repr());
    }
    const PyExpr final_expr = PyExpr::parse(dims_text);
    for (const std::string& v : final_expr.variables())
      if (std::find(pr.dims.begin(), pr.dims.end(), v) == pr.dims.end())
        throw SpecError(sptr, "\"" + text + "\" reads '" + v + "', which is neither a parameter nor ProblemSize");
  } catch (const PyExprError& e) {
    throw SpecError(sptr, e.what());
  }
  if (width == 1) return dims_text;
  return "(" + dims_text + ") * " + std::to_string(width);
}

json read_argument(const json& a, const std::string& ptr, Fields& fields, const Problem& pr, const Params& params,
                   const fs::path& t1_dir, bool* output) {
  fields.check(a, ptr,
               {"Name", "Type", "MemoryType", "AccessType", "FillType", "FillValue", "DataSource", "RandomSeed", "Size",
                "TypeSize", "Output", "MemType"});
  const std::string name =
      a.contains("Name") ? text_of(a["Name"], at(ptr, "Name")) : "arg" + ptr.substr(ptr.rfind('/') + 1);
  const std::string type = text_of(need(a, ptr, "Type"), at(ptr, "Type"));
  auto [dtype, width] = element_type(type, at(ptr, "Type"));
  const std::string memory = text_of(need(a, ptr, "MemoryType"), at(ptr, "MemoryType"));
  const std::string access = a.contains("AccessType") ? text_of(a["AccessType"], at(ptr, "AccessType")) : "ReadOnly";
  if (access != "ReadOnly" && access != "WriteOnly" && access != "ReadWrite")
    throw SpecError(at(ptr, "AccessType"), "expected ReadOnly, WriteOnly or ReadWrite, got '" + access + "'");
  *output =
      (a.contains("Output") && a["Output"].is_number() && a["Output"].get<double>() != 0) || access == "WriteOnly";
  json out = {{"name", name}, {"dtype", dtype}};
  if (memory == "Scalar") {
    out["kind"] = "scalar";
    if (*output) throw SpecError(ptr, "a Scalar argument cannot be an output");
    const std::string fill = a.contains("FillType") ? text_of(a["FillType"], at(ptr, "FillType")) : "Constant";
    if (fill == "BinaryRaw") {
      out["value"] = {{"file", data_path(text_of(need(a, ptr, "DataSource"), at(ptr, "DataSource")), t1_dir)},
                      {"format", "raw"}};
    } else if (fill == "Constant") {
      const json& v = need(a, ptr, "FillValue");
      if (!v.is_number()) throw SpecError(at(ptr, "FillValue"), "expected a number");
      out["value"] = dtype.rfind("float", 0) == 0 ? json(v.get<double>()) : json(std::to_string(v.get<std::int64_t>()));
    } else {
      throw SpecError(at(ptr, "FillType"), "a Scalar takes a Constant (FillValue) or a BinaryRaw file, not " + fill);
    }
    return out;
  }
  if (memory == "Local")
    throw SpecError(at(ptr, "MemoryType"),
                    "Local (OpenCL local memory as an argument) has no CUDA counterpart; use "
                    "shared memory in the kernel (SharedMemory gives its dynamic size)");
  if (memory != "Vector" && memory != "Symbol")
    throw SpecError(at(ptr, "MemoryType"), "expected Scalar, Vector, Symbol or Local, got '" + memory + "'");
  if (width == 0) {  // custom: bytes
    if (!a.contains("TypeSize") || !a["TypeSize"].is_number_integer() || a["TypeSize"].get<std::int64_t>() < 1)
      throw SpecError(at(ptr, "TypeSize"), "a custom Type needs TypeSize (bytes of one value)");
    width = static_cast<int>(a["TypeSize"].get<std::int64_t>());
  } else if (a.contains("TypeSize")) {
    // KTT's scripts give the bytes of every Type; the Type decides here, and a TypeSize that disagrees is said.
    const std::int64_t bytes = static_cast<std::int64_t>(dtype_size(dtype)) * width;
    if (!a["TypeSize"].is_number_integer() || a["TypeSize"].get<std::int64_t>() != bytes)
      fields.note(at(ptr, "TypeSize") + ": " + a["TypeSize"].dump() + " is not the size of Type " + type + " (" +
                  std::to_string(bytes) + " bytes); the Type's size is used");
  }
  out["kind"] = memory == "Symbol" ? "constant" : "buffer";
  out["count"] = read_count(a, ptr, width, pr, params);
  if (memory == "Symbol") {
    if (*output) throw SpecError(ptr, "a Symbol (__constant__ memory) cannot be an output");
    out["init"] = read_fill(a, ptr, t1_dir, dtype);
    return out;
  }
  // An output starts every verified run from its fill (role inout) where it is ReadWrite or given a fill: KTT and
  // Kernel Tuner upload every vector with its values before a run, outputs too, and a kernel may add to its output
  // (KTT's Coulomb sum does). An output without a fill starts from the poison, so that an element it never writes
  // fails.
  const bool inout = *output && (access == "ReadWrite" || a.contains("FillType") || a.contains("FillValue"));
  out["role"] = inout ? "inout" : *output ? "output" : "input";
  if (!*output || inout) out["init"] = read_fill(a, ptr, t1_dir, dtype);
  return out;
}

// ---- reference, budget, search -------------------------------------------------------------------------------

/// ReferenceArguments: expected values of outputs from files (BinaryRaw), from an expression of the element index
/// (Generator, KTT's) or one value (Constant, KTT's default FillType), and how they are compared.
void read_references(const json& refs, json& args, const std::vector<bool>& outputs, Fields& fields,
                     const fs::path& t1_dir) {
  const std::string base = "/KernelSpecification/ReferenceArguments";
  if (!refs.is_array()) throw SpecError(base, "expected an array");
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const std::string ptr = at(base, i);
    const json& r = refs[i];
    // KTT reads a reference like an argument and then takes Type, Size, TypeSize, MemoryType and AccessType from
    // its target: so does this tuner.
    fields.check(r, ptr,
                 {"Name", "TargetName", "FillType", "FillValue", "DataSource", "RandomSeed", "ValidationMethod",
                  "ValidationThreshold", "Type", "Size", "TypeSize", "MemoryType", "AccessType"});
    const std::string target = text_of(need(r, ptr, "TargetName"), at(ptr, "TargetName"));
    std::size_t k = 0;
    while (k < args.size() && args[k]["name"] != target) ++k;
    if (k == args.size()) throw SpecError(at(ptr, "TargetName"), "no argument is named '" + target + "'");
    if (!outputs[k]) throw SpecError(at(ptr, "TargetName"), "argument '" + target + "' is not an output");
    const std::string fill = r.contains("FillType") ? text_of(r["FillType"], at(ptr, "FillType")) : "Constant";
    if (fill == "BinaryRaw") {
      const std::string file = data_path(text_of(need(r, ptr, "DataSource"), at(ptr, "DataSource")), t1_dir);
      args[k]["expected"] = {{"file", file}};
      if (fs::path(file).extension() != ".npy") args[k]["expected"]["format"] = "raw";
    } else if (fill == "Generator") {
      args[k]["expected"] = {{"generator", generator_of(r, ptr)}};
    } else if (fill == "Constant") {
      const json& v = need(r, ptr, "FillValue");
      if (!v.is_number()) throw SpecError(at(ptr, "FillValue"), std::string("expected a number, got ") + v.type_name());
      args[k]["expected"] = {{"generator", v.dump()}};  // one value for every element: an expression without i
    } else {
      throw SpecError(at(ptr, "FillType"),
                      "expected values come from a file (BinaryRaw), an expression of the index (Generator) or one "
                      "value (Constant), not from " +
                          fill);
    }
    if (r.contains("ValidationMethod")) {
      const std::string m = text_of(r["ValidationMethod"], at(ptr, "ValidationMethod"));
      const double thr = r.contains("ValidationThreshold") && r["ValidationThreshold"].is_number()
                             ? r["ValidationThreshold"].get<double>()
                             : 0.0;
      if (m == "AbsoluteDifference" || m == "SideBySideComparison")
        args[k]["verification"] = {{"absolute", thr}};
      else if (m == "SideBySideRelativeComparison")
        args[k]["verification"] = {{"relative", thr}};
      else
        throw SpecError(at(ptr, "ValidationMethod"), "unknown ValidationMethod '" + m + "'");
    }
  }
}

/// Budget (an array of {Type, BudgetValue}, or one such object) as the spec's tuning defaults.
void read_budget(const json& b, json& tuning) {
  const json list = b.is_array() ? b : json::array({b});
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string ptr = b.is_array() ? at("/Budget", i) : "/Budget";
    const std::string type = text_of(need(list[i], ptr, "Type"), at(ptr, "Type"));
    const json& v = need(list[i], ptr, "BudgetValue");
    if (!v.is_number() || !(v.get<double>() > 0)) throw SpecError(at(ptr, "BudgetValue"), "expected a positive number");
    if (type == "ConfigurationCount")
      tuning["budget"] = static_cast<std::int64_t>(std::llround(v.get<double>()));
    else if (type == "TuningDuration")
      tuning["time_limit"] = v.get<double>();
    else if (type == "ConfigurationFraction")
      tuning["budget_fraction"] = std::min(1.0, v.get<double>());
    else
      throw SpecError(at(ptr, "Type"), "expected ConfigurationCount, TuningDuration or ConfigurationFraction");
  }
}

/// Search: Kernel Tuner's strategy names, and KTT's searchers (Deterministic, Random), where this tuner has the
/// strategy; any other name (KTT's MCMC and ProfileBased, a strategy of another tool) is noted and the default
/// strategy runs. Attributes are the other tool's options for its own strategies: each is noted, none is used.
void read_search(const json& s, json& tuning, std::vector<std::string>& notes) {
  std::string name = text_of(need(s, "/Search", "Name"), "/Search/Name");
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  static const std::map<std::string, std::string> kNames = {{"brute_force", "brute_force"},
                                                            {"bruteforce", "brute_force"},
                                                            {"exhaustive", "brute_force"},
                                                            {"random", "random_sample"},
                                                            {"random_sample", "random_sample"},
                                                            {"randomsearch", "random_sample"},
                                                            {"bayes_opt", "bayesian_optimization"},
                                                            {"bayesian_optimization", "bayesian_optimization"},
                                                            {"genetic_algorithm", "genetic_algorithm"},
                                                            {"pso", "particle_swarm"},
                                                            {"particle_swarm", "particle_swarm"},
                                                            {"diff_evo", "differential_evolution"},
                                                            {"differential_evolution", "differential_evolution"},
                                                            {"basinhopping", "basin_hopping"},
                                                            {"basin_hopping", "basin_hopping"},
                                                            {"simulated_annealing", "simulated_annealing"},
                                                            {"mls", "greedy_local_search"},
                                                            {"greedy_mls", "greedy_local_search"},
                                                            {"greedy_local_search", "greedy_local_search"},
                                                            {"greedy_ils", "iterated_local_search"},
                                                            {"iterated_local_search", "iterated_local_search"},
                                                            {"deterministic", "brute_force"},  // KTT's
                                                            {"default", ""}};
  auto it = kNames.find(lower);
  if (it == kNames.end())
    notes.push_back("/Search/Name: the search '" + name +
                    "' is not one this tuner has (it maps brute_force, random_sample, bayes_opt, genetic_algorithm, "
                    "pso, diff_evo, basinhopping, simulated_annealing, mls, greedy_ils and KTT's Deterministic and "
                    "Random; see `autotune strategies`): the default strategy runs");
  else if (!it->second.empty())
    tuning["strategy"] = it->second;
  if (!s.contains("Attributes")) return;
  const json& attrs = s["Attributes"];
  if (!attrs.is_array()) throw SpecError("/Search/Attributes", "expected an array of {Name, Value}");
  for (std::size_t i = 0; i < attrs.size(); ++i) {
    const std::string ptr = at("/Search/Attributes", i);
    const std::string option = text_of(need(attrs[i], ptr, "Name"), at(ptr, "Name"));
    const std::string value = expression_of(need(attrs[i], ptr, "Value"), at(ptr, "Value"));
    notes.push_back(ptr + ": the search option " + option + "=" + value +
                    " is not used (this tuner's strategies name their options differently: `autotune strategies`; "
                    "give them with --strategy-option)");
  }
}

/// The kernel file: as given, else next to the T1 file, else one folder up (Kernel Tuner's order).
std::string kernel_path(const std::string& given, const fs::path& t1_dir) {
  std::error_code ec;
  if (fs::exists(t1_dir / given, ec)) return given;
  if (fs::exists(t1_dir.parent_path() / given, ec)) return (fs::path("..") / given).string();
  if (fs::exists(given, ec)) return fs::absolute(given, ec).string();
  throw SpecError("/KernelSpecification/KernelFile", "kernel file '" + given + "' not found (looked as given, in " +
                                                         t1_dir.string() + " and one folder up)");
}

/// The spec's default configuration, which is also the reference where outputs have no expected values, must be one
/// the Conditions allow: the parameters' Default (which neither Kernel Tuner nor KTT reads), else their first values,
/// where they satisfy the Conditions, else the first configuration that does, in the order `autotune space` lists them
/// (the parameters in file order, each over its Values in order). The defaults move there, with a note. An expression
/// that fails to evaluate leaves the defaults as they are (tune reports it).
void make_default_valid(json& spec, const fs::path& dir, Fields& fields) {
  if (spec["constraints"].empty()) return;
  try {
    const TuningSpec ts = TuningSpec::from_json_text(spec.dump(), dir.string(), false);
    const ProblemKey& p = ts.problem_sizes.front();
    const Workload& w = ts.workloads.front();
    const Config given = ts.default_config();
    std::string violated;
    for (const Expr& e : ts.constraints)
      if (violated.empty() && eval_expr(e, given, p, DeviceInfo{}, w) == 0) violated = e.text();
    if (violated.empty()) return;
    const ParameterSpace space = ts.space(p, DeviceInfo{}, w);
    if (space.empty()) return;  // tune says that no configuration is valid
    const Config first = space.config(0);
    json& params = spec["parameters"];
    for (std::size_t k = 0; k < ts.params.size(); ++k) {
      const Param& param = ts.params[k];
      params[k]["default"] = params[k]["values"][static_cast<std::size_t>(param.index_of(first.at(param.name)))];
    }
    fields.note("/ConfigurationSpace: the default configuration (" + given.str(&ts.params) + ") violates \"" +
                violated + "\"; the first valid one (" + first.str(&ts.params) +
                ") is the default instead (and so the reference, where one runs)");
  } catch (const ExprError&) {  // PyExprError too
  }
}

}  // namespace

bool is_t1(const json& doc) {
  return doc.is_object() && doc.contains("ConfigurationSpace") && doc.contains("KernelSpecification");
}

T1Conversion t1_to_spec(const json& t1, const std::string& path) {
  T1Conversion out;
  Fields fields(out.notes);
  fields.check(t1, "", {"ConfigurationSpace", "KernelSpecification", "Budget", "Search", "General"});
  if (t1.contains("General"))
    fields.check(t1["General"], "/General", {"BenchmarkName"},
                 {"LoggingLevel", "TimeUnit", "OutputFile", "OutputFormat"});
  const fs::path dir = fs::path(path).parent_path().empty() ? fs::path(".") : fs::path(path).parent_path();
  const json& ks = need(t1, "", "KernelSpecification");
  fields.check(ks, "/KernelSpecification",
               {"Language", "KernelName", "KernelFile", "CompilerOptions", "GlobalSize", "LocalSize", "GlobalSizeType",
                "GridDivX", "GridDivY", "GridDivZ", "ProblemSize", "SharedMemory", "Arguments", "ReferenceArguments"},
               {"Device", "Profiling", "BenchmarkName", "SimulationInput", "Stream", "KernelTypeNames"});
  const std::string language = text_of(need(ks, "/KernelSpecification", "Language"), "/KernelSpecification/Language");
  if (language != "CUDA")
    throw SpecError("/KernelSpecification/Language", language + " kernels are not tuned here (CUDA only)");
  const std::string kernel = text_of(need(ks, "/KernelSpecification", "KernelName"), "/KernelSpecification/KernelName");
  const Problem pr = read_problem(ks);

  // Parameters and conditions.
  const json& cs = need(t1, "", "ConfigurationSpace");
  fields.check(cs, "/ConfigurationSpace", {"TuningParameters", "Conditions"});
  const json& tps = need(cs, "/ConfigurationSpace", "TuningParameters");
  if (!tps.is_array() || tps.empty())
    throw SpecError("/ConfigurationSpace/TuningParameters", "expected a non-empty array");
  Params params;
  for (std::size_t i = 0; i < tps.size(); ++i)
    params.native.push_back(
        read_parameter(tps[i], at("/ConfigurationSpace/TuningParameters", i), fields, params, out.notes));
  json constraints = json::array();
  if (cs.contains("Conditions")) {
    const json& conds = cs["Conditions"];
    if (!conds.is_array()) throw SpecError("/ConfigurationSpace/Conditions", "expected an array");
    for (std::size_t i = 0; i < conds.size(); ++i) {
      const std::string ptr = at("/ConfigurationSpace/Conditions", i);
      fields.check(conds[i], ptr, {"Expression", "Parameters"});
      const std::string text =
          with_dims(text_of(need(conds[i], ptr, "Expression"), at(ptr, "Expression")), pr, at(ptr, "Expression"));
      try {
        const PyExpr condition = PyExpr::parse(text);
        for (const std::string& v : condition.variables())
          if (!params.lists.count(v) && std::find(pr.dims.begin(), pr.dims.end(), v) == pr.dims.end())
            throw SpecError(at(ptr, "Expression"), "\"" + text + "\" reads '" + v + "', which is not a parameter");
      } catch (const PyExprError& e) {
        throw SpecError(at(ptr, "Expression"), e.what());
      }
      constraints.push_back(text);
    }
  }

  // Arguments.
  json args = json::array();
  std::vector<bool> outputs;
  const json& as = need(ks, "/KernelSpecification", "Arguments");
  if (!as.is_array() || as.empty()) throw SpecError("/KernelSpecification/Arguments", "expected a non-empty array");
  for (std::size_t i = 0; i < as.size(); ++i) {
    bool output = false;
    const std::string ptr = at("/KernelSpecification/Arguments", i);
    json arg = read_argument(as[i], ptr, fields, pr, params, dir, &output);
    // Kernel Tuner's "MemType": "Constant": the argument is passed to the kernel and also fills the __constant__
    // symbol of its name (its cmem_args), with the same values: a seeded fill.
    const bool cmem = as[i].contains("MemType") && as[i]["MemType"] == "Constant";
    if (cmem && (arg["kind"] != "buffer" || output))
      throw SpecError(at(ptr, "MemType"), "\"MemType\": \"Constant\" goes with an input Vector");
    if (cmem && arg["init"].contains("random") && !arg["init"]["random"].contains("seed"))
      arg["init"]["random"]["seed"] = 1;
    args.push_back(arg);
    outputs.push_back(output);
    if (cmem) {
      json symbol = arg;
      symbol.erase("role");
      symbol["kind"] = "constant";
      symbol["name"] = arg["name"].get<std::string>() + "_symbol";
      symbol["symbol"] = arg["name"];
      args.push_back(symbol);
      outputs.push_back(false);
    }
  }
  if (std::find(outputs.begin(), outputs.end(), true) == outputs.end())
    throw SpecError("/KernelSpecification/Arguments",
                    "no argument is an output (\"Output\": 1 or AccessType WriteOnly): "
                    "there is nothing to verify");
  if (ks.contains("ReferenceArguments")) read_references(ks["ReferenceArguments"], args, outputs, fields, dir);

  json& s = out.spec;
  const std::string name = t1.contains("General") && t1["General"].is_object() &&
                                   t1["General"].contains("BenchmarkName") && t1["General"]["BenchmarkName"].is_string()
                               ? t1["General"]["BenchmarkName"].get<std::string>()
                               : kernel;
  s["$comment"] =
      "converted from the T1 file " + fs::path(path).filename().string() + " (docs/spec-format.md \"T1 files\")";
  s["name"] = name;
  s["description"] = "T1 file " + path;
  s["family"] = "user";
  s["expressions"] = "python";
  s["source"] =
      kernel_path(text_of(need(ks, "/KernelSpecification", "KernelFile"), "/KernelSpecification/KernelFile"), dir);
  s["kernels"] = {kernel};
  s["parameters"] = params.native;
  s["constraints"] = constraints;
  s["launch"] = json::array({read_launch(ks, kernel, pr, params)});
  json size = json::object();
  for (std::size_t i = 0; i < pr.dims.size(); ++i) size[pr.dims[i]] = pr.sizes[i];
  s["problem"] = {{"dims", pr.dims}, {"sizes", json::array({size})}};
  // The workload names the first buffer's element type (sizeof_t); user kernels have one workload.
  std::string dtype = "float32";
  for (const json& a : args)
    if (a["kind"] == "buffer") {
      dtype = a["dtype"];
      break;
    }
  s["workloads"] = {dtype};
  s["arguments"] = args;
  // Without expected values for every output, the default configuration is the reference; floats then agree to
  // within the rounding of another summation order.
  s["verification"] = {{"relative", 1e-4}, {"absolute", 1e-6}};
  if (ks.contains("CompilerOptions")) {
    const json& o = ks["CompilerOptions"];
    if (!o.is_array()) throw SpecError("/KernelSpecification/CompilerOptions", "expected an array of strings");
    json opts = json::array();
    for (std::size_t i = 0; i < o.size(); ++i)
      opts.push_back(text_of(o[i], at("/KernelSpecification/CompilerOptions", i)));
    s["compile_options"] = opts;
  }
  json tuning = json::object();
  if (t1.contains("Budget")) read_budget(t1["Budget"], tuning);
  if (t1.contains("Search") && !t1["Search"].is_null()) read_search(t1["Search"], tuning, out.notes);
  if (!tuning.empty()) s["tuning"] = tuning;
  make_default_valid(s, dir, fields);
  return out;
}

std::optional<std::string> t1_spec_text(const std::string& path, std::vector<std::string>* notes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(ss.str(), nullptr, false);
  if (doc.is_discarded() || !is_t1(doc)) return std::nullopt;
  try {
    T1Conversion c = t1_to_spec(doc, path);
    if (notes) *notes = std::move(c.notes);
    return c.spec.dump(2);
  } catch (const SpecError& e) {
    throw SpecError::in_context(path + " (a T1 file)", e);
  }
}

}  // namespace autotune::specs
