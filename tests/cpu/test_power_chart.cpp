// tuner/report/power_chart.cpp and where it shows: the HTML report's "Energy and power" section and
// `explore --power-plot` (points with power only; the fastest and least-energy points ringed).
#include <catch2/catch.hpp>

#include "synthetic_session.hpp"
#include "tests/xml_check.hpp"
#include "tuner/report/html_report.hpp"
#include "tuner/report/power_chart.hpp"
#include "tuner/session/session.hpp"

using namespace autotune;
using namespace autotune::report;

TEST_CASE("power chart: GB/s against power, one line per group, fastest and least energy ringed",
          "[cpu][report][observer]") {
  PowerChartSpec s;
  s.title = "t";
  CHECK(power_chart_svg(s).empty());
  s.points = {{300, 3000, 0.010, "256 threads", "a"},
              {250, 2800, 0.008, "256 threads", "b"},
              {400, 3100, 0.012, "1024 threads", "c"},
              {0, 1000, 0, "1024 threads", "no power"}};
  const std::string svg = power_chart_svg(s);
  REQUIRE_FALSE(svg.empty());
  CHECK(autotune_test::parse_xml(svg).ok);
  CHECK_THAT(svg, Catch::Contains("256 threads") && Catch::Contains("1024 threads"));
  CHECK_THAT(svg, Catch::Contains("fastest: c: 3100.0 GB/s at 400.0 W"));
  CHECK_THAT(svg, Catch::Contains("least energy: b: 2800.0 GB/s at 250.0 W"));
  CHECK_THAT(svg, !Catch::Contains("no power"));
}

TEST_CASE("report: an Energy and power section where the trials were observed", "[cpu][report][observer]") {
  autotune_test::SessionFixture f;
  sim::SyntheticBackend be;
  session::Options opt;
  opt.bytes_moved = 4.0 * 1048576;
  session::run(f.spec, be, *f.db, f.w, f.p, opt);
  ReportQuery q;
  q.kernel = f.spec.name;
  q.workload = f.w.key();
  q.problem = f.p.key();
  ReportData d = load_report_data(*f.db, q);
  d.params = f.spec.params;
  CHECK_THAT(render_html(d), !Catch::Contains("id=\"energy\""));  // nothing observed

  autotune_test::SessionFixture g;
  sim::SyntheticBackend powered;
  powered.simulate_power([](const Config& c) { return 100.0 + 0.5 * static_cast<double>(c.at("BLOCK_SIZE")); });
  session::run(g.spec, powered, *g.db, g.w, g.p, opt);
  ReportData e = load_report_data(*g.db, q);
  e.params = g.spec.params;
  const std::string html = render_html(e);
  CHECK(autotune_test::parse_xml(html).ok);
  CHECK_THAT(html, Catch::Contains("id=\"energy\"") && Catch::Contains("id=\"power-chart\""));
  CHECK_THAT(html, Catch::Contains("BLOCK_SIZE=1024") && Catch::Contains("least energy"));
}
