// T1 files on the GPU (tuner/interop/t1.*): the fixtures of tests/data/t1 tune and verify (a file input with
// expected values from a file, __constant__ memory from a generator; a default-configuration reference), a
// planted wrong configuration is caught, and a data-dependent input given as two files is two problems, each served.
#include <unistd.h>
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "test_support.hpp"
#include "tuner/core/data_file.hpp"
#include "tuner/core/request.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/interop/resolve.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/lookup/lookup.hpp"
#include "tuner/session/session.hpp"

using namespace autotune;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kT1 = autotune_test::data_dir() + "/t1";

std::map<std::string, std::size_t> statuses(db::Database& db, std::int64_t session) {
  db::TrialFilter f;
  f.session_id = session;
  std::map<std::string, std::size_t> out;
  for (const auto& t : db.trials(f)) ++out[to_string(t.m.status)];
  return out;
}

session::Result brute_force(const TuningSpec& spec, db::Database& db, const ProblemKey& p) {
  auto adapter = kernels::make_adapter(spec);
  cuda::TimingOptions to;
  to.samples = 7;
  cuda::CudaBackend backend(adapter, to);
  session::Options opt;
  opt.bytes_moved = adapter->bytes_moved(spec.workloads.front(), p);
  return session::run(spec, backend, db, spec.workloads.front(), p, opt);
}

}  // namespace

TEST_CASE("T1 fixtures tune on the GPU and every configuration verifies", "[gpu][t1]") {
  auto db = db::Database::open(":memory:");
  for (const char* file : {"blur.json", "vector_add.json"}) {
    const TuningSpec spec = interop::resolve_kernel(kT1 + "/" + file, {});
    const ProblemKey p = ProblemRequest{}.problem_key(spec);
    const session::Result r = brute_force(spec, *db, p);
    INFO(file << ": " << r.verification);
    const auto st = statuses(*db, r.session_id);
    for (const auto& [s, n] : st) INFO(s << " " << n);
    CHECK(r.evaluated == r.space_size);
    CHECK(r.failed == 0);
    CHECK(st.count("ok"));
    CHECK_FALSE(r.top.empty());
  }
}

TEST_CASE("T1: a planted wrong configuration is caught against the default configuration's output", "[gpu][t1]") {
  const fs::path dir = fs::temp_directory_path() / ("autotune_t1_gpu_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "planted.cu") << R"(
extern "C" __global__ void planted(const float* a, float* c, int n) {
  const int i = blockIdx.x * block_size_x + threadIdx.x;
  if (i < n) c[i] = (wrong == 1 && i == 12345) ? a[i] + 1.0f : 2.0f * a[i];
}
)";
  std::ofstream(dir / "planted.json") << R"({
  "ConfigurationSpace": {"TuningParameters": [
    {"Name": "block_size_x", "Type": "int", "Values": "[64, 128, 256]"},
    {"Name": "wrong", "Type": "int", "Values": "[0, 1]"}]},
  "KernelSpecification": {"Language": "CUDA", "KernelName": "planted", "KernelFile": "planted.cu",
    "LocalSize": {"X": "block_size_x"}, "GlobalSize": {"X": "1"}, "GridDivX": ["block_size_x"], "ProblemSize": 100000,
    "Arguments": [
      {"Name": "a", "Type": "float", "MemoryType": "Vector", "FillType": "Random", "Size": "ProblemSize"},
      {"Name": "c", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly", "Size": "ProblemSize", "Output": 1},
      {"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 100000}]}})";
  const TuningSpec spec = interop::resolve_kernel((dir / "planted.json").string(), {});
  auto db = db::Database::open(":memory:");
  const session::Result r = brute_force(spec, *db, spec.problem_sizes.front());
  CHECK(r.evaluated == 6);
  const auto st = statuses(*db, r.session_id);
  CHECK(st.at("ok") == 3);
  CHECK(st.at("wrong_result") == 3);
  db::TrialFilter f;
  f.session_id = r.session_id;
  for (const auto& t : db->trials(f))
    if (t.m.status == TrialStatus::wrong_result) CHECK_THAT(t.m.log, Catch::Contains("12345"));

  // An argument list that does not follow the kernel's parameters (one argument too many, a scalar where the
  // kernel takes a pointer) is refused before anything runs, naming the kernel and what was passed.
  json doc = json::parse(std::ifstream(dir / "planted.json"));
  json extra = doc;
  extra["KernelSpecification"]["Arguments"].push_back(
      {{"Name", "m"}, {"Type", "int32"}, {"MemoryType", "Scalar"}, {"FillValue", 7}});
  std::ofstream(dir / "extra.json") << extra.dump();
  const TuningSpec too_many = interop::resolve_kernel((dir / "extra.json").string(), {});
  CHECK_THROWS_WITH(brute_force(too_many, *db, too_many.problem_sizes.front()),
                    Catch::Contains("planted takes 3 parameters, but the launch passes 4 arguments") &&
                        Catch::Contains("4-byte scalar (int32 7)"));
  json swapped = doc;
  std::swap(swapped["KernelSpecification"]["Arguments"][0], swapped["KernelSpecification"]["Arguments"][2]);
  std::ofstream(dir / "swapped.json") << swapped.dump();
  const TuningSpec wrong_kind = interop::resolve_kernel((dir / "swapped.json").string(), {});
  CHECK_THROWS_WITH(brute_force(wrong_kind, *db, wrong_kind.problem_sizes.front()),
                    Catch::Contains("planted's parameter 1 has 8 bytes, but the launch passes a 4-byte scalar "
                                    "(int32 100000)"));
  fs::remove_all(dir);
}

TEST_CASE("T1: one kernel tuned on two input files records two problems and best serves each", "[gpu][t1]") {
  const fs::path dir = fs::temp_directory_path() / ("autotune_t1_data_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::uint64_t n = 1000003;
  for (int k = 0; k < 2; ++k) {
    std::vector<float> a(n);
    std::mt19937 rng(static_cast<unsigned>(k + 1));
    for (float& x : a) x = k == 0 ? static_cast<float>(rng() % 1000) : 0.5f;  // two different data sets
    std::vector<unsigned char> bytes(n * 4);
    std::memcpy(bytes.data(), a.data(), bytes.size());
    write_npy((dir / ("a" + std::to_string(k) + ".npy")).string(), "float32", {n}, bytes);
  }
  auto db = db::Database::open(":memory:");
  std::vector<ProblemKey> problems;
  for (int k = 0; k < 2; ++k) {
    TuningSpec spec = interop::resolve_kernel(kT1 + "/vector_add.json", {});
    ProblemRequest q;
    q.inputs = {"a=" + (dir / ("a" + std::to_string(k) + ".npy")).string()};
    q.apply_inputs(spec);
    const ProblemKey p = q.problem_key(spec);
    problems.push_back(p);
    spec.constraints.push_back(spec.parse_expression("unused_flag == 0 and tile <= 2"));
    const session::Result r = brute_force(spec, *db, p);
    CHECK(r.failed == 0);
    const lookup::Answer a = lookup::best(*db, spec, spec.workloads.front(), cuda::list_devices().front(), p);
    INFO(p.key() << ": " << a.note);
    CHECK(a.match == lookup::Match::exact);
    CHECK(a.problem == p.key());
  }
  CHECK(problems[0].data != problems[1].data);
  CHECK(problems[0].dims == problems[1].dims);
  fs::remove_all(dir);
}
