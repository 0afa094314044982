#include "tuner/interop/resolve.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "db/database.hpp"
#include "tuner/interop/t1.hpp"
#include "tuner/specs/specs.hpp"

namespace autotune::interop {

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

TuningSpec resolve_kernel(const std::string& name_or_path, const std::vector<std::string>& databases,
                          std::vector<std::string>* notes) {
  const bool path = name_or_path.find('/') != std::string::npos ||
                    (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (path)
    if (auto text = t1_spec_text(name_or_path, notes)) return specs::load_spec_text(*text, name_or_path);
  return specs::load_spec(name_or_path, [&](const std::string& name) -> std::optional<std::string> {
    for (const std::string& path : databases) {
      std::error_code ec;
      if (path.empty() || !std::filesystem::is_regular_file(path, ec)) continue;
      auto db = db::Database::open(path, db::Database::Mode::read_only);
      if (auto k = db->kernel_spec(name)) return k->spec_json;
    }
    return std::nullopt;
  });
}

}  // namespace autotune::interop
