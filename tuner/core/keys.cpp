#include "tuner/core/keys.hpp"

#include <map>
#include <vector>

#include <cctype>
#include <cmath>
#include <stdexcept>

#include "tuner/core/error.hpp"

namespace autotune {

void append_normalised_name(std::string& out, const std::string& name) {
  const std::size_t start = out.size();
  bool sep = false;
  for (unsigned char c : name) {
    if (std::isalnum(c)) {
      if (sep && out.size() != start) out += '_';
      out += static_cast<char>(std::tolower(c));
      sep = false;
    } else {
      sep = true;
    }
  }
}

std::string DeviceInfo::normalised_name() const {
  std::string out;
  append_normalised_name(out, name);
  return out;
}

int cc_from_board_name(const std::string& name) {
  std::string norm;
  append_normalised_name(norm, name);
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : norm + "_") {
    if (c == '_') {
      if (!cur.empty()) tokens.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  // Data centre and workstation boards by model token (sources: NVIDIA's CUDA GPU compute capability table).
  static const std::map<std::string, int> kModels = {
      {"p100", 60}, {"p40", 61}, {"p4", 61}, {"v100", 70}, {"t4", 75}, {"a100", 80}, {"a800", 80}, {"a30", 80},
      {"a10", 86}, {"a16", 86}, {"a2", 86}, {"a40", 86}, {"a2000", 86}, {"a4000", 86}, {"a4500", 86},
      {"a5000", 86}, {"a6000", 86}, {"l4", 89}, {"l40", 89}, {"l40s", 89}, {"l20", 89}, {"ada", 89},
      {"h100", 90}, {"h200", 90}, {"h800", 90}, {"h20", 90}, {"gh200", 90}, {"b100", 100}, {"b200", 100},
      {"gb200", 100}, {"b300", 103}, {"gb300", 103}, {"blackwell", 120}};
  for (const auto& t : tokens)
    if (auto it = kModels.find(t); it != kModels.end()) return it->second;
  // GeForce / RTX series by the number after "rtx" or "gtx": 10xx Pascal ... 50xx Blackwell.
  for (std::size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i] != "rtx" && tokens[i] != "gtx") continue;
    const std::string& num = tokens[i + 1];
    if (num.size() != 4 || num.find_first_not_of("0123456789") != std::string::npos) continue;
    const int series = std::stoi(num.substr(0, 2));
    switch (series) {
      case 10: return 61;
      case 16: case 20: return 75;
      case 30: return 86;
      case 40: return 89;
      case 50: return 120;
      default: break;
    }
  }
  return 0;
}

DeviceKey::DeviceKey(const std::string& n, int c) : cc(c) { append_normalised_name(name, n); }

DeviceKey DeviceKey::of(const DeviceInfo& d) {
  DeviceKey k;
  k.name = d.normalised_name();
  k.cc = d.cc;
  return k;
}

std::string DeviceKey::str() const {
  return name + " (cc " + std::to_string(cc / 10) + "." + std::to_string(cc % 10) + ")";
}

Bindings DeviceInfo::bindings() const {
  return {{"sm_count", sm_count},
          {"max_threads_per_block", max_threads_per_block},
          {"max_shared_memory_per_block", max_shared_memory_per_block},
          {"max_shared_memory_per_block_optin", max_shared_memory_per_block_optin},
          {"warp_size", warp_size},
          {"cc", cc}};
}

std::string Workload::key() const { return op.empty() ? dtype : dtype + "/" + op; }

Workload Workload::parse(const std::string& key) {
  Workload w;
  auto slash = key.find('/');
  w.dtype = key.substr(0, slash);
  if (slash != std::string::npos) w.op = key.substr(slash + 1);
  if (w.dtype.empty()) throw UsageError("workload '" + key + "' has no dtype (expected dtype/op, e.g. float32/sum)");
  return w;
}

int dtype_size(const std::string& dtype) {
  if (dtype == "int32" || dtype == "uint32" || dtype == "float32") return 4;
  if (dtype == "int64" || dtype == "uint64" || dtype == "float64") return 8;
  if (dtype == "int8" || dtype == "uint8") return 1;
  if (dtype == "int16" || dtype == "uint16" || dtype == "float16") return 2;
  if (dtype == "float3") return 12;
  if (dtype == "float2") return 8;
  if (dtype == "float4") return 16;
  throw UsageError("unknown dtype '" + dtype + "' (known: int32, uint32, int64, uint64, float32, float64, float3)");
}

std::string ProblemKey::key() const {
  std::string out;
  for (const auto& [k, v] : dims) {
    if (!out.empty()) out += ',';
    out += k + "=" + std::to_string(v);
  }
  if (!data.empty()) out += "@" + data;
  return out;
}

ProblemKey ProblemKey::parse(const std::string& text) {
  ProblemKey p;
  const std::size_t at = text.find('@');
  const std::string key = text.substr(0, at);
  if (at != std::string::npos) {
    p.data = text.substr(at + 1);
    if (p.data.empty() || p.data.find_first_of("@,= ") != std::string::npos)
      throw UsageError("bad problem '" + text + "': the data tag after '@' is empty or has '@', ',', '=' or a space");
  }
  std::size_t start = 0;
  while (start < key.size()) {
    std::size_t comma = key.find(',', start);
    std::string part = key.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    auto eq = part.find('=');
    if (eq == std::string::npos || eq == 0) throw UsageError("bad problem '" + key + "' (expected name=value,...)");
    try {
      std::size_t used = 0;
      long long v = std::stoll(part.substr(eq + 1), &used);
      if (used != part.size() - eq - 1) throw std::invalid_argument("trailing");
      p.dims[part.substr(0, eq)] = v;
    } catch (const std::exception&) {
      throw UsageError("bad problem '" + key + "': '" + part.substr(eq + 1) + "' is not an integer");
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return p;
}

double ProblemKey::elements() const {
  double e = 1;
  for (const auto& [k, v] : dims) e *= static_cast<double>(v);
  return e;
}

std::int64_t ProblemKey::at(const std::string& dim) const {
  auto it = dims.find(dim);
  if (it == dims.end()) throw UsageError("problem has no dimension '" + dim + "'");
  return it->second;
}

}  // namespace autotune
