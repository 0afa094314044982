#include "tuner/compare/traces.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "tuner/core/error.hpp"

namespace autotune::compare {

namespace {

/// A value of a trace as our labels write it: strings as they are, integral numbers as integers.
std::string value_text(const nlohmann::json& v, const std::string& where) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15) return std::to_string(static_cast<long long>(d));
    return v.dump();
  }
  throw UsageError(where + ": a configuration value must be a number or a string, not " + v.dump());
}

/// "name=text\n" over the parameters in name order: the key both sides are matched by.
std::string config_key(const std::map<std::string, std::string>& values) {
  std::string key;
  for (const auto& [name, text] : values) key += name + "=" + text + "\n";
  return key;
}

std::string field_string(const nlohmann::json& j, const char* name, const std::string& where, bool required) {
  if (!j.contains(name)) {
    if (required) throw UsageError(where + ": no \"" + name + "\"");
    return "";
  }
  if (!j[name].is_string()) throw UsageError(where + ": \"" + name + "\" must be a string");
  return j[name].get<std::string>();
}

}  // namespace

std::vector<ExternalRun> read_traces(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read the traces file " + path);
  std::vector<ExternalRun> out;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + " line " + std::to_string(line);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw UsageError(where + ": not JSON (" + e.what() + ")");
    }
    if (!j.is_object()) throw UsageError(where + ": expected a JSON object per line");
    ExternalRun r;
    r.line = line;
    r.kernel = field_string(j, "kernel", where, true);
    r.device = field_string(j, "device", where, true);
    r.strategy = field_string(j, "strategy", where, true);
    r.problem = field_string(j, "problem", where, false);
    r.from = field_string(j, "from", where, false);
    if (!j.contains("run") || !j["run"].is_number_unsigned())
      throw UsageError(where + ": \"run\" must be a non-negative integer");
    r.run = j["run"].get<std::size_t>();
    if (!j.contains("configs") || !j["configs"].is_array()) throw UsageError(where + ": \"configs\" must be an array");
    for (const auto& c : j["configs"]) {
      if (!c.is_object()) throw UsageError(where + ": each configuration must be a JSON object");
      std::map<std::string, std::string> values;
      for (const auto& [name, v] : c.items()) values[name] = value_text(v, where);
      r.configs.push_back(std::move(values));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<std::pair<std::string, std::vector<std::vector<std::size_t>>>> trace_orders(
    const std::vector<ExternalRun>& runs, const ParameterSpace& space, const std::string& kernel,
    const std::string& problem, const std::string& device, const std::string& from) {
  const std::string from_name = from.substr(from.find_last_of('/') + 1);  // npos + 1 = 0
  std::vector<std::pair<std::string, std::vector<std::vector<std::size_t>>>> out;
  std::unordered_map<std::string, std::size_t> index;  // config_key -> space index, built on first use
  for (const ExternalRun& r : runs) {
    if (r.kernel != kernel || r.device != device || (!r.problem.empty() && r.problem != problem) ||
        (!r.from.empty() && r.from != from_name))
      continue;
    if (index.empty()) {
      index.reserve(space.size());
      for (std::size_t i = 0; i < space.size(); ++i) {
        std::map<std::string, std::string> values;
        const Config c = space.config(i);
        for (const Param& p : space.params()) values[p.name] = p.label(c.at(p.name));
        index.emplace(config_key(values), i);
      }
    }
    std::vector<std::size_t> order;
    order.reserve(r.configs.size());
    for (const auto& values : r.configs) {
      const auto it = index.find(config_key(values));
      if (it == index.end()) {
        std::string shown;
        for (const auto& [name, text] : values) shown += (shown.empty() ? "" : " ") + name + "=" + text;
        throw UsageError("run " + std::to_string(r.run) + " of " + r.strategy + " (line " + std::to_string(r.line) +
                         ") evaluated " + shown + ", which is not in the valid space of " + kernel + " on " + device +
                         " (" + std::to_string(space.size()) + " configurations)");
      }
      order.push_back(it->second);
    }
    auto group = std::find_if(out.begin(), out.end(), [&](const auto& g) { return g.first == r.strategy; });
    if (group == out.end()) group = out.insert(out.end(), {r.strategy, {}});
    group->second.push_back(std::move(order));
  }
  return out;
}

}  // namespace autotune::compare
