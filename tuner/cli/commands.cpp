#include "tuner/cli/commands.hpp"
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/problem_flags.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/cli/observed.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "db/database.hpp"
#include "db/ranking.hpp"
#include "search/strategy.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/session.hpp"
#include "tuner/sim/replay.hpp"
#include "tuner/sim/synthetic.hpp"

namespace autotune::cli {

namespace {

/// The device a command without a GPU run should reason about: the real GPU if there is one, else a
/// fictional reference device (132 SMs, sm_90) that is named as such.
DeviceInfo device_for_planning(bool* assumed) {
  std::string why;
  if (cuda::driver_available(&why)) {
    auto devs = cuda::list_devices();
    if (!devs.empty()) {
      *assumed = false;
      return devs.front();
    }
  }
  *assumed = true;
  DeviceInfo d = sim::SyntheticBackend::fake_device();
  d.name = "assumed device (no GPU here): 132 SMs, sm_90";
  return d;
}


}  // namespace

void register_commands(CLI::App& app, Globals& g) {
  // ---- devices
  auto* devices = app.add_subcommand("devices", "list the GPUs the NVIDIA driver reports");
  devices->callback([&g] {
    g.run = [] {
      auto devs = cuda::list_devices();
      for (std::size_t i = 0; i < devs.size(); ++i) {
        const auto& d = devs[i];
        std::printf("%zu: %s  cc %d.%d  %d SMs  %.1f GiB  L2 %.0f MiB  driver %d  uuid %s\n", i, d.name.c_str(),
                    d.cc / 10, d.cc % 10, d.sm_count, d.total_memory / 1073741824.0, d.l2_bytes / 1048576.0,
                    d.driver_version, d.uuid.c_str());
      }
      return 0;
    };
  });

  // ---- list
  auto* list = app.add_subcommand("list", "list the built-in kernels and the size of their spaces");
  list->callback([&g] {
    g.run = [] {
      bool assumed = false;
      DeviceInfo dev = device_for_planning(&assumed);
      std::printf("%-12s %-10s %10s %10s  %-40s %s\n", "kernel", "family", "cartesian", "valid", "workloads", "description");
      for (const auto& name : kernels::builtin_names()) {
        TuningSpec s = kernels::builtin_spec(name);
        ParameterSpace sp = s.space(s.problem_sizes.front(), dev, s.workloads.front());
        std::string ws;
        for (const auto& w : s.workloads) ws += (ws.empty() ? "" : ",") + w.key();
        if (ws.size() > 40) ws = ws.substr(0, 37) + "...";
        std::printf("%-12s %-10s %10.0f %10zu  %-40s %s\n", s.name.c_str(), s.family.c_str(), sp.cartesian_size(),
                    sp.size(), ws.c_str(), s.description.c_str());
      }
      std::printf("(valid sizes for each kernel's default problem and workload on %s)\n", dev.name.c_str());
      return 0;
    };
  });

  // ---- space
  auto* space = app.add_subcommand("space", "build a kernel's parameter space and report its size");
  auto space_kernel = std::make_shared<std::string>();
  auto space_flags = std::make_shared<ProblemFlags>();
  auto space_list = std::make_shared<bool>(false);
  auto space_narrow = std::make_shared<SpaceFlags>();
  space->add_option("kernel", *space_kernel, "built-in kernel name or path to a .json spec")->required();
  space_flags->add(space);
  space_narrow->add(space);
  space->add_flag("--list", *space_list, "print every valid configuration");
  space->callback([&g, space_kernel, space_flags, space_list, space_narrow] {
    g.run = [=, &g] {
      TuningSpec s = resolve_kernel(*space_kernel, {g.db_path});
      space_narrow->apply(s);
      ProblemKey p = space_flags->problem_key(s);
      Workload w = space_flags->workload(s);
      bool assumed = false;
      DeviceInfo dev = device_for_planning(&assumed);
      ParameterSpace sp = s.space(p, dev, w);
      std::printf("kernel:      %s (%s)\n", s.name.c_str(), s.family.c_str());
      std::printf("problem:     %s, workload %s, device %s\n", p.key().c_str(), w.key().c_str(), dev.name.c_str());
      std::printf("parameters:  %zu\n", s.params.size());
      for (const auto& prm : s.params) {
        std::string vals;
        for (auto v : prm.values) vals += (vals.empty() ? "" : ", ") + prm.label(v);
        std::printf("  %-18s [%s] default %s\n", prm.name.c_str(), vals.c_str(), prm.label(prm.default_value).c_str());
      }
      std::printf("constraints: %zu\n", s.constraints.size());
      std::printf("cartesian:   %.0f\n", sp.cartesian_size());
      std::printf("valid:       %zu\n", sp.size());
      std::printf("groups:      %zu (parameters connected by constraints; the space is their product%s)\n",
                  sp.groups().size(), sp.factorised() ? ", stored factorised" : "");
      for (const auto& grp : sp.groups()) {
        std::string names;
        for (std::size_t pos : grp.params) names += (names.empty() ? "" : " ") + s.params[pos].name;
        std::printf("  %12zu  %s\n", grp.size, names.c_str());
      }
      std::printf("built in:    %.3f ms\n", sp.build_seconds() * 1e3);
      if (*space_list)
        for (std::size_t i = 0; i < sp.size(); ++i) std::printf("%s\n", sp.config(i).str(&s.params).c_str());
      return sp.empty() ? 1 : 0;
    };
  });

  // ---- strategies
  auto* strategies = app.add_subcommand("strategies", "list the search strategies with their options");
  strategies->callback([&g] {
    g.run = [] {
      for (const auto& s : search::list_strategies()) {
        std::printf("%s\n    %s\n", s.name.c_str(), s.description.c_str());
        for (const auto& o : s.options)
          std::printf("    --strategy-option %s=%s  %s\n", o.name.c_str(), o.default_value.c_str(), o.description.c_str());
      }
      return 0;
    };
  });

  register_tune_command(app, g);

  // ---- summary
  struct SummaryArgs {
    std::string kernel, by, device_name, objective = "time";
    ProblemFlags pf;
  };
  auto sa = std::make_shared<SummaryArgs>();
  auto* summary = app.add_subcommand("summary", "best recorded trial for each value of a parameter, and failures by status");
  summary->add_option("kernel", sa->kernel, "built-in kernel name or path to a .json spec")->required();
  sa->pf.add(summary);
  summary->add_option("--by", sa->by, "parameter to group by (default: the first parameter)");
  summary->add_option("--device", sa->device_name, "device name (default: the only recorded one)");
  add_objective_option(summary, sa->objective, "rank by this objective");
  summary->callback([&g, sa] {
    g.run = [&g, sa] {
      TuningSpec spec = resolve_kernel(sa->kernel, {g.db_path});
      ProblemKey p = sa->pf.problem_key(spec);
      Workload w = sa->pf.workload(spec);
      std::string by = sa->by.empty() ? spec.params.front().name : sa->by;
      const Param* param = spec.find_param(by);
      if (!param) throw UsageError("kernel " + spec.name + " has no parameter '" + by + "'");
      auto db = db::Database::open(g.db_path, db::Database::Mode::read_only);
      std::vector<db::DeviceRow> devs;
      for (const auto& d : db->devices())
        if (sa->device_name.empty() || d.info.name == sa->device_name || d.info.normalised_name() == sa->device_name)
          devs.push_back(d);
      if (devs.size() != 1)
        throw UsageError(devs.empty() ? "no matching device recorded in " + g.db_path
                                      : "several devices recorded in " + g.db_path + ": choose one with --device");
      const auto& dev = devs.front();
      auto f = db::TrialFilter::cell(spec.name, spec.source_hash(), dev.id, w.key(), p.key());
      const Objective objective = objective_from_string(sa->objective);
      auto rows = db::rank_trials(db->trials(f), objective, true);
      if (rows.empty() && spec.source_hash() != kImportedSourceHash) {  // a user spec's imported rows
        f.source_hash = kImportedSourceHash;
        rows = db::rank_trials(db->trials(f), objective, true);
        if (!rows.empty())
          std::printf("note: imported trials (their kernel source is unknown, not necessarily the current one)\n");
      }
      if (rows.empty())
        throw UsageError("no trials of " + spec.name + " " + w.key() + " " + p.key() + " on " + dev.info.name +
                         " recorded in " + g.db_path + " (another size? --n / --problem; another workload? --dtype / --op)");
      std::map<Value, const db::TrialRow*> best_by;
      std::map<std::string, std::size_t> by_status;
      for (const auto& t : rows) {
        ++by_status[to_string(t.m.status)];
        if (!t.m.ok()) continue;
        Value v = Config::from_json(t.config_json).at(by);
        if (!best_by.count(v)) best_by[v] = &t;
      }
      std::printf("%s %s %s on %s: %zu trials (", spec.name.c_str(), w.key().c_str(), p.key().c_str(),
                  dev.info.name.c_str(), rows.size());
      bool first = true;
      for (const auto& [st, cnt] : by_status) {
        std::printf("%s%s %zu", first ? "" : ", ", st.c_str(), cnt);
        first = false;
      }
      std::printf(")\ncopy bandwidth %.1f GB/s\n", dev.copy_gbps);
      std::vector<const db::TrialRow*> order;
      for (const auto& [v, t] : best_by) order.push_back(t);
      std::sort(order.begin(), order.end(), [&](const db::TrialRow* a, const db::TrialRow* b) {
        return db::ranks_before(*a, *b, objective, true);
      });
      bool observed = false, throttled = false;
      for (const auto* t : order) {
        observed = observed || t->m.observed.observed();
        throttled = throttled || t->m.observed.throttled();
      }
      const std::string obs_header = observed ? " " + observation_header() : "";
      std::printf("%-4s %-28s %12s %9s %8s%s  %s\n", "rank", by.c_str(), "median", "GB/s", "% copy", obs_header.c_str(),
                  "best configuration");
      int rank = 1;
      for (const auto* t : order) {
        const Value v = Config::from_json(t->config_json).at(by);
        std::string pct = dev.copy_gbps > 0 ? fmt("%.1f%%", 100.0 * t->gbps / dev.copy_gbps) : "-";
        const std::string cells = observed ? " " + observation_cells(t->m.observed) : "";
        std::printf("%-4d %-28s %12s %9.1f %8s%s  %s\n", rank++, param->label(v).c_str(), fmt_time(t->m.median_ns).c_str(),
                    t->gbps, pct.c_str(), cells.c_str(), Config::from_json(t->config_json).str(&spec.params).c_str());
      }
      if (objective != Objective::time) {
        std::size_t have = 0;
        for (const auto* t : order) have += std::isfinite(objective_cost(objective, t->m, t->gbps)) ? 1 : 0;
        std::printf("ranked by %s\n", to_string(objective));
        if (have < order.size())
          std::printf("%zu of these rows lack the power or energy it needs (recorded without NVML): they rank last, "
                      "by time\n", order.size() - have);
      }
      if (throttled)
        std::printf("thr = yes: the clocks were throttled (power or thermal) while measuring; such rows rank after "
                    "unthrottled ones\n");
      return 0;
    };
  });

  // ---- best
  struct BestArgs {
    std::string kernel, device_name, objective = "time";
    int cc = 0;
    ProblemFlags pf;
    bool json = false;
  };
  auto ba = std::make_shared<BestArgs>();
  auto* best = app.add_subcommand("best", "print the best recorded configuration for this GPU and size");
  best->add_option("kernel", ba->kernel, "built-in kernel name or path to a .json spec")->required();
  ba->pf.add(best);
  best->add_option("--device", ba->device_name,
                   "device to look up: a recorded name, or any board name together with --cc (default: this "
                   "machine's GPU, or the only recorded one)");
  best->add_option("--cc", ba->cc, "compute capability of --device as major*10+minor (e.g. 90), for a board that "
                                   "is not recorded: the answer then falls back to other boards")
      ->check(CLI::PositiveNumber);
  best->add_flag("--json", ba->json, "print the answer as JSON");
  add_objective_option(best, ba->objective, "what best means");
  best->callback([&g, ba] {
    g.run = [&g, ba] {
      TuningSpec spec = resolve_kernel(ba->kernel, {g.db_path});
      ProblemKey p = ba->pf.problem_key(spec);
      Workload w = ba->pf.workload(spec);
      spec.check_workload(w);
      // The library degrades to the spec default on an unusable database; asked explicitly, the CLI says so.
      Lookup::Options lo;
      lo.warn = [](const std::string&) {};
      lo.objective = objective_from_string(ba->objective);
      Lookup lk(g.db_path, lo);
      if (!lk.available()) throw DbError(lk.error());
      DeviceInfo dev;
      bool found = false;
      if (ba->device_name.empty() && cuda::driver_available(nullptr)) {
        dev = cuda::list_devices().front();
        found = true;
      } else {
        std::vector<DeviceInfo> known;
        for (const auto& d : lk.devices())
          if (ba->device_name.empty() ||
              ((d.name == ba->device_name || d.normalised_name() == DeviceKey(ba->device_name, 0).name) &&
               (ba->cc == 0 || d.cc == ba->cc)))
            known.push_back(d);
        if (known.size() == 1) {
          dev = known.front();
          found = true;
        } else if (known.size() > 1) {
          throw UsageError("several devices are recorded in " + g.db_path + ": choose one with --device (and --cc)");
        } else if (!ba->device_name.empty() && ba->cc > 0) {
          dev.name = ba->device_name;  // a board that was never tuned: only its identity is known
          dev.cc = ba->cc;
          found = true;
        }
      }
      if (!found)
        throw UsageError(ba->device_name.empty()
                             ? "no GPU here and no device recorded in " + g.db_path
                             : "device '" + ba->device_name + "' is not recorded in " + g.db_path +
                                   " (give its compute capability with --cc to fall back to other boards)");
      // Full properties are known for a GPU here or a recorded board; an unrecorded board has its key only.
      const bool has_props = dev.sm_count > 0;
      Lookup::AnswerPtr ap = has_props ? lk.best_on(spec, w, dev, p) : lk.best(spec, w, DeviceKey(dev.name, dev.cc), p);
      const lookup::Answer& a = *ap;
      if (ba->json) {
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
        j["stale_rows"] = a.stale_rows;
        if (!a.note.empty()) j["note"] = a.note;
        std::printf("%s\n", j.dump(2).c_str());
      } else {
        std::printf("%s %s %s on %s: %s  [%s]\n", spec.name.c_str(), w.key().c_str(), p.key().c_str(), dev.name.c_str(),
                    a.config.str(&spec.params).c_str(), lookup::to_string(a.match));
        if (a.match != lookup::Match::spec_default)
          std::printf("measured on %s at %s: %s, %.1f GB/s (session %lld)\n", a.device.c_str(), a.problem.c_str(),
                      fmt_time(a.median_ns).c_str(), a.gbps, static_cast<long long>(a.session_id));
        if (a.observed.observed()) {
          const Observation& o = a.observed;
          std::printf("observed: %s, %s per run, %.2f GB/s/W, SM clock %.0f MHz (min %.0f), memory %.0f MHz, %.0f C, "
                      "throttle reasons: %s\n",
                      std::isfinite(o.power_w) ? fmt("%.1f W", o.power_w).c_str() : "power -",
                      format_objective(Objective::energy, o.energy_j).c_str(),
                      o.power_w > 0 ? a.gbps / o.power_w : 0.0, o.sm_clock_mhz, o.sm_clock_min_mhz, o.mem_clock_mhz,
                      o.temperature_c, throttle_reason_names(o.throttle_reasons).c_str());
        }
        if (a.objective != Objective::time) std::printf("best by %s\n", to_string(a.objective));
        if (a.match == lookup::Match::same_cc || a.match == lookup::Match::same_arch)
          std::printf("group default: %.3f x the best time on average over %d of %d (board, size) cells\n",
                      a.relative_time, a.cells_covered, a.cells_total);
        if (!a.note.empty()) std::printf("note: %s\n", a.note.c_str());
      }
      return 0;
    };
  });
  register_strategy_commands(app, g);
  register_interop_commands(app, g);
  register_explore_commands(app, g);
  register_merge_command(app, g);
}

}  // namespace autotune::cli
