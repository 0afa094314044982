// tuner/report/html_report.cpp: the report's data selection, its sections (well-formed XHTML with inline
// SVG and no scripts), parameter effects, failure grouping; and a real-browser check: headless Chromium
// (Debian's `chromium`, installed by scripts/deps.sh) renders the page to a PNG that must be non-blank, and
// its DOM dump must contain the expected sections.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <stb/stb_image.h>

#include "tests/test_support.hpp"
#include "tests/xml_check.hpp"
#include "tuner/core/error.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/specs/specs.hpp"
#include "tuner/report/html_report.hpp"

using namespace autotune;
using namespace autotune::report;

namespace {

std::string tmp_dir() {
  std::string d = "/tmp/autotune_report_test_" + std::to_string(::getpid());
  ::mkdir(d.c_str(), 0755);
  return d;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Fixture: the recorded H200 reduction trials copied into `db`, with some of them turned into failures
/// (VARIANT=0 at 1024 threads: launch_error; VARIANT=1 at 1024 threads: wrong_result; KAHAN=1 with
/// BLOCKS_PER_SM=32: compile_error). Returns the session id.
std::int64_t make_fixture(db::Database& db) {
  auto rec = db::Database::open(autotune_test::data_dir() + "/recorded_h200.db", db::Database::Mode::read_only);
  db::DeviceRow dev = rec->devices().front();
  std::int64_t dev_id = db.upsert_device(dev.info);
  db.set_copy_bandwidth(dev_id, dev.copy_gbps);
  db::SessionRow s = *rec->session(1);
  s.device_id = dev_id;
  std::int64_t sid = db.begin_session(s);
  db::TrialFilter f;
  f.kernel = "reduction";
  auto rows = rec->trials(f);
  db.transaction([&] {
    for (auto t : rows) {
      Config c = Config::from_json(t.config_json);
      t.session_id = sid;
      t.device_id = dev_id;
      auto fail = [&](TrialStatus st, const std::string& log) {
        t.m.status = st;
        t.m.median_ns = t.m.min_ns = 0;
        t.gbps = 0;
        t.m.log = log;
      };
      if (c.at("VARIANT") == 0 && c.at("BLOCK_SIZE") == 1024) fail(TrialStatus::launch_error, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources requested for launch)");
      if (c.at("VARIANT") == 1 && c.at("BLOCK_SIZE") == 1024) fail(TrialStatus::wrong_result, "out[0] = 1.5 but expected 2.5 <tolerance 0.0078>");
      if (c.at("KAHAN") == 1 && c.at("BLOCKS_PER_SM") == 32) fail(TrialStatus::compile_error, "reduction.cu(12): error: identifier \"x\" is undefined\nsecond line");
      db.insert_trial(t);
    }
  });
  db.finish_session(sid, "finished");
  return sid;
}

ReportData fixture_report(db::Database& db) {
  TuningSpec spec = specs::builtin_spec("reduction");
  ReportQuery q;
  q.kernel = "reduction";
  q.workload = "float32/sum";
  q.problem = "n=67108864";
  q.sources = {spec.source_hash()};
  ReportData d = load_report_data(db, q);
  d.params = spec.params;
  d.generated_at = "2026-11-22T00:00:00Z";
  return d;
}

// ---- PNG decoding by stb_image (Debian's libstb-dev) ----------------------------------------------

struct Image {
  std::uint32_t width = 0, height = 0;
  int channels = 0;
  std::vector<unsigned char> pixels;  // rows of width * channels bytes
  std::string error;
};

/// The PNG's pixels as 8-bit RGB rows.
Image decode_png(const std::string& file) {
  Image img;
  int w = 0, h = 0, in_file = 0;
  unsigned char* px = stbi_load_from_memory(reinterpret_cast<const stbi_uc*>(file.data()), static_cast<int>(file.size()),
                                            &w, &h, &in_file, 3);
  if (px == nullptr) {
    const char* why = stbi_failure_reason();
    img.error = std::string("not a decodable PNG: ") + (why != nullptr ? why : "unknown reason");
    return img;
  }
  img.width = static_cast<std::uint32_t>(w);
  img.height = static_cast<std::uint32_t>(h);
  img.channels = 3;
  img.pixels.assign(px, px + static_cast<std::size_t>(w) * static_cast<std::size_t>(h) * 3);
  stbi_image_free(px);
  return img;
}

std::string find_chromium() {
  const char* env = std::getenv("AUTOTUNE_CHROMIUM");
  if (env && *env) return env;
  for (const char* c : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(c, X_OK) == 0) return c;
  return {};
}

}  // namespace

TEST_CASE("report: data selection by kernel and by session", "[cpu][report]") {
  auto db = db::Database::open(":memory:");
  std::int64_t sid = make_fixture(*db);
  ReportData d = fixture_report(*db);
  CHECK(d.trials.size() == 2436);
  CHECK(d.device.info.name == "NVIDIA H200");
  CHECK(d.device.copy_gbps > 4000);
  REQUIRE(d.sessions.size() == 1);
  CHECK(d.sessions.front().id == sid);
  CHECK(d.scope == "all recorded trials");

  ReportQuery q;
  q.session_id = sid;
  ReportData ds = load_report_data(*db, q);
  CHECK(ds.trials.size() == 2436);
  CHECK(ds.kernel == "reduction");
  CHECK(ds.scope == "session " + std::to_string(sid));

  // A session that measured nothing new shows the recorded trials of its key, and says so.
  db::SessionRow again = *db->session(sid);
  std::int64_t sid2 = db->begin_session(again);
  db->finish_session(sid2, "finished");
  q.session_id = sid2;
  ReportData d2 = load_report_data(*db, q);
  CHECK(d2.trials.size() == 2436);
  REQUIRE(d2.notes.size() == 1);
  CHECK_THAT(d2.notes.front(), Catch::Contains("measured nothing new"));

  q.session_id = 999;
  CHECK_THROWS_WITH(load_report_data(*db, q), Catch::Contains("session 999 does not exist"));
  ReportQuery none;
  none.kernel = "reduction";
  none.workload = "float32/sum";
  none.problem = "n=5";
  CHECK_THROWS_WITH(load_report_data(*db, none), Catch::Contains("no trials of reduction float32/sum n=5"));
  none.problem = "n=67108864";
  none.device_name = "Tesla K80";
  CHECK_THROWS_WITH(load_report_data(*db, none), Catch::Contains("NVIDIA H200"));
}

TEST_CASE("report: parameter effect is best and median GB/s per value", "[cpu][report]") {
  std::vector<db::TrialRow> rows;
  auto add = [&](Value a, double gbps, bool ok) {
    db::TrialRow t;
    t.config_json = Config({{"A", a}, {"B", 1}}).to_json();
    t.m.status = ok ? TrialStatus::ok : TrialStatus::compile_error;
    t.m.median_ns = ok ? 100 : 0;
    t.gbps = ok ? gbps : 0;
    rows.push_back(t);
  };
  add(2, 10, true);
  add(2, 30, true);
  add(2, 20, true);
  add(1, 5, true);
  add(1, 7, true);
  add(4, 0, false);
  Param p;
  p.name = "A";
  p.values = {4, 2, 1};
  p.labels = {{4, "four"}};
  auto eff = parameter_effect(rows, "A", &p);
  REQUIRE(eff.size() == 3);
  CHECK(eff[0].value == 4);  // spec order
  CHECK(eff[0].label == "four");
  CHECK(eff[0].ok == 0);
  CHECK(eff[0].failed == 1);
  CHECK(eff[1].best_gbps == 30);
  CHECK(eff[1].median_gbps == 20);
  CHECK(eff[2].median_gbps == 6);
  auto plain = parameter_effect(rows, "A", nullptr);
  REQUIRE(plain.size() == 3);
  CHECK(plain[0].value == 1);  // ascending without a spec
  CHECK(parameter_effect(rows, "C", nullptr).empty());
}

TEST_CASE("report: the page is self-contained XHTML with every section", "[cpu][report]") {
  auto db = db::Database::open(":memory:");
  make_fixture(*db);
  ReportData d = fixture_report(*db);
  std::string html = render_html(d);
  auto doc = autotune_test::parse_xml(html);
  INFO(doc.error);
  REQUIRE(doc.ok);
  CHECK(doc.elements.front().name == "html");
  // No scripts, no external resources.
  CHECK(doc.count("script") == 0);
  CHECK(doc.count("link") == 0);
  CHECK(doc.count("img") == 0);
  for (std::size_t pos = html.find("http://"); pos != std::string::npos; pos = html.find("http://", pos + 7))
    CHECK(html.compare(pos, 18, "http://www.w3.org/") == 0);  // XML namespaces only
  CHECK(html.find("https://") == std::string::npos);
  // Sections.
  for (const char* id : {"title", "summary", "best", "best-table", "distribution", "time-histogram", "parameters",
                         "failures", "failures-table", "provenance", "device-table", "sessions-table"}) {
    INFO(id);
    CHECK(doc.by_id(id) != nullptr);
  }
  for (const auto& p : d.params) {
    INFO(p.name);
    CHECK(doc.by_id("param-" + p.name) != nullptr);
  }
  CHECK(doc.count("svg") == 1 + d.params.size());
  // Best table: the recorded optimum first, 10 rows + header.
  std::size_t rows = 0;
  for (std::size_t i = 0; i < doc.elements.size(); ++i)
    if (doc.elements[i].name == "tr" && doc.elements[i].parent >= 0 &&
        doc.elements[static_cast<std::size_t>(doc.elements[i].parent)].attrs.count("id") &&
        doc.elements[static_cast<std::size_t>(doc.elements[i].parent)].attrs.at("id") == "best-table")
      ++rows;
  CHECK(rows == 11);
  CHECK(html.find("3693.8") != std::string::npos);
  CHECK(html.find("VARIANT=grid_stride BLOCK_SIZE=512") != std::string::npos);
  // Failures grouped by status with counts and an escaped first log line.
  CHECK(html.find(">launch_error<") != std::string::npos);
  CHECK(html.find(">wrong_result<") != std::string::npos);
  CHECK(html.find(">compile_error<") != std::string::npos);
  CHECK(html.find("&lt;tolerance 0.0078&gt;") != std::string::npos);
  CHECK(html.find("second line") == std::string::npos);
  // Provenance.
  CHECK(html.find("08312fd4306387d9774a3d1c5cd07dfc") != std::string::npos);
  CHECK(html.find("events;warmup=3") != std::string::npos);
  CHECK(html.find("brute_force") != std::string::npos);
  CHECK(html.find("2026-11-22T00:00:00Z") != std::string::npos);
  // Deterministic.
  CHECK(render_html(d) == html);
}

TEST_CASE("report: headless Chromium renders the page (non-blank PNG, sections in the DOM)", "[cpu][report][chromium]") {
  const std::string chromium = find_chromium();
  if (chromium.empty()) {
    const char* skip = std::getenv("AUTOTUNE_SKIP_BROWSER_TEST");
    if (skip && std::string(skip) == "1") {
      WARN("chromium not found; browser check skipped (AUTOTUNE_SKIP_BROWSER_TEST=1)");
      return;
    }
    FAIL("chromium is not installed: run scripts/deps.sh (Debian package `chromium`), point AUTOTUNE_CHROMIUM at a "
         "binary, or set AUTOTUNE_SKIP_BROWSER_TEST=1");
  }
  const std::string dir = tmp_dir();
  const std::string html_path = dir + "/report.html";
  const std::string png = dir + "/report.png";
  const std::string dom = dir + "/dom.html";
  {
    auto db = db::Database::open(":memory:");
    make_fixture(*db);
    std::ofstream(html_path) << render_html(fixture_report(*db));
  }
  // Offline flags: no network, no first-run, no component updates; a private profile directory.
  const std::string flags = " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                            "--disable-background-networking --disable-component-update --disable-sync "
                            "--user-data-dir=" + dir + "/profile ";
  std::string shot = "timeout 120 " + chromium + flags + "--screenshot=" + png + " --window-size=1200,2000 file://" +
                     html_path + " > " + dir + "/shot.log 2>&1";
  int rc = std::system(shot.c_str());
  INFO("chromium log: " << slurp(dir + "/shot.log"));
  REQUIRE(rc == 0);
  std::string dump = "timeout 120 " + chromium + flags + "--dump-dom file://" + html_path + " > " + dom + " 2> " + dir +
                     "/dom.log";
  REQUIRE(std::system(dump.c_str()) == 0);

  // The DOM as the browser built it: every section and chart is there.
  std::string d = slurp(dom);
  for (const char* id : {"best-table", "time-histogram", "param-VARIANT", "param-BLOCK_SIZE", "failures-table",
                         "device-table", "sessions-table"}) {
    INFO(id);
    CHECK(d.find(std::string("id=\"") + id + "\"") != std::string::npos);
  }
  std::size_t svgs = 0;
  for (std::size_t pos = d.find("<svg"); pos != std::string::npos; pos = d.find("<svg", pos + 4)) ++svgs;
  CHECK(svgs == 8);  // histogram + 7 parameters

  // The screenshot: the requested size, and clearly not blank (many colours, a good share of non-white pixels).
  Image img = decode_png(slurp(png));
  INFO(img.error);
  REQUIRE(img.error.empty());
  CHECK(img.width == 1200);
  CHECK(img.height == 2000);
  std::set<std::uint32_t> colours;
  std::size_t non_white = 0, pixels = static_cast<std::size_t>(img.width) * img.height;
  for (std::size_t i = 0; i < pixels; ++i) {
    const unsigned char* p = &img.pixels[i * img.channels];
    colours.insert((std::uint32_t{p[0]} << 16) | (std::uint32_t{p[1]} << 8) | p[2]);
    if (p[0] < 235 || p[1] < 235 || p[2] < 235) ++non_white;
  }
  CHECK(colours.size() >= 64);
  CHECK(non_white > pixels / 50);
  // The top of the page (title, cards, best table) is drawn: dark text pixels in the first 400 rows.
  std::size_t dark_top = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(img.width) * 400; ++i) {
    const unsigned char* p = &img.pixels[i * img.channels];
    if (p[0] < 80 && p[1] < 80 && p[2] < 80) ++dark_top;
  }
  CHECK(dark_top > 2000);
  std::system(("rm -rf " + dir).c_str());
}
