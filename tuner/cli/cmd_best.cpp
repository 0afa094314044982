// `autotune best`: what the lookup library answers for this GPU (or a named board) and size, with its match
// level and provenance.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tuner/cli/args.hpp"
#include "tuner/cli/observed.hpp"
#include "tuner/cli/queries.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/lookup/lookup.hpp"

namespace autotune::cli {

namespace {

/// The device to look up: this machine's GPU without --device, else the recorded board of that name (and
/// --cc), else an unrecorded board known by --device and --cc only (sm_count 0). UsageError otherwise.
DeviceInfo lookup_device(const BestArgs& a, const Lookup& lk, const std::string& db_path) {
  if (a.device_name.empty() && cuda::driver_available(nullptr)) return cuda::list_devices().front();
  std::vector<DeviceInfo> known;
  for (const auto& d : lk.devices())
    if (a.device_name.empty() ||
        ((d.name == a.device_name || d.normalised_name() == DeviceKey(a.device_name, 0).name) &&
         (a.cc == 0 || d.cc == a.cc)))
      known.push_back(d);
  // Several boards of one model (same normalised name and cc) are one device to the lookup, which answers per
  // model: any of them will do.
  bool one_model = !known.empty();
  for (const DeviceInfo& d : known) one_model = one_model && DeviceKey::of(d) == DeviceKey::of(known.front());
  if (one_model) return known.front();
  if (known.size() > 1)
    throw UsageError("several devices are recorded in " + db_path + ": choose one with --device (and --cc)");
  if (!a.device_name.empty() && a.cc > 0) {
    DeviceInfo dev;
    dev.name = a.device_name;  // a board that was never tuned: only its identity is known
    dev.cc = a.cc;
    return dev;
  }
  throw UsageError(a.device_name.empty()
                       ? "no GPU here and no device recorded in " + db_path
                       : "device '" + a.device_name + "' is not recorded in " + db_path +
                             " (give its compute capability with --cc to fall back to other boards)");
}

nlohmann::json answer_json(const TuningSpec& spec, const Workload& w, const ProblemKey& p, const DeviceInfo& dev,
                           const lookup::Answer& a) {
  nlohmann::json j;
  j["kernel"] = spec.name;
  j["workload"] = w.key();
  j["problem"] = p.key();
  j["device"] = dev.name;
  j["device_cc"] = dev.cc;
  j["match"] = lookup::to_string(a.match);
  j["match_level"] = lookup::level(a.match);
  j["config"] = nlohmann::json::parse(a.config.to_labelled_json(spec.params));  // labels, as the tables print
  j["config_values"] = nlohmann::json::parse(a.config.to_json());              // the -D values the kernel sees
  j["measured_on"] = {{"device", a.device}, {"cc", a.device_cc}, {"problem", a.problem}, {"session", a.session_id}};
  if (a.match == lookup::Match::borrowed) j["measured_on"]["workload"] = a.borrowed_from;
  if (a.online) j["measured_on"]["online"] = true;
  j["median_ns"] = a.median_ns;
  j["gbps"] = a.gbps;
  j["objective"] = to_string(a.objective);
  if (a.match != lookup::Match::spec_default) {
    Measurement m;
    m.median_ns = a.median_ns;
    m.observed = a.observed;
    j["objective_value"] = json_number(objective_value(a.objective, m, a.gbps));
  }
  j["observed"] = observation_json(a.observed, a.gbps);
  if (a.match == lookup::Match::same_cc || a.match == lookup::Match::same_arch)
    j["group"] = {{"relative_time", a.relative_time}, {"cells_covered", a.cells_covered},
                  {"cells_total", a.cells_total}};
  if (!a.tie_set.empty()) {
    nlohmann::json ties = nlohmann::json::array();
    for (const Config& c : a.tie_set) ties.push_back(nlohmann::json::parse(c.to_labelled_json(spec.params)));
    j["final_pick"] = {
        {"within_noise", a.tie_set.size()}, {"noise", a.tie_noise}, {"session", a.tie_session}, {"tie_set", ties}};
  }
  j["stale_rows"] = a.stale_rows;
  if (!a.note.empty()) j["note"] = a.note;
  return j;
}

void print_answer(const TuningSpec& spec, const Workload& w, const ProblemKey& p, const DeviceInfo& dev,
                  const lookup::Answer& a) {
  std::printf("%s %s %s on %s: %s  [%s]\n", spec.name.c_str(), w.key().c_str(), p.key().c_str(), dev.name.c_str(),
              a.config.str(&spec.params).c_str(), lookup::to_string(a.match));
  if (a.match != lookup::Match::spec_default)
    std::printf("measured %son %s at %s%s: %s, %.1f GB/s (session %lld)\n",
                a.online ? "online by an application's launches " : "", a.device.c_str(), a.problem.c_str(),
                a.borrowed_from.empty() ? "" : (" for " + a.borrowed_from).c_str(), fmt_time(a.median_ns).c_str(),
                a.gbps, static_cast<long long>(a.session_id));
  if (a.observed.observed()) {
    const Observation& o = a.observed;
    std::printf("observed: %s, %s per run, %.2f GB/s/W, SM clock %.0f MHz (min %.0f), memory %.0f MHz, %.0f C, "
                "throttle reasons: %s\n",
                std::isfinite(o.power_w) ? fmt("%.1f W", o.power_w).c_str() : "power -",
                format_objective(Objective::energy, o.energy_j).c_str(), o.power_w > 0 ? a.gbps / o.power_w : 0.0,
                o.sm_clock_mhz, o.sm_clock_min_mhz, o.mem_clock_mhz, o.temperature_c,
                throttle_reason_names(o.throttle_reasons).c_str());
  }
  if (a.objective != Objective::time) std::printf("best by %s\n", to_string(a.objective));
  if (a.match == lookup::Match::same_cc || a.match == lookup::Match::same_arch)
    std::printf("group default: %.3f x the best time on average over %d of %d (board, size) cells\n", a.relative_time,
                a.cells_covered, a.cells_total);
  if (!a.tie_set.empty()) {
    std::string names;
    for (const Config& c : a.tie_set) names += (names.empty() ? "" : "; ") + c.str(&spec.params);
    std::printf("final pick (session %lld): %zu configuration%s within noise (%.1f%%): %s\n",
                static_cast<long long>(a.tie_session), a.tie_set.size(), a.tie_set.size() == 1 ? "" : "s",
                100 * a.tie_noise, names.c_str());
  }
  if (!a.note.empty()) std::printf("note: %s\n", a.note.c_str());
}

}  // namespace

namespace {

/// What run_best and best_json share: the spec, problem, workload, device and the lookup's answer.
struct BestAnswer {
  TuningSpec spec;
  ProblemKey p;
  Workload w;
  DeviceInfo dev;
  Lookup::AnswerPtr answer;
};

BestAnswer look_up(const BestArgs& a, const std::string& db_path) {
  BestAnswer b;
  b.spec = interop::resolve_kernel(a.kernel, {db_path});
  b.p = a.pf.problem_key(b.spec);
  b.w = a.pf.workload(b.spec);
  b.spec.check_workload(b.w);
  // The library degrades to the spec default on an unusable database; asked explicitly, the CLI says so.
  Lookup::Options lo;
  lo.warn = [](const std::string&) {};
  lo.objective = objective_from_string(a.objective);
  Lookup lk(db_path, lo);
  if (!lk.available()) throw DbError(lk.error());
  b.dev = lookup_device(a, lk, db_path);
  // Full properties are known for a GPU here or a recorded board; an unrecorded board has its key only.
  const bool has_props = b.dev.sm_count > 0;
  b.answer =
      has_props ? lk.best_on(b.spec, b.w, b.dev, b.p) : lk.best(b.spec, b.w, DeviceKey(b.dev.name, b.dev.cc), b.p);
  return b;
}

}  // namespace

nlohmann::json best_json(const BestArgs& a, const std::string& db_path) {
  const BestAnswer b = look_up(a, db_path);
  return answer_json(b.spec, b.w, b.p, b.dev, *b.answer);
}

int run_best(const BestArgs& a, const std::string& db_path) {
  const BestAnswer b = look_up(a, db_path);
  if (a.json)
    std::printf("%s\n", answer_json(b.spec, b.w, b.p, b.dev, *b.answer).dump(2).c_str());
  else
    print_answer(b.spec, b.w, b.p, b.dev, *b.answer);
  return 0;
}

}  // namespace autotune::cli
