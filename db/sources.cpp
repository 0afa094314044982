#include "db/sources.hpp"

#include <algorithm>

namespace autotune::db {

std::vector<std::string> accepted_sources_without_db(const TuningSpec& spec) {
  std::vector<std::string> out = {spec.source_hash()};
  if (spec.is_stub()) return out;
  for (const std::string& h : spec.equivalent_sources)
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  return out;
}

std::vector<std::string> accepted_sources(const Database& db, const TuningSpec& spec) {
  std::vector<std::string> out = accepted_sources_without_db(spec);
  if (spec.is_stub()) return out;
  for (const std::string& h : db.sources_of_identity(spec.name, spec.code_identity()))
    if (std::find(out.begin(), out.end(), h) == out.end()) out.push_back(h);
  return out;
}

std::vector<TrialRow> trials_on_model(const Database& db, const DeviceInfo& model, TrialFilter f) {
  std::vector<TrialRow> out;
  const DeviceKey key = DeviceKey::of(model);
  for (const DeviceRow& d : db.devices()) {
    if (!(DeviceKey::of(d.info) == key)) continue;
    f.device_id = d.id;
    for (TrialRow& t : db.trials(f)) out.push_back(std::move(t));
  }
  return out;
}

void record_source_identity(Database& db, const TuningSpec& spec) {
  if (spec.is_stub()) return;
  db.put_source_identity(spec.name, spec.source_hash(), spec.code_identity());
}

}  // namespace autotune::db
