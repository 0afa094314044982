#include "db/sources.hpp"

#include <algorithm>
#include <map>

#include "tuner/core/error.hpp"

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

DeviceRow recorded_board(const Database& db, const std::string& device_name, TrialFilter cell) {
  const std::string kernel = cell.kernel.value_or("");
  TrialFilter any;
  any.kernel = cell.kernel;
  std::map<std::int64_t, std::size_t> ids;
  for (const TrialRow& t : db.trials(any)) ids[t.device_id] = 0;
  if (ids.empty()) throw UsageError("no recorded trials of kernel '" + kernel + "' in " + db.path());
  std::vector<DeviceRow> matches;
  std::string names;
  for (const auto& [id, n] : ids) {
    const auto d = db.device(id);
    if (!d) continue;
    names += (names.empty() ? "" : ", ") + d->info.name;
    if (device_name.empty() || d->info.name == device_name || d->info.normalised_name() == device_name)
      matches.push_back(*d);
  }
  if (matches.empty())
    throw UsageError("no recorded trials of kernel '" + kernel + "' on device '" + device_name + "' in " + db.path() +
                     " (recorded devices: " + names + ")");
  for (const DeviceRow& d : matches)
    if (!(DeviceKey::of(d.info) == DeviceKey::of(matches.front().info)))
      throw UsageError("trials of kernel '" + kernel + "' were recorded on several devices (" + names +
                       "): choose one with --device");
  if (matches.size() == 1) return matches.front();
  std::size_t most = 0;
  DeviceRow chosen = matches.front();
  for (const DeviceRow& d : matches) {
    cell.device_id = d.id;
    const std::size_t n = db.trials(cell).size();
    if (n > most) {
      most = n;
      chosen = d;
    }
  }
  return chosen;
}

void record_source_identity(Database& db, const TuningSpec& spec) {
  if (spec.is_stub()) return;
  db.put_source_identity(spec.name, spec.source_hash(), spec.code_identity());
}

}  // namespace autotune::db
