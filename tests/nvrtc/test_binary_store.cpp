// The launch API's binary store (no GPU needed): the tuning database's cache, the cache directory beside it,
// damaged entries, read-only databases. Also what the API does on a machine without a driver.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "db/database.hpp"
#include "tuner/core/error.hpp"
#include "tuner/cuda/launcher.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/kernels/registry.hpp"
#include "tuner/runtime/binary_store.hpp"
#include "tuner/runtime/launch.hpp"
#include "tuner/specs/specs.hpp"

using namespace autotune;
using runtime_detail::BinaryStore;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    static int counter = 0;
    path = fs::temp_directory_path() /
           ("autotune_binstore_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
};

/// Bytes that pass the ELF check (not a loadable CUBIN: the store does not load images).
std::vector<unsigned char> fake_cubin(unsigned char fill, std::size_t n = 256) {
  std::vector<unsigned char> v(n, fill);
  v[0] = 0x7f, v[1] = 'E', v[2] = 'L', v[3] = 'F';
  return v;
}

}  // namespace

TEST_CASE("binary store: the file format detects truncation and damage", "[nvrtc][runtime]") {
  const auto image = fake_cubin(7);
  const auto file = BinaryStore::encode(image);
  REQUIRE(BinaryStore::decode(file) == image);
  auto cut = file;
  cut.pop_back();
  CHECK_FALSE(BinaryStore::decode(cut));
  auto flipped = file;
  flipped[flipped.size() / 2] ^= 1;
  CHECK_FALSE(BinaryStore::decode(flipped));
  CHECK_FALSE(BinaryStore::decode({}));
  CHECK(BinaryStore::looks_like_cubin(image));
  CHECK_FALSE(BinaryStore::looks_like_cubin(std::vector<unsigned char>(256, 0)));
}

TEST_CASE("binary store: reads what tuning stored, writes into a writable database", "[nvrtc][runtime]") {
  TempDir dir;
  const std::string db_path = (dir.path / "tune.db").string();
  {
    auto db = db::Database::open(db_path);
    db->put_binary({"k_tuned", true, "", fake_cubin(1)});
    db->put_binary({"k_failed", false, "error: no", {}});
    db->put_binary({"k_damaged", true, "", std::vector<unsigned char>(300, 9)});
  }
  BinaryStore store(db_path, "", true);
  std::string note;
  auto hit = store.get("k_tuned", &note);
  REQUIRE(hit);
  CHECK(hit->source == BinarySource::database);
  CHECK(hit->image == fake_cubin(1));
  CHECK_FALSE(store.get("k_failed", &note));  // a cached compile failure is no binary
  CHECK_FALSE(store.get("k_missing", &note));
  CHECK(note.empty());
  CHECK_FALSE(store.get("k_damaged", &note));
  CHECK_THAT(note, Catch::Contains("damaged"));

  note.clear();
  CHECK(store.put("k_new", fake_cubin(2), "log", &note) == BinarySource::database);
  CHECK(store.put("k_damaged", fake_cubin(3), "", &note) == BinarySource::database);  // replaces
  INFO(note);
  BinaryStore again(db_path, "", true);
  CHECK(again.get("k_new", &note)->image == fake_cubin(2));
  CHECK(again.get("k_damaged", &note)->image == fake_cubin(3));
  CHECK_FALSE(fs::exists(db_path + ".cubin"));  // the database took everything
}

TEST_CASE("binary store: a missing or read-only database uses the cache directory beside it", "[nvrtc][runtime]") {
  TempDir dir;
  SECTION("missing database: never created, binaries in <db>.cubin/") {
    const std::string db_path = (dir.path / "absent.db").string();
    BinaryStore store(db_path, "", true);
    CHECK(store.cache_dir() == db_path + ".cubin");
    std::string note;
    CHECK_FALSE(store.get("k1", &note));
    CHECK(store.put("k1", fake_cubin(4), "", &note) == BinarySource::cache_dir);
    CHECK_FALSE(fs::exists(db_path));
    REQUIRE(fs::exists(db_path + ".cubin/k1.cubin"));
    BinaryStore again(db_path, "", true);
    auto hit = again.get("k1", &note);
    REQUIRE(hit);
    CHECK(hit->source == BinarySource::cache_dir);
    CHECK(hit->image == fake_cubin(4));

    // A damaged file is reported, removed and not served.
    {
      std::fstream f(db_path + ".cubin/k1.cubin", std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(40);
      f.put('\x55');
    }
    note.clear();
    CHECK_FALSE(again.get("k1", &note));
    CHECK_THAT(note, Catch::Contains("damaged"));
    CHECK_FALSE(fs::exists(db_path + ".cubin/k1.cubin"));
  }
  SECTION("a cache directory whose parent does not exist is not created") {
    BinaryStore store((dir.path / "no/such/dir/x.db").string(), "", true);
    std::string note;
    CHECK(store.put("k", fake_cubin(5), "", &note) == BinarySource::none);
    CHECK_THAT(note, Catch::Contains("cannot create"));
    CHECK_FALSE(fs::exists(dir.path / "no"));
  }
  SECTION("store_binaries = false writes nothing") {
    const std::string db_path = (dir.path / "ro.db").string();
    BinaryStore store(db_path, "", false);
    std::string note;
    CHECK(store.put("k", fake_cubin(6), "", &note) == BinarySource::none);
    CHECK_FALSE(fs::exists(db_path + ".cubin"));
  }
  SECTION("an explicit cache directory") {
    const std::string cache = (dir.path / "cubins").string();
    BinaryStore store("", cache, true);
    std::string note;
    CHECK(store.put("k", fake_cubin(8), "", &note) == BinarySource::cache_dir);
    CHECK(store.get("k", &note)->source == BinarySource::cache_dir);
  }
}

TEST_CASE("launch API: compile options follow the one recipe's order, no driver is a clear error", "[nvrtc][runtime]") {
  TuningSpec spec = specs::builtin_spec("reduction");
  spec.defines = {{"EXTRA", ""}, {"T", "float"}};
  const auto adapter = kernels::make_adapter(spec);
  const Workload w{"float32", "sum"};
  const Config c({{"BLOCK_SIZE", 256}, {"VARIANT", 7}});
  const cuda::CompileRecipe r = cuda::compile_recipe(*adapter, w, c, "sm_90");
  // The adapter's options, the configuration's macros in strict mode, then the spec's defines.
  std::vector<std::string> want = adapter->compile_options(w);
  REQUIRE_FALSE(want.empty());
  for (const char* o : {"-DBLOCK_SIZE=256", "-DVARIANT=7", "-DAUTOTUNE_STRICT=1", "-DEXTRA", "-DT=float"})
    want.emplace_back(o);
  CHECK(r.options == want);
  CHECK(r.key == cuda::binary_key(spec.source_text, spec.headers, want, "sm_90"));

  // Handles: typed and void pointers, CUdeviceptr-like integers, stream pointers.
  float* fp = reinterpret_cast<float*>(std::uintptr_t{0x1000});
  CHECK(DevicePtr(fp).value() == 0x1000);
  CHECK(DevicePtr(static_cast<const void*>(fp)).value() == 0x1000);
  CHECK(DevicePtr(0x2000ull).value() == 0x2000);
  CHECK(DevicePtr(std::uintptr_t{0x3000}).value() == 0x3000);
  CHECK(DevicePtr(nullptr).value() == 0);
  struct CUstream_like;
  CHECK(Stream(reinterpret_cast<CUstream_like*>(std::uintptr_t{0x2})).handle() == reinterpret_cast<void*>(0x2));
  CHECK(Stream().handle() == nullptr);
  CHECK(std::string(to_string(BinarySource::cache_dir)) == "cache_dir");

  std::string why;
  if (!cuda::driver_available(&why)) {
    CHECK_THROWS_AS(Reduction<float>("whatever.db"), EnvironmentError);
    CHECK_THROWS_WITH(Scan<int>("whatever.db"), Catch::Contains("no NVIDIA driver/GPU found"));
    CHECK_THROWS_AS(DeviceBuffer(16), EnvironmentError);
  }
}
