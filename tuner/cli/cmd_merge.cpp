// `autotune merge`: databases recorded on other machines (one per node of a job array, one per workstation)
// combined into one that `best` and the lookup library serve.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/merge.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/core/error.hpp"

namespace autotune::cli {

int run_merge(const MergeArgs& a) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out_path = fs::weakly_canonical(a.out, ec);
  // Every input is checked (ours, not newer than this build, not corrupt) before anything is created or written.
  std::vector<std::unique_ptr<db::Database>> inputs;
  for (const std::string& path : a.inputs) {
    if (!fs::exists(path)) throw UsageError("merge: input database " + path + " does not exist");
    if (fs::equivalent(path, a.out, ec)) throw UsageError("merge: " + path + " is the output database itself");
    try {
      inputs.push_back(db::Database::open(path, db::Database::Mode::snapshot));
    } catch (const DbError& e) {
      throw DbError(std::string(e.what()) + "; nothing was merged, no file was changed");
    }
  }
  const bool existed = fs::exists(out_path);
  auto out = db::Database::open(a.out);
  db::MergeReport total;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const db::MergeReport r = db::merge_database(*out, *inputs[i]);
    std::printf("%s: %zu devices, sessions %zu added (%zu present), trials %zu added (%zu present", a.inputs[i].c_str(),
                r.devices, r.sessions_added, r.sessions_present, r.trials_added, r.trials_present);
    if (r.trials_conflicting) std::printf(", %zu with other values: kept %s's", r.trials_conflicting, a.out.c_str());
    std::printf("), binaries %zu added (%zu present)\n", r.binaries_added, r.binaries_present);
    total += r;
  }
  const auto devices = out->devices();
  std::printf("%s%s: %zu trials added from %zu databases; it now holds %zu devices:", a.out.c_str(),
              existed ? "" : " (new)", total.trials_added, inputs.size(), devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i)
    std::printf("%s %s (cc %d.%d)", i ? "," : "", devices[i].info.name.c_str(), devices[i].info.cc / 10,
                devices[i].info.cc % 10);
  std::printf("\n");
  return 0;
}

}  // namespace autotune::cli
