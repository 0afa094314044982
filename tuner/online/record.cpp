#include "tuner/online/record.hpp"

#include <algorithm>

#include "tuner/core/stats.hpp"

namespace autotune::online {

std::int64_t record(db::Database& db, const RecordRequest& r) {
  std::int64_t session = 0;
  db.transaction([&] {
    db::SessionRow s;
    s.kernel = r.spec.name;
    s.source_hash = r.spec.source_hash();
    s.spec_hash = r.spec.spec_hash();
    s.strategy = r.strategy;
    s.seed = r.seed;
    s.workload = r.workload.key();
    s.problem = r.problem.key();
    s.device_id = db.upsert_device(r.device);
    s.backend = kOnlineBackend;
    session = db.begin_session(s);
    for (const Entry& e : r.search.entries()) {
      if (!e.timed() && e.stage != Stage::failed) continue;
      db::TrialRow t;
      t.session_id = session;
      t.device_id = s.device_id;
      t.kernel = s.kernel;
      t.source_hash = s.source_hash;
      t.workload = s.workload;
      t.problem = s.problem;
      t.problem_elements = r.problem.elements();
      const Config c = r.space.config(e.index);
      t.config_json = c.to_json();
      t.config_hash = c.hash();
      t.m.protocol = kOnlineProtocol;
      t.m.measured_by = "online: the application's own launches";
      if (e.stage == Stage::failed) {
        t.m.status = e.status;
        t.m.log = e.message;
      } else {
        std::vector<double> ns;
        ns.reserve(e.samples_ms.size());
        for (const double ms : e.samples_ms) ns.push_back(ms * 1e6);
        t.m.status = TrialStatus::ok;
        t.m.median_ns = stats::median(ns);
        t.m.min_ns = *std::min_element(ns.begin(), ns.end());
        t.m.spread = stats::relative_spread(ns);
        t.m.samples = static_cast<int>(ns.size());
        t.m.sample_ns = std::move(ns);
        if (r.bytes_moved > 0 && t.m.median_ns > 0) t.gbps = r.bytes_moved / t.m.median_ns;
      }
      db.insert_online_trial(t);
    }
    db.finish_session(session, "finished");
  });
  return session;
}

}  // namespace autotune::online
