// The arguments of user kernels (spec "arguments"): buffers, scalars and __constant__ symbols, their inputs
// (synthetic fills, generators, files) and expected values; docs/spec-format.md.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/core/data_file.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"
#include "tuner/core/memory_arrays.hpp"
#include "tuner/core/spec_parse.hpp"

namespace autotune {

namespace spec_parse {

namespace {

/// Smallest and largest value of an integer dtype that a spec may write (uint64: up to INT64_MAX).
std::pair<std::int64_t, std::int64_t> integer_range(const std::string& dtype) {
  if (dtype == "int8") return {INT8_MIN, INT8_MAX};
  if (dtype == "uint8") return {0, UINT8_MAX};
  if (dtype == "int16") return {INT16_MIN, INT16_MAX};
  if (dtype == "uint16") return {0, UINT16_MAX};
  if (dtype == "int32") return {INT32_MIN, INT32_MAX};
  if (dtype == "uint32") return {0, UINT32_MAX};
  if (dtype == "uint64") return {0, INT64_MAX};
  return {INT64_MIN, INT64_MAX};
}

/// A number of a fill for dtype: an integer within the type's range, or a number within a float's range.
FillValue get_fill_value(const json& j, const std::string& ptr, const std::string& dtype) {
  FillValue v;
  if (is_float_dtype(dtype)) {
    if (!j.is_number()) throw SpecError(ptr, std::string("expected a number, got ") + type_name(j));
    v.f = j.get<double>();
    const double largest = dtype == "float32"   ? 3.4028234663852886e38
                           : dtype == "float16" ? 65504.0
                                                : 1.7976931348623157e308;
    if (std::fabs(v.f) > largest) throw SpecError(ptr, j.dump() + " is out of the range of " + dtype);
    return v;
  }
  v.i = get_int(j, ptr);
  const auto [lo, hi] = integer_range(dtype);
  if (v.i < lo || v.i > hi)
    throw SpecError(ptr, std::to_string(v.i) + " is out of the range of " + dtype + " (" + std::to_string(lo) + " to " +
                             std::to_string(hi) + ")");
  v.f = static_cast<double>(v.i);
  return v;
}

/// {"memory": "x"}: the caller's in-memory array x (memory_arrays.hpp), read like a raw file of the argument's dtype
/// through the path "memory:x".
DataSource parse_memory_source(const json& j, const std::string& ptr) {
  check_keys(j, ptr, {"memory"});
  DataSource d;
  d.kind = DataSource::Kind::file;
  d.pointer = join_ptr(ptr, "memory");
  const std::string name = get_string(j["memory"], d.pointer);
  if (name.empty()) throw SpecError(d.pointer, "expected the name of an in-memory array");
  d.file = d.path = memory_path(name);
  d.format = DataFormat::raw;
  return d;
}

/// {"file": "x.npy"} or {"file": "x.bin", "format": "raw"}: the path resolved against base_dir, the format from
/// "format" or the extension; or {"memory": "x"} (parse_memory_source).
DataSource parse_file_source(const json& j, const std::string& ptr, const std::string& base_dir) {
  if (j.contains("memory")) return parse_memory_source(j, ptr);
  check_keys(j, ptr, {"file", "format"});
  DataSource d;
  d.kind = DataSource::Kind::file;
  d.pointer = join_ptr(ptr, "file");
  d.file = get_string(require(j, ptr, "file"), d.pointer);
  if (d.file.empty()) throw SpecError(d.pointer, "expected a file name");
  d.path = resolve(base_dir, d.file);
  if (j.contains("format")) {
    const std::string f = get_string(j["format"], join_ptr(ptr, "format"));
    const std::optional<DataFormat> format = parse_data_format(f);
    if (!format) throw SpecError(join_ptr(ptr, "format"), "format must be npy or raw, not '" + f + "'");
    d.format = *format;
  } else {
    const std::optional<DataFormat> format = data_format_from_path(d.file);
    if (!format)
      throw SpecError(d.pointer, "cannot tell the format of '" + d.file +
                                     "' from its name (.npy: npy; .bin, .raw: "
                                     "raw): add \"format\": \"npy\" or \"raw\"");
    d.format = *format;
  }
  return d;
}

/// {"random": {"seed": 7, "min": -1.0, "max": 1.0}}'s inner object (every key optional; min and max together).
void parse_random_options(const json& j, const std::string& ptr, const std::string& dtype, DataSource& d) {
  if (!j.is_object()) throw SpecError(ptr, "expected an object {\"seed\", \"min\", \"max\"} (each optional)");
  check_keys(j, ptr, {"seed", "min", "max"});
  if (j.contains("seed")) {
    const std::int64_t seed = get_int(j["seed"], join_ptr(ptr, "seed"));
    if (seed < 0) throw SpecError(join_ptr(ptr, "seed"), "a seed is a non-negative integer");
    d.seed = static_cast<std::uint64_t>(seed);
  }
  if (j.contains("min") != j.contains("max"))
    throw SpecError(join_ptr(ptr, j.contains("min") ? "max" : "min"), "a range needs both \"min\" and \"max\"");
  if (!j.contains("min")) return;
  d.min = get_fill_value(j["min"], join_ptr(ptr, "min"), dtype);
  d.max = get_fill_value(j["max"], join_ptr(ptr, "max"), dtype);
  const bool floating = is_float_dtype(dtype);
  std::int64_t span = 0;
  if (!floating && __builtin_sub_overflow(d.max->i, d.min->i, &span))
    throw SpecError(join_ptr(ptr, "max"), "the range from min to max is wider than 2^63");
  if (floating ? !(d.min->f < d.max->f) : d.min->i > d.max->i)
    throw SpecError(join_ptr(ptr, "max"), floating ? "max must be greater than min (floats are drawn from [min, max))"
                                                   : "max must be at least min (integers are drawn from [min, max])");
}

/// "init": random | zero | ones | iota, or {"file": ...}, {"constant": x}, {"random": {...}}.
DataSource parse_init(const json& j, const std::string& ptr, const std::string& dtype, const std::string& base_dir) {
  const char* const usage =
      "init must be random, zero, ones or iota, or an object: {\"file\": \"x.npy\"}, "
      "{\"constant\": 3.5}, {\"random\": {\"seed\": 7, \"min\": -1, \"max\": 1}} or {\"generator\": \"i % 7\"}";
  DataSource d;
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    if (s == "random")
      d.kind = DataSource::Kind::random;
    else if (s == "zero")
      d.kind = DataSource::Kind::zero;
    else if (s == "ones")
      d.kind = DataSource::Kind::ones;
    else if (s == "iota")
      d.kind = DataSource::Kind::iota;
    else
      throw SpecError(ptr, usage);
    return d;
  }
  if (!j.is_object() || j.empty()) throw SpecError(ptr, usage);
  if (j.contains("file") || j.contains("memory")) return parse_file_source(j, ptr, base_dir);
  check_keys(j, ptr, {"constant", "random", "file", "format", "generator"});
  if (j.size() != 1) throw SpecError(ptr, "give one of \"file\", \"constant\", \"random\" or \"generator\"");
  if (j.contains("format")) throw SpecError(join_ptr(ptr, "format"), "\"format\" goes with \"file\"");
  if (j.contains("generator")) {
    d.kind = DataSource::Kind::generator;
    d.generator = get_string(j["generator"], join_ptr(ptr, "generator"));
    d.pointer = join_ptr(ptr, "generator");
    try {
      PyExpr::parse(d.generator);  // names are checked when the values are made: i and the problem dims
    } catch (const PyExprError& e) {
      throw SpecError(join_ptr(ptr, "generator"), e.what());
    }
  } else if (j.contains("constant")) {
    d.kind = DataSource::Kind::constant;
    d.constant = get_fill_value(j["constant"], join_ptr(ptr, "constant"), dtype);
  } else {
    d.kind = DataSource::Kind::random;
    parse_random_options(j["random"], join_ptr(ptr, "random"), dtype, d);
  }
  return d;
}

/// The count of a when it is a constant expression (no names), else nullopt (known once the problem is).
std::optional<std::uint64_t> constant_count(const ArgSpec& a, const std::string& ptr) {
  if (!a.count.variables().empty()) return std::nullopt;
  std::int64_t n = 0;
  try {
    n = a.count.eval([](const std::string&) { return std::optional<std::int64_t>(); });
  } catch (const ExprError& e) {
    throw SpecError(join_ptr(ptr, "count"), e.what());
  }
  if (n < 1) throw SpecError(join_ptr(ptr, "count"), "count must be at least 1, not " + std::to_string(n));
  return static_cast<std::uint64_t>(n);
}

/// The fields of a buffer or constant argument (kind is "buffer" or "constant").
void parse_memory_argument(const json& aj, const std::string& ptr, const std::string& kind, ArgSpec& a,
                           const std::string& base_dir, bool load_sources) {
  a.kind = kind == "buffer" ? ArgSpec::Kind::buffer : ArgSpec::Kind::constant;
  a.count = get_expr(require(aj, ptr, "count"), join_ptr(ptr, "count"));
  std::string role = aj.contains("role") ? get_string(aj["role"], join_ptr(ptr, "role")) : "input";
  if (role == "input")
    a.role = ArgSpec::Role::input;
  else if (role == "output" && kind == "buffer")
    a.role = ArgSpec::Role::output;
  else if (role == "inout" && kind == "buffer")
    a.role = ArgSpec::Role::inout;
  else
    throw SpecError(join_ptr(ptr, "role"),
                    kind == "buffer" ? "role must be input, output or inout" : "a constant argument is an input");
  a.symbol = aj.contains("symbol") ? get_string(aj["symbol"], join_ptr(ptr, "symbol")) : a.name;
  if (aj.contains("verification")) {
    if (!a.is_output())
      throw SpecError(join_ptr(ptr, "verification"), "only an output buffer has a verification policy");
    a.verification = parse_policy(aj["verification"], join_ptr(ptr, "verification"));
    if (a.verification.callback)
      throw SpecError(join_ptr(ptr, "verification/callback"),
                      "a callback decides for the whole kernel: give it in the spec's top-level \"verification\"");
  }
  if (aj.contains("init")) a.init = parse_init(aj["init"], join_ptr(ptr, "init"), a.dtype, base_dir);
  if (a.dtype == "float16" && a.is_input() && a.init.kind != DataSource::Kind::file &&
      a.init.kind != DataSource::Kind::zero)
    throw SpecError(join_ptr(ptr, "init"),
                    "a float16 input takes its values from a file ({\"file\": ...}) or "
                    "\"zero\" (the tuner makes no half-precision values)");
  if (aj.contains("expected")) {
    const std::string eptr = join_ptr(ptr, "expected");
    if (!a.is_output()) throw SpecError(eptr, "only an output buffer has expected values");
    const json& e = aj["expected"];
    if (!e.is_object() || !(e.contains("file") || e.contains("memory") || e.contains("generator")))
      throw SpecError(eptr,
                      "expected an object {\"file\": \"y.npy\"} (with \"format\": \"raw\" for raw data), "
                      "{\"memory\": \"y\"} or {\"generator\": \"2 * i + 3\"}");
    if (e.contains("generator")) {
      check_keys(e, eptr, {"generator"});
      if (a.dtype == "float16")
        throw SpecError(eptr,
                        "the tuner makes no half-precision values: give a float16 output's expected values "
                        "in a file");
      a.expected = parse_init(e, eptr, a.dtype, base_dir);
    } else {
      a.expected = parse_file_source(e, eptr, base_dir);
    }
  }
  if (a.role == ArgSpec::Role::output && a.init.kind == DataSource::Kind::file)
    throw SpecError(join_ptr(ptr, "init"),
                    "an output is poisoned before each verified run, its init is not used: "
                    "give its expected values as \"expected\": {\"file\": ...}");
  if (!load_sources) return;
  // Files are checked now: they exist, hold the argument's dtype and, when the count is a constant, that many
  // elements; a count over the problem is checked once the problem is known (KernelAdapter::validate_inputs).
  if (a.init.kind == DataSource::Kind::file) check_data_file(a, a.init, constant_count(a, ptr));
  if (a.expected && a.expected->kind == DataSource::Kind::file) check_data_file(a, *a.expected, constant_count(a, ptr));
}

/// The single element of a scalar's value file, as the text of a literal.
std::string read_scalar_file(const ArgSpec& a, const DataSource& d) {
  std::vector<unsigned char> b;
  read_data_file(a, d, 1, b);
  if (auto text = scalar_literal(a.dtype, b.data())) return *text;
  std::uint64_t u = 0;
  std::memcpy(&u, b.data(), sizeof u);
  throw SpecError(d.pointer, data_reader(a, d) + ": " + std::to_string(u) + " in file '" + d.path +
                                 "' is out of the range of a scalar (largest: " + std::to_string(INT64_MAX) + ")");
}

/// A scalar's "value": an expression string, a number, or {"file": ...} (read now when load_sources).
void parse_scalar_value(const json& aj, const std::string& ptr, ArgSpec& a, const std::string& base_dir,
                        bool load_sources) {
  a.kind = ArgSpec::Kind::scalar;
  const json& v = require(aj, ptr, "value");
  const std::string vptr = join_ptr(ptr, "value");
  if (v.is_object()) {
    if (!v.contains("file") && !v.contains("memory"))
      throw SpecError(vptr, "expected an expression string, a number, {\"file\": \"n.npy\"} or {\"memory\": \"n\"}");
    static const std::set<std::string> kScalarFileTypes = {"int8",   "uint8", "int16",  "uint16",  "int32",
                                                           "uint32", "int64", "uint64", "float32", "float64"};
    if (!kScalarFileTypes.count(a.dtype))
      throw SpecError(join_ptr(ptr, "dtype"),
                      "a scalar from a file is an integer type, float32 or float64, not " + a.dtype);
    a.value_file = parse_file_source(v, vptr, base_dir);
    if (load_sources) a.value = read_scalar_file(a, *a.value_file);
    return;
  }
  if (v.is_string())
    a.value = v.get<std::string>();
  else if (v.is_number())
    a.value = v.dump();
  else
    throw SpecError(vptr, "expected an expression string, a number or {\"file\": \"n.npy\"}");
  if (!is_float_dtype(a.dtype)) get_expr(json(a.value), vptr);  // validate now
}

ArgSpec parse_argument(const json& aj, const std::string& ptr, const std::string& base_dir, bool load_sources) {
  if (!aj.is_object()) throw SpecError(ptr, "expected an object");
  check_keys(aj, ptr,
             {"name", "kind", "dtype", "role", "count", "init", "value", "symbol", "verification", "expected"});
  ArgSpec a;
  a.name = get_string(require(aj, ptr, "name"), join_ptr(ptr, "name"));
  std::string kind = get_string(require(aj, ptr, "kind"), join_ptr(ptr, "kind"));
  a.dtype = get_string(require(aj, ptr, "dtype"), join_ptr(ptr, "dtype"));
  try {
    dtype_size(a.dtype);
  } catch (const UsageError& e) {
    throw SpecError(join_ptr(ptr, "dtype"), e.what());
  }
  if (aj.contains("symbol") && kind != "constant")
    throw SpecError(join_ptr(ptr, "symbol"), "only a constant argument names a symbol");
  if (aj.contains("expected") && kind != "buffer")
    throw SpecError(join_ptr(ptr, "expected"), "only an output buffer has expected values");
  if (kind == "buffer" || kind == "constant") {
    parse_memory_argument(aj, ptr, kind, a, base_dir, load_sources);
  } else if (kind == "scalar") {
    parse_scalar_value(aj, ptr, a, base_dir, load_sources);
  } else {
    throw SpecError(join_ptr(ptr, "kind"), "kind must be buffer, scalar or constant");
  }
  return a;
}

}  // namespace

void parse_arguments(const json& j, TuningSpec& s, const std::string& base_dir, bool load_sources) {
  if (!j.contains("arguments")) return;
  const json& as = j["arguments"];
  if (!as.is_array()) throw SpecError("/arguments", "expected an array");
  for (std::size_t i = 0; i < as.size(); ++i)
    s.arguments.push_back(parse_argument(as[i], join_ptr("/arguments", i), base_dir, load_sources));
}

}  // namespace spec_parse

std::string data_reader(const ArgSpec& a, const DataSource& d) {
  return &d == (a.expected ? &*a.expected : nullptr) ? "output '" + a.name + "' (expected values)"
                                                     : "argument '" + a.name + "'";
}

namespace {

ArrayFileRequest file_request(const ArgSpec& a, const DataSource& d) {
  ArrayFileRequest r;
  r.path = d.path;
  r.format = d.format;
  r.dtype = a.dtype;
  r.what = data_reader(a, d);
  return r;
}

}  // namespace

void check_data_file(const ArgSpec& a, const DataSource& d, std::optional<std::uint64_t> count) {
  const ArrayFileRequest r = file_request(a, d);
  try {
    const ArrayFileInfo info = probe_array_file(r);
    if (count) check_array_count(r, info, *count);
  } catch (const UsageError& e) {
    throw SpecError(d.pointer, e.what());
  }
}

void read_data_file(const ArgSpec& a, const DataSource& d, std::uint64_t count, std::vector<unsigned char>& out) {
  try {
    read_array_file(file_request(a, d), count, out);
  } catch (const UsageError& e) {
    throw SpecError(d.pointer, e.what());
  }
}

std::optional<std::string> scalar_literal(const std::string& dtype, const void* bytes) {
  auto as = [bytes](auto v) {
    std::memcpy(&v, bytes, sizeof v);
    return v;
  };
  if (dtype == "float32" || dtype == "float64") {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", dtype == "float32" ? static_cast<double>(as(float{})) : as(double{}));
    return std::string(buf);
  }
  if (dtype == "int8") return std::to_string(as(std::int8_t{}));
  if (dtype == "uint8") return std::to_string(as(std::uint8_t{}));
  if (dtype == "int16") return std::to_string(as(std::int16_t{}));
  if (dtype == "uint16") return std::to_string(as(std::uint16_t{}));
  if (dtype == "int32") return std::to_string(as(std::int32_t{}));
  if (dtype == "uint32") return std::to_string(as(std::uint32_t{}));
  if (dtype == "int64") return std::to_string(as(std::int64_t{}));
  const std::uint64_t u = as(std::uint64_t{});
  if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
  return std::to_string(u);
}

std::string data_tag(const TuningSpec& spec) {
  if (spec.captured) return spec.captured->data;
  std::uint64_t h = fnv1a64("autotune-data-v1");
  bool any = false;
  auto add = [&](const ArgSpec& a, const DataSource& d) {
    any = true;
    h = fnv1a64(a.name, h);
    h = fnv1a64(std::string(1, '\0'), h);
    if (is_memory_path(d.path)) {
      const std::shared_ptr<const MemoryArray> m = find_memory_array(d.path, data_reader(a, d));
      h = fnv1a64(hex64(m->digest), h);  // hashed once, when it was registered
      return;
    }
    std::ifstream in(d.path, std::ios::binary);
    if (!in) throw SpecError(d.pointer, data_reader(a, d) + ": cannot read file '" + d.file + "'");
    std::vector<char> buf(1 << 20);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      h = fnv1a64(std::string_view(buf.data(), static_cast<std::size_t>(in.gcount())), h);
    }
  };
  for (const ArgSpec& a : spec.arguments) {
    if (a.is_input() && a.init.kind == DataSource::Kind::file) add(a, a.init);
    if (a.value_file) add(a, *a.value_file);
    if (a.expected && a.expected->kind == DataSource::Kind::file) add(a, *a.expected);
  }
  return any ? hex64(h).substr(0, 12) : "";
}

void replace_input(TuningSpec& spec, const std::string& name, const std::string& file) {
  std::string inputs;
  for (ArgSpec& a : spec.arguments) {
    if (!a.is_input()) continue;
    inputs += (inputs.empty() ? "" : ", ") + a.name;
    if (a.name != name) continue;
    DataSource d;
    d.kind = DataSource::Kind::file;
    d.file = d.path = file;
    d.format = data_format_from_path(file).value_or(DataFormat::raw);
    d.pointer = "--input " + name;
    a.init = d;
    return;
  }
  throw UsageError("--input " + name + "=" + file + ": kernel " + spec.name + " has no input '" + name + "'" +
                   (inputs.empty() ? "" : " (inputs: " + inputs + ")"));
}

}  // namespace autotune
