// Captures of launches (capture.hpp): the settings from the environment, and the capture's files.
#include "tuner/runtime/capture.hpp"

#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tuner/core/data_file.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"
#include "tuner/core/text.hpp"

namespace autotune::runtime_detail {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string(fallback);
}

std::uint64_t parse_max_bytes(const std::string& text) {
  const char* const usage =
      "AUTOTUNE_CAPTURE_MAX_BYTES must be a positive number of bytes, optionally with K, M or G "
      "(powers of 1024), e.g. 512M (got '";
  std::string t = trim(text);
  std::uint64_t unit = 1;
  if (!t.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(t.back())));
    if (last == 'K' || last == 'M' || last == 'G') {
      unit = last == 'K' ? 1ull << 10 : last == 'M' ? 1ull << 20 : 1ull << 30;
      t.pop_back();
    }
  }
  if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos) throw UsageError(usage + text + "')");
  errno = 0;
  const unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
  if (errno != 0 || v == 0 || v > UINT64_MAX / unit) throw UsageError(usage + text + "')");
  return v * unit;
}

/// Writes `write(tmp)` to a temporary file beside `path` and renames it into place.
template <class Write>
void write_atomically(const fs::path& path, Write write) {
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  try {
    write(tmp.string());
    fs::rename(tmp, path);
  } catch (const fs::filesystem_error& e) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw EnvironmentError("capture: cannot write " + path.string() + ": " + e.code().message());
  } catch (...) {
    std::error_code ec;
    fs::remove(tmp, ec);
    throw;
  }
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw EnvironmentError("capture: cannot write " + path + ": " + std::strerror(errno));
}

/// The data file of `bytes` (elements of dtype), named by content; written unless it exists. Returns its path
/// relative to the capture directory.
std::string store_data(const fs::path& dir, const std::string& dtype, const std::vector<unsigned char>& bytes) {
  const auto size = static_cast<std::uint64_t>(dtype_size(dtype));
  if (size == 0 || bytes.size() % size != 0)
    throw UsageError("capture: " + std::to_string(bytes.size()) + " bytes are no whole number of " + dtype);
  const std::uint64_t elements = bytes.size() / size;
  bool npy = true;
  try {
    (void)npy_descr(dtype);
  } catch (const UsageError&) {
    npy = false;  // vector dtypes: raw
  }
  const std::string hash = hex64(bulk_hash64(bytes.data(), bytes.size()));
  std::string rel = "data/" + dtype + "-" + std::to_string(elements) + "-" + hash + (npy ? ".npy" : ".bin");
  const fs::path path = dir / rel;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return rel;  // the same content, stored by an earlier capture
  fs::create_directories(path.parent_path());
  write_atomically(path, [&](const std::string& tmp) {
    if (npy)
      write_npy(tmp, dtype, {elements}, bytes);
    else
      write_raw(tmp, bytes);
  });
  return rel;
}

/// A source text under sources/<hash>/<name>; returns its path relative to the capture directory.
std::string store_source(const fs::path& dir, const std::string& name, const std::string& text) {
  const std::string file = fs::path(name).filename().string();
  std::string rel = "sources/" + content_hash(text) + "/" + (file.empty() ? "kernel.cu" : file);
  const fs::path path = dir / rel;
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return rel;
  fs::create_directories(path.parent_path());
  write_atomically(path, [&](const std::string& tmp) { write_text(tmp, text); });
  return rel;
}

json file_source(const std::string& rel) {
  json d = {{"file", rel}};
  if (rel.size() > 4 && rel.compare(rel.size() - 4, 4, ".bin") == 0) d["format"] = "raw";
  return d;
}

std::string utc_now() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

CaptureSettings CaptureSettings::parse(const std::string& patterns, const std::string& dir,
                                       const std::string& max_bytes) {
  CaptureSettings s;
  std::size_t start = 0;
  while (start <= patterns.size()) {
    const std::size_t comma = std::min(patterns.find(',', start), patterns.size());
    const std::string t = trim(patterns.substr(start, comma - start));
    if (!t.empty()) s.patterns.push_back(t);
    start = comma + 1;
  }
  if (!trim(dir).empty()) s.dir = dir;
  if (!trim(max_bytes).empty()) s.max_bytes = parse_max_bytes(max_bytes);
  return s;
}

std::optional<CaptureSettings> CaptureSettings::from_env() {
  const std::string patterns = env_or("AUTOTUNE_CAPTURE", "");
  if (trim(patterns).empty()) return std::nullopt;
  return parse(patterns, env_or("AUTOTUNE_CAPTURE_DIR", ""), env_or("AUTOTUNE_CAPTURE_MAX_BYTES", ""));
}

bool CaptureSettings::matches(const std::string& kernel) const {
  for (const std::string& p : patterns)
    if (::fnmatch(p.c_str(), kernel.c_str(), 0) == 0) return true;
  return false;
}

std::string capture_file_name(const std::string& kernel, const ProblemKey& problem) {
  ProblemKey dims_only = problem;
  dims_only.data.clear();
  std::string name = kernel + "_" + dims_only.key();
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '=' && c != '-') c = '_';
  return name + ".tune.json";
}

std::string capture_path(const CaptureSettings& s, const std::string& kernel, const ProblemKey& problem) {
  return (fs::path(s.dir) / capture_file_name(kernel, problem)).string();
}

std::uint64_t capture_bytes(const CaptureRecord& r) {
  std::uint64_t total = 0;
  for (const CapturedArgument& a : r.args) total += a.before.size() + a.after.size();
  return total;
}

std::string scalar_text(const std::string& dtype, std::uint64_t bits) {
  if (auto text = scalar_literal(dtype, &bits)) return *text;  // little-endian: the low bytes are the value
  throw UsageError("capture: the " + dtype + " scalar " + std::to_string(bits) +
                   " is out of the range a spec's scalar value can hold");
}

std::string write_capture(const CaptureSettings& s, const TuningSpec& spec, const CaptureRecord& r) {
  if (spec.spec_text.empty())
    throw UsageError("capture of " + spec.name +
                     ": the spec has no JSON text (a TuningSpec made in code); load it "
                     "from a file or with TuningSpec::from_json_text to capture its launches");
  if (r.args.size() != spec.arguments.size())
    throw UsageError("capture of " + spec.name + ": " + std::to_string(r.args.size()) +
                     " arguments captured, the "
                     "spec has " +
                     std::to_string(spec.arguments.size()));
  json j = json::parse(spec.spec_text);
  const fs::path dir(s.dir);
  fs::create_directories(dir);

  if (!spec.source_text.empty()) j["source"] = store_source(dir, spec.source_path, spec.source_text);
  j.erase("reference");  // the captured outputs are the expected values
  json& args = j["arguments"];
  for (std::size_t i = 0; i < spec.arguments.size(); ++i) {
    const ArgSpec& a = spec.arguments[i];
    const CapturedArgument& c = r.args[i];
    json& ja = args.at(i);
    if (a.kind == ArgSpec::Kind::scalar) {
      ja["value"] = scalar_text(a.dtype, c.scalar_bits);
      continue;
    }
    if (a.is_input()) ja["init"] = file_source(store_data(dir, a.dtype, c.before));
    if (a.is_output()) ja["expected"] = file_source(store_data(dir, a.dtype, c.after));
  }
  json dims = json::object();
  for (const auto& [name, v] : r.problem.dims) dims[name] = v;
  j["problem"]["sizes"] = json::array({dims});
  j["workloads"] = json::array({r.workload.key()});
  j["captured"] = {{"spec_hash", spec.spec_hash()},
                   {"data", r.problem.data},
                   {"from", r.from},
                   {"problem", r.problem.key()},
                   {"configuration", json::parse(r.config.to_json())},
                   {"match", r.match},
                   {"device", r.device},
                   {"time", utc_now()}};
  j["$comment"] = "a launch of " + spec.name +
                  " captured by an application (AUTOTUNE_CAPTURE); tune it with "
                  "`autotune tune THIS_FILE`";

  const fs::path path = capture_path(s, spec.name, r.problem);
  write_atomically(path, [&](const std::string& tmp) { write_text(tmp, j.dump(2) + "\n"); });
  return path.string();
}

}  // namespace autotune::runtime_detail
