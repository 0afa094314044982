// Identity of a device, a workload and a problem instance.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "tuner/core/space.hpp"

namespace autotune {

/// What the tuner knows about a GPU. Identity for lookups is (normalised name, cc); the rest is provenance
/// or constraint input.
struct DeviceInfo {
  std::string name;                 // as reported by the driver, e.g. "NVIDIA H200"
  int cc = 0;                       // compute capability major*10+minor, e.g. 90
  int sm_count = 0;
  int max_threads_per_block = 1024;
  int max_shared_memory_per_block = 49152;        // bytes, without opt-in
  int max_shared_memory_per_block_optin = 49152;  // bytes, with cuFuncSetAttribute opt-in
  int warp_size = 32;
  int l2_bytes = 0;
  std::uint64_t total_memory = 0;  // bytes
  int driver_version = 0;          // e.g. 13000
  std::string uuid;                // hex
  int clock_khz = 0;
  int memory_clock_khz = 0;
  int memory_bus_width = 0;

  /// Lower-case name with runs of non-alphanumerics collapsed to '_', e.g. "nvidia_h200".
  std::string normalised_name() const;
  /// The one list of the fields above: calls f(field_name, member) for each, in declaration order (name,
  /// then cc, ...). The GPU worker's messages, MPI's JSON, the database's devices columns and T4's device
  /// objects are written and read through it, so a new field needs one line here, and a database migration
  /// that adds its column (db/database.cpp). D is DeviceInfo or const DeviceInfo; members are std::string, int
  /// or std::uint64_t.
  template <typename D, typename F>
  static void for_each_field(D& d, F&& f) {
    f("name", d.name);
    f("cc", d.cc);
    f("sm_count", d.sm_count);
    f("max_threads_per_block", d.max_threads_per_block);
    f("max_shared_memory_per_block", d.max_shared_memory_per_block);
    f("max_shared_memory_per_block_optin", d.max_shared_memory_per_block_optin);
    f("warp_size", d.warp_size);
    f("l2_bytes", d.l2_bytes);
    f("total_memory", d.total_memory);
    f("driver_version", d.driver_version);
    f("uuid", d.uuid);
    f("clock_khz", d.clock_khz);
    f("memory_clock_khz", d.memory_clock_khz);
    f("memory_bus_width", d.memory_bus_width);
  }
  /// sm_count, max_threads_per_block, max_shared_memory_per_block, warp_size, cc.
  Bindings bindings() const;
};

/// Appends name lower-cased with runs of non-alphanumerics collapsed to '_' (DeviceInfo::normalised_name())
/// to out, without a temporary string.
void append_normalised_name(std::string& out, const std::string& name);

/// Identity of a GPU for lookups and warm starts: normalised board name and compute capability
/// (major*10 + minor). Driver version, UUID and clocks are provenance, not identity.
struct DeviceKey {
  std::string name;  // normalised, e.g. "nvidia_h200"
  int cc = 0;        // e.g. 90

  DeviceKey() = default;
  /// Normalises name ("NVIDIA H200" and "nvidia_h200" give the same key).
  DeviceKey(const std::string& name, int cc);
  static DeviceKey of(const DeviceInfo& d);
  int major() const { return cc / 10; }
  /// "nvidia_h200 (cc 9.0)".
  std::string str() const;
  bool operator==(const DeviceKey& o) const { return cc == o.cc && name == o.name; }
  bool operator!=(const DeviceKey& o) const { return !(*this == o); }
};

/// The compute capability (major*10+minor) of a board known by its marketing name ("NVIDIA A100-PCIE-40GB" ->
/// 80, "NVIDIA GeForce RTX 4090" -> 89, "Tesla T4" -> 75), for files that name the device but not its
/// architecture (Kernel Tuner caches); 0 when the name is not recognised. Data centre boards from P100 to
/// B300 and GeForce/RTX boards of the 10 to 50 series.
int cc_from_board_name(const std::string& name);

/// A data type and operator the kernel is specialised for, e.g. dtype "float32", op "sum".
struct Workload {
  std::string dtype;
  std::string op;
  /// "float32/sum" (or "float32" when op is empty).
  std::string key() const;
  /// Parses "dtype/op" or "dtype".
  static Workload parse(const std::string& key);
  bool operator==(const Workload& o) const { return dtype == o.dtype && op == o.op; }
};

/// Size in bytes of a dtype name (int32, uint32, float32, int64, float64, ...); throws UsageError if unknown.
int dtype_size(const std::string& dtype);

/// Problem dimensions, e.g. {n: 67108864} or {rows: 4000, cols: 4000}.
struct ProblemKey {
  std::map<std::string, std::int64_t> dims;
  /// The data a data-dependent kernel was given, where inputs come from files: a tag of their contents (the same
  /// sizes with other data are another problem); "" for synthetic inputs.
  std::string data;
  /// "n=67108864" or "cols=4000,rows=4000" (sorted by name), then "@" and the data tag where there is one.
  std::string key() const;
  /// Reads key(); throws UsageError naming the key.
  static ProblemKey parse(const std::string& text);
  /// Product of the dimensions (elements); used for log2-distance matching.
  double elements() const;
  std::int64_t at(const std::string& dim) const;
  bool operator==(const ProblemKey& o) const { return dims == o.dims && data == o.data; }
  bool operator<(const ProblemKey& o) const { return dims != o.dims ? dims < o.dims : data < o.data; }
};

/// "float32/sum n=67108864": one tuning case (workload and problem) as the backends key what they were asked to
/// expect, and as messages name it.
inline std::string case_key(const Workload& w, const ProblemKey& p) { return w.key() + " " + p.key(); }

}  // namespace autotune
