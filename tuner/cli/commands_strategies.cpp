// Sub-command compare-strategies: wiring only (the logic lives in tuner/session/compare.*). import and export
// are in commands_interop.cpp.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include "db/database.hpp"
#include "search/strategy.hpp"
#include "tuner/cli/commands.hpp"
#include "tuner/cli/kernel_resolver.hpp"
#include "tuner/cli/problem_flags.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/session/compare.hpp"

namespace autotune::cli {

namespace {

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t comma = s.find(',', start);
    std::string part = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!part.empty()) out.push_back(part);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

void register_strategy_commands(CLI::App& app, Globals& g) {
  // ---- compare-strategies
  struct CompareArgs {
    std::string kernel, from, device_name, budgets = "10,20,50,100", strategies, csv, runs_csv, warm_from;
    std::vector<std::string> strategy_options;
    ProblemFlags pa;
    std::size_t repeats = 50, batch = 1;
    std::uint64_t seed = 1;
    double within_percent = 5;
    bool markdown = false;
  };
  auto ca = std::make_shared<CompareArgs>();
  auto* cmp = app.add_subcommand("compare-strategies",
                                 "benchmark the search strategies on a fully recorded space (simulation, no GPU)");
  cmp->add_option("kernel", ca->kernel, "built-in kernel name or path to a .json spec")->required();
  ca->pa.add(cmp, false);
  cmp->add_option("--from", ca->from, "database with the recorded (brute-forced) space (default: --db)");
  cmp->add_option("--device", ca->device_name, "recorded device (when several are recorded)");
  cmp->add_option("--budgets", ca->budgets, "evaluation budgets: counts and/or percentages of the space, e.g. 10,20,5%")
      ->capture_default_str();
  cmp->add_option("--repeats", ca->repeats, "runs (seeds) per strategy and budget")->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmp->add_option("--strategies", ca->strategies, "comma-separated strategies (default: all; random_sample is always included)");
  cmp->add_option("--strategy-option", ca->strategy_options, "option of one strategy as name.key=value (repeatable)");
  cmp->add_option("--seed", ca->seed, "first seed (run r uses seed + r)")->capture_default_str();
  cmp->add_option("--batch", ca->batch, "configurations asked from a strategy per step (tune uses 32)")
      ->capture_default_str()->check(CLI::Range(1, 100000));
  cmp->add_option("--warm-from-problem", ca->warm_from,
                  "warm-start every run with the 5 fastest configurations recorded (same --from database, kernel, "
                  "workload and device) for this other problem, e.g. n=16777216");
  cmp->add_option("--within", ca->within_percent,
                  "headline threshold in percent: a run counts when its best is within this much of the optimum "
                  "(the shares within 1, 2 and 5% are always reported)")
      ->capture_default_str()->check(CLI::Range(0.0, 1000.0));
  cmp->add_option("--csv", ca->csv, "also write the results as CSV to this file (with standard errors)");
  cmp->add_option("--runs-csv", ca->runs_csv, "also write one CSV row per run (strategy, budget, seed) to this file");
  cmp->add_flag("--markdown", ca->markdown, "print the table as Markdown");
  cmp->callback([&g, ca] {
    g.run = [&g, ca] {
      TuningSpec spec = resolve_kernel(ca->kernel, {ca->from, g.db_path});
      ProblemKey p = ca->pa.problem_key(spec);
      Workload w = ca->pa.workload(spec);
      spec.check_workload(w);
      session::CompareOptions opt;
      opt.budgets = session::parse_budgets(ca->budgets);
      opt.repeats = ca->repeats;
      opt.seed = ca->seed;
      opt.batch = ca->batch;
      opt.within = ca->within_percent / 100.0;
      opt.keep_runs = !ca->runs_csv.empty();
      opt.strategies = split_list(ca->strategies);
      for (const auto& kv : ca->strategy_options) {
        auto dot = kv.find('.');
        auto eq = kv.find('=');
        if (dot == std::string::npos || eq == std::string::npos || dot == 0 || eq < dot + 2)
          throw UsageError("--strategy-option expects strategy.key=value, got '" + kv + "'");
        opt.strategy_options[kv.substr(0, dot)][kv.substr(dot + 1, eq - dot - 1)] = kv.substr(eq + 1);
      }
      opt.on_strategy_done = [](const std::string& name, double s) {
        std::fprintf(stderr, "  %-24s %s\n", name.c_str(), (s < 1 ? fmt("%.1f ms", s * 1e3) : fmt("%.2f s", s)).c_str());
      };
      const std::string from = ca->from.empty() ? g.db_path : ca->from;
      auto db = db::Database::open(from, db::Database::Mode::read_only);
      session::Recording rec = session::load_recording(*db, spec, w, p, ca->device_name);
      const ParameterSpace& space = *rec.space;
      std::printf("%s %s %s on %s (recorded in %s): %zu valid configurations, %zu failed, optimum %s: %s\n",
                  spec.name.c_str(), w.key().c_str(), p.key().c_str(), rec.device.info.name.c_str(), from.c_str(),
                  space.size(), rec.recorded.failures, fmt_time(rec.recorded.optimum).c_str(),
                  space.config(rec.recorded.optimum_index).str(&spec.params).c_str());
      std::size_t good = 0;
      for (double v : rec.recorded.values) good += v <= (1 + opt.within) * rec.recorded.optimum ? 1 : 0;
      std::printf("%zu configurations (%.1f%%) are within %g%% of the optimum\n", good,
                  100.0 * static_cast<double>(good) / static_cast<double>(space.size()), ca->within_percent);
      if (!rec.note.empty()) std::printf("note: %s\n", rec.note.c_str());
      if (!ca->warm_from.empty()) {
        session::RecordedWarmStart ws = session::load_warm_start(*db, rec, spec, w, ProblemKey::parse(ca->warm_from));
        opt.warm_start = ws.indices;
        std::printf("warm start: the %zu fastest configurations recorded for %s", ws.indices.size() + ws.skipped,
                    ws.problem.c_str());
        if (ws.skipped) std::printf(" (%zu not valid here, skipped)", ws.skipped);
        std::printf(", evaluated first by every run:\n");
        for (std::size_t k = 0; k < ws.indices.size(); ++k) {
          const double here = rec.recorded.values[ws.indices[k]];
          std::printf("  %s there, %s here: %s\n", fmt_time(ws.source_ns[k]).c_str(),
                      std::isfinite(here) ? fmt_time(here).c_str() : "failed",
                      space.config(ws.indices[k]).str(&spec.params).c_str());
        }
      }
      std::fflush(stdout);
      std::cerr << "simulating " << opt.repeats << " runs per strategy (batch " << opt.batch << ")\n";
      session::CompareResult res = session::compare_strategies(space, rec.recorded, opt);
      std::printf("\n%s", session::compare_table(res, ca->markdown).c_str());
      const std::vector<std::pair<std::string, std::string>> context = {
          {"kernel", spec.name}, {"workload", w.key()}, {"problem", p.key()}, {"device", rec.device.info.name}};
      if (!ca->csv.empty()) {
        write_file(ca->csv, session::compare_csv(res, context));
        std::printf("CSV written to %s\n", ca->csv.c_str());
      }
      if (!ca->runs_csv.empty()) {
        write_file(ca->runs_csv, session::compare_runs_csv(res, context));
        std::printf("per-run CSV written to %s\n", ca->runs_csv.c_str());
      }
      return 0;
    };
  });
}

}  // namespace autotune::cli
