// The queries of queries.hpp that no sub-command prints itself: the space as JSON, a session's trials.
#include "tuner/cli/queries.hpp"

#include <type_traits>

#include "db/database.hpp"
#include "tuner/cli/planning.hpp"
#include "tuner/core/error.hpp"
#include "tuner/interop/resolve.hpp"

namespace autotune::cli {

nlohmann::json space_json(const SpaceArgs& a, const std::string& db_path) {
  TuningSpec s = interop::resolve_kernel(a.kernel, {db_path});
  a.narrow.apply(s);
  const ProblemKey p = a.pf.problem_key(s);
  const Workload w = a.pf.workload(s);
  bool assumed = false;
  const DeviceInfo dev = device_for_planning(&assumed);
  const ParameterSpace sp = s.space(p, dev, w);
  nlohmann::json j = {{"kernel", s.name},   {"problem", p.key()},        {"workload", w.key()},
                      {"device", dev.name}, {"device_assumed", assumed}, {"cartesian", sp.cartesian_size()},
                      {"valid", sp.size()}};
  nlohmann::json names = nlohmann::json::array();
  for (const auto& prm : s.params) names.push_back(prm.name);
  j["parameters"] = names;
  nlohmann::json configs = nlohmann::json::array();
  for (std::size_t i = 0; i < sp.size(); ++i) configs.push_back(nlohmann::json::parse(sp.config(i).to_json()));
  j["configs"] = std::move(configs);
  return j;
}

nlohmann::json trials_json(const std::string& db_path, std::int64_t session_id) {
  const std::unique_ptr<db::Database> db = db::Database::open(db_path, db::Database::Mode::read_only);
  db::TrialFilter f;
  f.session_id = session_id;
  nlohmann::json rows = nlohmann::json::array();
  for (const db::TrialRow& row : db->trials(f)) {
    nlohmann::json r = nlohmann::json::object();
    db::TrialRow::for_each_field(row, [&r](const char* name, const auto& v) {
      using T = std::decay_t<decltype(v)>;
      if constexpr (std::is_same_v<T, TrialStatus>)
        r[name] = to_string(v);
      else
        r[name] = v;
    });
    r["config"] = nlohmann::json::parse(row.config_json);
    rows.push_back(std::move(r));
  }
  if (rows.empty()) throw UsageError("no trial of session " + std::to_string(session_id) + " in " + db_path);
  return {{"session", session_id}, {"trials", std::move(rows)}};
}

}  // namespace autotune::cli
