#include "db/merge.hpp"

#include <map>

#include "tuner/core/error.hpp"

namespace autotune::db {

MergeReport& MergeReport::operator+=(const MergeReport& o) {
  devices += o.devices;
  sessions_added += o.sessions_added;
  sessions_present += o.sessions_present;
  trials_added += o.trials_added;
  trials_present += o.trials_present;
  trials_conflicting += o.trials_conflicting;
  binaries_added += o.binaries_added;
  binaries_present += o.binaries_present;
  return *this;
}

bool same_measurement(const Measurement& a, const Measurement& b) {
  auto same = [](double x, double y) { return x == y || (x != x && y != y); };  // NaN (NULL) equals NaN
  return a.status == b.status && same(a.median_ns, b.median_ns) && same(a.min_ns, b.min_ns) &&
         same(a.spread, b.spread) && a.samples == b.samples && a.protocol == b.protocol;
}

MergeReport merge_database(Database& out, const Database& in) {
  MergeReport r;
  out.transaction([&] {
    std::map<std::int64_t, std::int64_t> device_id;  // in -> out
    for (const DeviceRow& d : in.devices()) {
      const std::int64_t id = out.upsert_device(d.info);
      device_id[d.id] = id;
      if (d.copy_gbps > 0) {
        const auto known = out.device(id);
        if (known && !(known->copy_gbps > 0)) out.set_copy_bandwidth(id, d.copy_gbps);
      }
      ++r.devices;
    }
    auto map_device = [&](std::int64_t id) {
      if (id == 0) return std::int64_t{0};
      auto it = device_id.find(id);
      if (it == device_id.end())
        throw DbError("database " + in.path() + " refers to device " + std::to_string(id) + ", which it lacks");
      return it->second;
    };

    std::map<std::int64_t, std::int64_t> session_id;  // in -> out
    for (SessionRow s : in.sessions()) {
      const std::int64_t from = s.id;
      s.device_id = map_device(s.device_id);
      if (auto id = out.find_session(s)) {
        session_id[from] = *id;
        ++r.sessions_present;
        continue;
      }
      if (s.origin.empty()) s.origin = "merged from " + in.path() + " session " + std::to_string(from);
      session_id[from] = out.insert_session(s);
      ++r.sessions_added;
    }

    for (TrialRow t : in.trials(TrialFilter{})) {
      t.device_id = map_device(t.device_id);
      if (t.session_id != 0) {
        auto it = session_id.find(t.session_id);
        t.session_id = it == session_id.end() ? 0 : it->second;
      }
      if (auto have = out.find_trial(t.kernel, t.source_hash, t.device_id, t.workload, t.problem, t.config_hash)) {
        if (same_measurement(have->m, t.m)) ++r.trials_present;
        else ++r.trials_conflicting;
        continue;
      }
      t.id = 0;
      out.insert_trial(t);
      ++r.trials_added;
    }

    for (const auto& [source, kernel_identity] : in.source_identities())  // what the sources' code is
      out.put_source_identity(kernel_identity.first, source, kernel_identity.second);
    for (const std::string& name : in.kernel_spec_names())  // spec stubs of imported kernels: `out`'s is kept
      if (!out.kernel_spec(name))
        if (auto k = in.kernel_spec(name)) out.put_kernel_spec(k->name, k->spec_json, k->origin);

    for (const std::string& key : in.binary_keys()) {
      if (out.binary(key)) {
        ++r.binaries_present;
        continue;
      }
      if (auto b = in.binary(key)) {
        out.put_binary(*b);
        ++r.binaries_added;
      }
    }
  });
  return r;
}

}  // namespace autotune::db
