// Compiled-in export (tuner/lookup/export.*): the generated header, compiled by the system C++ compiler, answers
// every question of a grid as lookup::best and the Lookup class do on the same database (shipped recordings, the
// two merged, boards with fewer threads per block); the JSON tables and their round trip; `autotune export`.
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_support.hpp"
#include "db/database.hpp"
#include "db/merge.hpp"
#include "test_support.hpp"
#include "tuner/core/error.hpp"
#include "tuner/lookup/export.hpp"
#include "tuner/lookup/levels.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
namespace fs = std::filesystem;

namespace {

std::string shipped(const std::string& file) { return autotune_test::data_dir() + "/" + file; }

/// A fresh directory of this test process, removed with its files.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    static std::atomic<int> counter{0};
    path = fs::temp_directory_path() /
           ("autotune_export_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  REQUIRE(out.good());
}

/// Both shipped recordings in one database (an H100 and an H200, both cc 9.0: a same_cc group of two boards),
/// plus two recorded boards without rows whose 128 threads per block make most recorded configurations invalid
/// there (one of cc 9.0, one of cc 9.1).
std::string merged_db(const TempDir& dir) {
  const std::string path = dir.file("merged.db");
  auto out = db::Database::open(path);
  for (const char* f : {"recorded_h100.db", "recorded_h200.db"})
    db::merge_database(*out, *db::Database::open(shipped(f), db::Database::Mode::read_only));
  for (int cc : {90, 91}) {
    DeviceInfo tiny = out->devices().front().info;
    tiny.name = "Tiny Board " + std::to_string(cc);
    tiny.cc = cc;
    tiny.uuid = "tiny-" + std::to_string(cc);
    tiny.max_threads_per_block = 128;
    out->upsert_device(tiny);
  }
  return path;
}

/// The specs of the kernels recorded in db.
std::vector<TuningSpec> recorded_specs(const db::Database& db) {
  std::set<std::string> names;
  for (const auto& s : db.sessions()) names.insert(s.kernel);
  std::vector<TuningSpec> specs;
  for (const auto& n : names) specs.push_back(specs::load_spec(n));
  return specs;
}

struct Question {
  std::size_t db = 0;  // which exported database
  std::string kernel;
  Workload w;
  DeviceInfo device;       // the properties lookup::best checks validity with
  std::string asked_name;  // the name the header is given (as reported, or normalised)
  ProblemKey problem;
  bool other_dims = false;  // dimensions the kernel does not have: no answer
};

/// Recorded problems of `kernel` in db, and sizes around them: between two recorded ones (the log2 midpoint, a
/// tie, and off it), below the smallest, beyond the largest, each dimension scaled alone.
std::vector<ProblemKey> problem_grid(const db::Database& db, const TuningSpec& spec) {
  db::TrialFilter f;
  f.kernel = spec.name;
  std::set<std::string> keys;
  for (const auto& t : db.trials(f)) keys.insert(t.problem);
  std::vector<ProblemKey> recorded;
  for (const auto& k : keys) recorded.push_back(ProblemKey::parse(k));
  std::map<std::string, ProblemKey> out;
  auto add = [&](ProblemKey p) {
    for (auto& [d, v] : p.dims) v = std::max<std::int64_t>(1, v);
    out.emplace(p.key(), p);
  };
  for (const auto& p : recorded) {
    add(p);
    for (const std::string& d : spec.problem_dims) {
      for (double factor : {0.001, 0.25, 0.5, 2.0, 3.0, 16.0, 1000.0}) {
        ProblemKey q = p;
        q.dims[d] = static_cast<std::int64_t>(static_cast<double>(p.dims.at(d)) * factor);
        add(q);
      }
    }
    for (const auto& o : recorded) {
      ProblemKey mid = p, off = p;
      for (const std::string& d : spec.problem_dims) {
        const double g = std::sqrt(static_cast<double>(p.dims.at(d)) * static_cast<double>(o.dims.at(d)));
        mid.dims[d] = static_cast<std::int64_t>(std::llround(g));
        off.dims[d] = static_cast<std::int64_t>(std::llround(g * 1.1));
      }
      add(mid);
      add(off);
    }
  }
  ProblemKey one;
  for (const std::string& d : spec.problem_dims) one.dims[d] = 1;
  add(one);
  std::vector<ProblemKey> v;
  for (auto& [k, p] : out) v.push_back(p);
  return v;
}

/// Devices to ask about: every recorded board (as reported and by its normalised name), another board of the
/// same cc, one of the same major architecture, one of another architecture.
std::vector<std::pair<DeviceInfo, std::string>> device_grid(const db::Database& db) {
  std::map<std::string, DeviceInfo> newest;  // by key: the newest row, whose properties the lookup uses
  for (const auto& d : db.devices()) newest[DeviceKey::of(d.info).str()] = d.info;
  std::vector<std::pair<DeviceInfo, std::string>> out;
  for (const auto& [key, info] : newest) {
    out.push_back({info, info.name});
    out.push_back({info, info.normalised_name()});
  }
  const DeviceInfo base = newest.begin()->second;
  for (const auto& [name, cc] : std::vector<std::pair<std::string, int>>{
           {"NVIDIA H800 PCIe", 90}, {"NVIDIA Next Board", 91}, {"NVIDIA A100-SXM4-80GB", 80}}) {
    DeviceInfo d = base;
    d.name = name;
    d.cc = cc;
    out.push_back({d, name});
  }
  return out;
}

/// main.cpp of the program that asks the generated headers: reads questions (tab-separated) from questions.txt,
/// prints per question "level<TAB>canonical JSON<TAB>labels<TAB>texts", or "none".
std::string program(const std::vector<std::string>& namespaces) {
  std::string s =
      "#include <cstdint>\n#include <fstream>\n#include <iostream>\n#include <sstream>\n#include <string>\n"
      "#include <vector>\n";
  for (std::size_t i = 0; i < namespaces.size(); ++i) s += "#include \"tuned" + std::to_string(i) + ".hpp\"\n";
  s += R"(
template <class Config>
void print(const Config* c, int level) {
  if (c == nullptr) {
    std::cout << "none " << level << "\n";
    return;
  }
  std::string json = "{", labels, texts;
  for (int i = 0; i < c->size; ++i) {
    json += std::string(i ? "," : "") + "\"" + c->values[i].name + "\":" + std::to_string(c->values[i].value);
    labels += std::string(i ? "|" : "") + c->values[i].label;
    texts += std::string(i ? "|" : "") + c->values[i].text;
  }
  std::cout << level << "\t" << json << "}\t" << labels << "\t" << texts << "\n";
}

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::ifstream in(argv[1]);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, '\t')) f.push_back(field);
    if (f.size() == 6) f.push_back("");  // no data tag
    if (f.size() != 7) return 3;
    const int db = std::stoi(f[0]);
    const int cc = std::stoi(f[4]);
    std::vector<std::int64_t> dims;
    std::stringstream ds(f[5]);
    for (long long v; ds >> v;) dims.push_back(v);
    int level = -2;
)";
  for (std::size_t i = 0; i < namespaces.size(); ++i)
    s += "    if (db == " + std::to_string(i) + ") {\n      const auto* c = " + namespaces[i] +
         "::select(f[1], f[2], f[3], cc, dims.data(), static_cast<int>(dims.size()), &level, f[6]);\n"
         "      print(c, level);\n    }\n";
  s += "  }\n  return 0;\n}\n";
  return s;
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t got;
  while ((got = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, got);
  const int st = pclose(p);
  INFO(cmd << "\n" << out.substr(0, 4000));
  REQUIRE(st == 0);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, sep)) out.push_back(x);
  if (!s.empty() && s.back() == sep) out.push_back("");
  return out;
}

}  // namespace

TEST_CASE("export: the compiled header answers every question as lookup::best on the same database", "[cpu][export]") {
  TempDir dir("header");
  const std::vector<std::string> dbs = {shipped("recorded_h100.db"), shipped("recorded_h200.db"), merged_db(dir)};
  std::vector<std::string> namespaces;
  std::vector<Question> questions;
  for (std::size_t i = 0; i < dbs.size(); ++i) {
    auto db = db::Database::open(dbs[i], db::Database::Mode::read_only);
    const std::vector<TuningSpec> specs = recorded_specs(*db);
    REQUIRE(!specs.empty());
    namespaces.push_back(i == 1 ? "tuned::h200" : "tuned" + std::to_string(i));
    write(dir.file("tuned" + std::to_string(i) + ".hpp"),
          lookup::to_header(lookup::export_tables(*db, dbs[i], specs), namespaces.back()));
    const auto devices = device_grid(*db);
    for (const TuningSpec& spec : specs) {
      db::TrialFilter f;
      f.kernel = spec.name;
      std::set<std::string> recorded_workloads;
      for (const auto& t : db->trials(f)) recorded_workloads.insert(t.workload);
      const std::vector<ProblemKey> grid = problem_grid(*db, spec);
      for (const Workload& w : spec.workloads) {
        // The whole grid where something is recorded; elsewhere (spec defaults) a few sizes.
        const std::size_t n = recorded_workloads.count(w.key()) ? grid.size() : 2;
        for (std::size_t pi = 0; pi < n; ++pi)
          for (const auto& [info, asked] : devices)
            questions.push_back({i, spec.name, w, info, asked, grid[pi], false});
      }
      ProblemKey other;  // one dimension too many
      for (const std::string& d : spec.problem_dims) other.dims[d] = 4096;
      other.dims["zz_extra"] = 2;
      questions.push_back(
          {i, spec.name, spec.workloads.front(), devices.front().first, devices.front().second, other, true});
    }
  }
  std::string qtext;
  for (const Question& q : questions) {
    const TuningSpec spec = specs::load_spec(q.kernel);
    std::string dims;
    for (const std::string& d : spec.problem_dims) dims += std::to_string(q.problem.dims.at(d)) + " ";
    if (q.other_dims) dims += "2";
    qtext += std::to_string(q.db) + "\t" + q.kernel + "\t" + q.w.key() + "\t" + q.asked_name + "\t" +
             std::to_string(q.device.cc) + "\t" + dims + "\t" + q.problem.data + "\n";
  }
  write(dir.file("questions.txt"), qtext);
  write(dir.file("main.cpp"), program(namespaces));
  // The system compiler CMake builds with, warnings as errors: the header is self-contained C++17.
  run_capture(std::string(AUTOTUNE_CXX_COMPILER) + " -std=c++17 -O1 -Wall -Wextra -Wconversion -Wshadow -Werror -I" +
              dir.path.string() + " " + dir.file("main.cpp") + " -o " + dir.file("ask"));
  const std::vector<std::string> lines = split(run_capture(dir.file("ask") + " " + dir.file("questions.txt")), '\n');
  REQUIRE(lines.size() >= questions.size());

  std::map<int, int> levels_seen;
  std::vector<std::unique_ptr<db::Database>> open;
  std::vector<std::unique_ptr<Lookup>> lookups;
  Lookup::Options silent;
  silent.warn = [](const std::string&) {};
  for (const auto& path : dbs) {
    open.push_back(db::Database::open(path, db::Database::Mode::read_only));
    lookups.push_back(std::make_unique<Lookup>(path, silent));
  }
  std::map<std::string, TuningSpec> spec_of;
  // lookup::best reads the rows on every call: every question goes through its steps with the rows read once
  // (levels.hpp, as lookup::best does them), every 10th through lookup::best itself, every one through the
  // cached Lookup (by DeviceKey, as the header is asked).
  std::map<std::string, std::shared_ptr<lookup::detail::Prepared>> prepared;
  std::size_t compared = 0;
  std::size_t tiny_differs = 0;  // questions where a recorded board's properties rule out what others get
  for (std::size_t i = 0; i < questions.size(); ++i) {
    const Question& q = questions[i];
    if (!spec_of.count(q.kernel)) spec_of.emplace(q.kernel, specs::load_spec(q.kernel));
    const TuningSpec& spec = spec_of.at(q.kernel);
    INFO("db " << dbs[q.db] << ": " << q.kernel << " " << q.w.key() << " on " << q.asked_name << " (cc " << q.device.cc
               << ") at " << q.problem.key() << ": header says " << lines[i]);
    if (q.other_dims) {
      CHECK(lines[i] == "none -1");
      CHECK_THROWS_AS(lookup::best(*open[q.db], spec, q.w, q.device, q.problem), UsageError);
      continue;
    }
    const lookup::detail::PreparedOf prepared_of = [&](const Workload& w) {
      auto& p = prepared[std::to_string(q.db) + " " + q.kernel + " " + w.key()];
      if (!p) p = lookup::detail::prepare(*open[q.db], spec, w, Objective::time);
      return p;
    };
    const auto prep = prepared_of(q.w);
    const DeviceKey key = DeviceKey::of(q.device);
    const lookup::Answer a =
        lookup::detail::answer(prep.get(), {spec, q.w, key, &q.device, q.problem, &prepared_of}, "");
    if (i % 10 == 0) {
      const lookup::Answer one_shot = lookup::best(*open[q.db], spec, q.w, q.device, q.problem);
      CHECK(one_shot.match == a.match);
      CHECK(one_shot.config == a.config);
    }
    const auto cached = lookups[q.db]->best(spec, q.w, DeviceKey(q.asked_name, q.device.cc), q.problem);
    const std::vector<std::string> f = split(lines[i], '\t');
    REQUIRE(f.size() == 4);
    CHECK(f[0] == std::to_string(lookup::level(a.match)));
    CHECK(f[1] == a.config.to_json());
    CHECK(f[0] == std::to_string(lookup::level(cached->match)));
    CHECK(f[1] == cached->config.to_json());
    std::string labels, texts;
    for (const auto& [name, v] : a.config.values()) {
      const Param* p = spec.find_param(name);
      REQUIRE(p != nullptr);
      labels += (labels.empty() ? "" : "|") + p->label(v);
      texts += (texts.empty() ? "" : "|") + p->macro(v);
    }
    CHECK(f[2] == labels);
    CHECK(f[3] == texts);
    ++levels_seen[lookup::level(a.match)];
    ++compared;
    if (q.device.name.rfind("Tiny Board", 0) == 0) {  // the boards with 128 threads per block
      const DeviceKey unknown("Unrecorded Board", q.device.cc);
      if (lookup::detail::answer(prep.get(), {spec, q.w, unknown, nullptr, q.problem, &prepared_of}, "").config !=
          a.config)
        ++tiny_differs;
    }
  }
  // The grid reaches every level, and a cell's answer differs from the spec default somewhere.
  CHECK(compared > 1000);
  CHECK(tiny_differs > 0);
  for (int level = 0; level <= 5; ++level) {
    INFO("level " << level);
    CHECK(levels_seen[level] > 0);
  }
}

TEST_CASE("export: tables hold each board's cells, the groups, every workload and a bad namespace is refused",
          "[cpu][export]") {
  auto db = db::Database::open(shipped("recorded_h200.db"), db::Database::Mode::read_only);
  const TuningSpec reduction = specs::load_spec("reduction");
  const lookup::ExportKernel k = lookup::export_kernel(*db, reduction);
  CHECK(k.name == "reduction");
  CHECK(k.dims == reduction.problem_dims);
  REQUIRE(k.workloads.size() == reduction.workloads.size());
  CHECK(k.configs.at(k.spec_default) == reduction.default_config());
  const lookup::ExportWorkload* f32 = nullptr;
  for (const auto& w : k.workloads) {
    if (w.workload.key() == "float32/sum")
      f32 = &w;
    else
      CHECK(w.boards.front().cells.empty());  // recorded for float32/sum only
  }
  REQUIRE(f32 != nullptr);
  REQUIRE(f32->boards.size() == 1);
  const lookup::ExportBoard& h200 = f32->boards.front();
  CHECK(h200.key == DeviceKey("NVIDIA H200", 90));
  CHECK(h200.name == "NVIDIA H200");
  REQUIRE(h200.cells.size() == 1);
  const lookup::Answer exact =
      lookup::best(*db, reduction, Workload{"float32", "sum"}, db->devices().front().info, h200.cells[0].problem);
  CHECK(exact.match == lookup::Match::exact);
  CHECK(k.configs.at(h200.cells[0].config) == exact.config);
  CHECK(h200.same_cc.empty());  // no other board
  CHECK_FALSE(h200.same_arch.has_value());
  REQUIRE(f32->cc_groups.size() == 1);
  CHECK(f32->cc_groups[0].cc == 90);
  REQUIRE(f32->arch_groups.size() == 1);
  CHECK(f32->arch_groups[0].major == 9);

  lookup::ExportTables t;
  t.kernels.push_back(k);
  CHECK_THROWS_WITH(lookup::to_header(t, "1bad"), Catch::Contains("not a C++ namespace name"));
  CHECK_THROWS_AS(lookup::to_header(t, "a::"), UsageError);
  CHECK_NOTHROW(lookup::to_header(t, "a::b_2"));
}

TEST_CASE("export: a constraint on the problem size cannot be compiled in", "[cpu][export]") {
  TuningSpec s = TuningSpec::from_json_text(R"J({
    "name": "sized_kernel", "family": "synthetic", "source": "k.cu", "kernels": ["k"],
    "parameters": [{"name": "A", "values": [1, 2, 4], "default": 1}],
    "constraints": ["A * 1024 <= n"],
    "problem": {"dims": ["n"]}, "workloads": ["float32/sum"]})J",
                                            ".", false);
  CHECK_THAT(lookup::export_obstacle(s), Catch::Contains("A * 1024 <= n") && Catch::Contains("'n'"));
  auto db = db::Database::open(shipped("recorded_h200.db"), db::Database::Mode::read_only);
  CHECK_THROWS_WITH(lookup::export_kernel(*db, s), Catch::Contains("cannot be exported"));
  CHECK(lookup::export_obstacle(specs::load_spec("transpose")).empty());
}

TEST_CASE("export: JSON tables: fields, round trip, errors that name the field", "[cpu][export]") {
  auto db = db::Database::open(shipped("recorded_h100.db"), db::Database::Mode::read_only);
  const lookup::ExportTables t = lookup::export_tables(*db, "h100.db", recorded_specs(*db), Objective::time);
  const std::string text = lookup::to_json(t);
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j.at("format") == "autotune-tuned-tables");
  CHECK(j.at("version") == 2);
  CHECK(j.at("objective") == "time");
  CHECK(j.at("database") == "h100.db");
  REQUIRE(j.at("kernels").size() == t.kernels.size());
  std::set<std::string> names;
  std::map<std::string, int> fills_seen;
  for (const auto& jk : j.at("kernels")) {
    names.insert(jk.at("name").get<std::string>());
    const std::size_t n = jk.at("configs").size();
    CHECK(jk.at("spec_default").get<std::size_t>() < n);
    CHECK(!jk.at("dims").empty());
    for (const auto& p : jk.at("params")) {
      CHECK(p.contains("kind"));
      CHECK(p.at("labels").is_object());
      CHECK(p.at("texts").is_object());
    }
    for (const auto& jw : jk.at("workloads")) {
      for (const auto& b : jw.at("boards")) {
        CHECK(b.at("name") == "nvidia_h100_80gb_hbm3");
        CHECK(b.at("device") == "NVIDIA H100 80GB HBM3");
        CHECK(b.at("cc") == 90);
        for (const char* list : {"cells", "same_cc"})
          for (const auto& e : b.at(list)) {
            CHECK_NOTHROW(ProblemKey::parse(e.at("problem").get<std::string>()));
            CHECK(e.at("config").get<std::size_t>() < n);
            if (!e.contains("fills")) continue;
            // The fill rule's thresholds: entries of the kernels with "blocks" only, sizes decreasing from the
            // entry's configuration (at most the entry's size) on.
            ++fills_seen[jk.at("name").get<std::string>()];
            const auto& fs = e.at("fills");
            REQUIRE(!fs.empty());
            CHECK(fs[0].at("config") == e.at("config"));
            CHECK(fs[0].at("from").get<std::int64_t>() <=
                  ProblemKey::parse(e.at("problem").get<std::string>()).at("n"));
            for (std::size_t f = 1; f < fs.size(); ++f)
              CHECK(fs[f].at("from").get<std::int64_t>() < fs[f - 1].at("from").get<std::int64_t>());
          }
        CHECK(b.at("same_arch").is_null());  // no other board
      }
      for (const auto& g : jw.at("cc_groups")) CHECK(g.at("entries").size() > 0);
      for (const auto& a : jw.at("arch_groups")) CHECK(a.at("config").get<std::size_t>() < n);
    }
  }
  CHECK(names == std::set<std::string>{"compaction", "reduction", "scan", "transpose"});
  // The recorded best tiles of scan and compaction fill the H100's SMs at their sizes: every cell has fills.
  CHECK(fills_seen.count("scan") == 1);
  CHECK(fills_seen.count("compaction") == 1);
  CHECK(fills_seen.count("reduction") == 0);
  CHECK(fills_seen.count("transpose") == 0);

  // Round trip: what is read back writes the same text and compiles to the same header.
  const lookup::ExportTables back = lookup::tables_from_json(text);
  CHECK(lookup::to_json(back) == text);
  CHECK(lookup::to_header(back) == lookup::to_header(t));

  nlohmann::json bad = j;
  bad["kernels"][0]["workloads"][0]["boards"][0].erase("cells");
  CHECK_THROWS_WITH(lookup::tables_from_json(bad.dump()),
                    Catch::Contains("missing /kernels/0/workloads/0/boards/0/cells"));
  bad = j;
  bad["kernels"][1]["spec_default"] = 100000;
  CHECK_THROWS_WITH(lookup::tables_from_json(bad.dump()), Catch::Contains("/kernels/1/spec_default"));
  bad = j;
  bad["version"] = 3;
  CHECK_THROWS_WITH(lookup::tables_from_json(bad.dump()), Catch::Contains("/version 3 is not 1 or 2"));
  // Version 1 (before the fill rule) still reads.
  bad = j;
  bad["version"] = 1;
  CHECK_NOTHROW(lookup::tables_from_json(bad.dump()));
  bad = j;
  bool broken = false;
  for (auto& jw : bad["kernels"][0]["workloads"])
    for (auto& b : jw["boards"])
      for (auto& e : b["cells"])
        if (!broken && e.contains("fills") && e["fills"].size() >= 2) {
          e["fills"][1]["from"] = e["fills"][0]["from"];
          broken = true;
        }
  if (broken) CHECK_THROWS_WITH(lookup::tables_from_json(bad.dump()), Catch::Contains("is not a size below"));
  CHECK_THROWS_AS(lookup::tables_from_json("{"), UsageError);
}

TEST_CASE("export: `autotune export --format header|json`, t4 by default, and its errors", "[cpu][export][cli]") {
  using autotune_test::run_cli;
  TempDir dir("cli");
  const std::string h200 = shipped("recorded_h200.db");

  // The header of the CLI is the library's, for the kernels named (repeatable) or every recorded one.
  const std::string out = dir.file("tuned.hpp");
  auto r = run_cli("export --format header --kernel transpose --kernel reduction --namespace app::tuned --db " + h200 +
                   " -o " + out);
  INFO(r.out);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("exported 2 kernels"));
  {
    auto db = db::Database::open(h200, db::Database::Mode::read_only);
    const auto t = lookup::export_tables(*db, h200, {specs::load_spec("transpose"), specs::load_spec("reduction")});
    CHECK(autotune_test::slurp(out) == lookup::to_header(t, "app::tuned"));
    r = run_cli("export --format json --objective time --db " + h200);
    REQUIRE(r.code == 0);
    CHECK(r.out == lookup::to_json(lookup::export_tables(*db, h200, recorded_specs(*db))));
  }
  // --workload keeps one workload.
  r = run_cli("export --format json --kernel reduction --workload float64/sum --db " + h200);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.at("kernels").at(0).at("workloads").size() == 1);
  CHECK(j.at("kernels").at(0).at("workloads").at(0).at("workload") == "float64/sum");

  // T4 stays the default format and output.
  const auto t4_default = run_cli("export --kernel transpose --db " + h200);
  const auto t4 = run_cli("export --format t4 --kernel transpose --db " + h200);
  CHECK(t4_default.code == 0);
  CHECK(t4_default.out == t4.out);
  CHECK_THAT(t4.out, Catch::Contains("\"schema_version\""));
  CHECK(run_cli("export --format t4 --kernel transpose --kernel reduction --db " + h200).code == 2);

  // Errors: unknown kernel, filters of t4 only, bad namespace, unwritable output (2); empty or missing
  // database (4).
  r = run_cli("export --format header --kernel no_such_kernel --db " + h200);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("no_such_kernel"));
  r = run_cli("export --format header --device H200 --db " + h200);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("--device filters --format t4 only"));
  CHECK(run_cli("export --format header --namespace 9x --db " + h200 + " -o " + dir.file("x.hpp")).code == 2);
  r = run_cli("export --format header --db " + h200 + " -o " + dir.file("no/such/dir/x.hpp"));
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Catch::Contains("cannot write"));
  const std::string empty = dir.file("empty.db");
  db::Database::open(empty);  // a valid database with nothing recorded
  r = run_cli("export --format header --db " + empty);
  CHECK(r.code == 4);
  CHECK_THAT(r.out, Catch::Contains("nothing is recorded"));
  CHECK(run_cli("export --format json --db " + dir.file("missing.db")).code == 4);
}
