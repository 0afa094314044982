// `autotune report`: a self-contained HTML page of a kernel's (or a session's) recorded trials.
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "db/sources.hpp"
#include "tuner/cli/args.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/cli/shared.hpp"
#include "tuner/report/html_report.hpp"

namespace autotune::cli {

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool all_digits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

int run_report(const ReportArgs& a, const std::string& db_path) {
  auto db = db::Database::open(db_path, db::Database::Mode::read_only);
  report::ReportQuery q;
  std::vector<Param> params;
  if (all_digits(a.target)) {
    q.session_id = std::stoll(a.target);
    if (auto s = db->session(*q.session_id)) {
      try {
        params = interop::resolve_kernel(s->kernel, {db_path}).params;
      } catch (const std::exception&) {
        // A user spec not at hand: the page shows raw parameter values.
      }
    }
  } else {
    TuningSpec spec = interop::resolve_kernel(a.target, {db_path});
    q.kernel = spec.name;
    q.problem = a.pf.problem_key(spec).key();
    q.workload = a.pf.workload(spec).key();
    q.sources = db::accepted_sources(*db, spec);
    params = spec.params;
  }
  q.device_name = a.device_name;
  report::ReportData d = report::load_report_data(*db, q);
  d.params = params;
  d.top = a.top;
  d.generated_at = utc_now();
  write_file(a.html, report::render_html(d));
  std::printf("report of %s %s %s (%s, %zu trials) written to %s\n", d.kernel.c_str(), d.workload.c_str(),
              d.problem.c_str(), d.scope.c_str(), d.trials.size(), a.html.c_str());
  return 0;
}

}  // namespace autotune::cli
