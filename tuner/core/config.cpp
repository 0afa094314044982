#include "tuner/core/config.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"

namespace autotune {

std::string Param::macro(Value v) const {
  auto it = macro_text.find(v);
  return it != macro_text.end() ? it->second : std::to_string(v);
}

std::string Param::label(Value v) const {
  auto it = labels.find(v);
  return it == labels.end() ? std::to_string(v) : it->second;
}

int Param::index_of(Value v) const {
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] == v) return static_cast<int>(i);
  return -1;
}

Value Config::at(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range("configuration has no parameter '" + name + "'");
  return it->second;
}

std::optional<Value> Config::get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string Config::to_json() const {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : values_) {
    if (!first) out += ',';
    first = false;
    out += nlohmann::json(k).dump();
    out += ':';
    out += std::to_string(v);
  }
  return out + "}";
}

Config Config::from_json(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw SpecError("", "configuration is not valid JSON: " + std::string(e.what()));
  }
  if (!j.is_object()) throw SpecError("", "configuration must be a JSON object");
  Config c;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_number_integer())
      throw SpecError("/" + it.key(), "configuration value must be an integer");
    c.set(it.key(), it.value().get<Value>());
  }
  return c;
}

std::string Config::hash() const { return content_hash(to_json()); }

std::string Config::substitute(const std::string& text) const {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) ++j;
      const std::string word = text.substr(i, j - i);
      auto it = values_.find(word);
      out += it == values_.end() ? word : std::to_string(it->second);
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

std::string Config::to_labelled_json(const std::vector<Param>& params) const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : values_) {
    j[k] = v;
    for (const auto& p : params)
      if (p.name == k && p.labels.count(v)) j[k] = p.labels.at(v);
  }
  return j.dump();
}

std::string Config::str(const std::vector<Param>* params) const {
  std::string out;
  for (const auto& [k, v] : values_) {
    if (!out.empty()) out += ' ';
    std::string val = std::to_string(v);
    if (params)
      for (const auto& p : *params)
        if (p.name == k) val = p.label(v);
    out += k + "=" + val;
  }
  return out;
}

}  // namespace autotune
