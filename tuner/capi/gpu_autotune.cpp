// The C interface (gpu_autotune.h) over the CLI library: the command line run in this process, its queries as
// JSON, and the in-memory arrays of tuner/core/memory_arrays.hpp. Every entry point catches every exception.
#include "tuner/capi/gpu_autotune.h"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "db/database.hpp"
#include "tuner/cli/entry.hpp"
#include "tuner/cli/queries.hpp"
#include "tuner/core/error.hpp"
#include "tuner/core/host_verify.hpp"
#include "tuner/core/memory_arrays.hpp"
#include "tuner/cuda/runtime.hpp"
#include "tuner/runtime/launch.hpp"

namespace {

using autotune::UsageError;

thread_local std::string last_error;

/// The helper processes of the CUDA backend (the GPU worker, the compile workers) are an executable of the
/// project started again; in a process that is not one (a Python interpreter), `autotune` installed next to this
/// library serves as one (AUTOTUNE_HELPER_EXE, tuner/cuda/worker_process.hpp), unless the caller named another.
void set_helper_executable() {
  const char* given = std::getenv("AUTOTUNE_HELPER_EXE");
  if (given != nullptr && *given != '\0') return;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&gat_abi_version), &info) == 0 || info.dli_fname == nullptr) return;
  const std::filesystem::path exe = std::filesystem::path(info.dli_fname).parent_path() / "autotune";
  std::error_code ec;
  if (std::filesystem::is_regular_file(exe, ec) && ::access(exe.c_str(), X_OK) == 0)
    ::setenv("AUTOTUNE_HELPER_EXE", exe.c_str(), 0);
}

/// Runs f, mapping the project's exceptions to the exit codes of the README and keeping the message.
template <typename F>
int guarded(F&& f) {
  last_error.clear();
  try {
    f();
    return 0;
  } catch (const nlohmann::json::exception& e) {
    last_error = std::string("malformed request: ") + e.what();
    return 2;
  } catch (...) {
    const int code = autotune::cli::exit_code_of_current_exception(&last_error);
    return code == 1 ? 5 : code;  // this interface's "anything else" is 5 (gpu_autotune.h)
  }
}

const std::string& field(const nlohmann::json& r, const char* name) {
  if (!r.contains(name) || !r[name].is_string())
    throw UsageError(std::string("the request needs \"") + name + "\" (a string)");
  return r[name].get_ref<const std::string&>();
}

std::string optional_field(const nlohmann::json& r, const char* name) {
  if (!r.contains(name) || r[name].is_null()) return "";
  if (!r[name].is_string()) throw UsageError(std::string("\"") + name + "\" must be a string");
  return r[name].get<std::string>();
}

std::vector<std::string> string_list(const nlohmann::json& r, const char* name) {
  std::vector<std::string> out;
  if (!r.contains(name) || r[name].is_null()) return out;
  if (!r[name].is_array()) throw UsageError(std::string("\"") + name + "\" must be a list of strings");
  for (const auto& v : r[name]) {
    if (!v.is_string()) throw UsageError(std::string("\"") + name + "\" must be a list of strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

void fill_problem(const nlohmann::json& r, autotune::ProblemRequest& pf) {
  pf.problem = optional_field(r, "problem");
  pf.workload_key = optional_field(r, "workload");
  pf.inputs = string_list(r, "inputs");
}

nlohmann::json answer(const nlohmann::json& r) {
  const std::string op = field(r, "op");
  if (op == "space") {
    autotune::cli::SpaceArgs a;
    a.kernel = field(r, "kernel");
    fill_problem(r, a.pf);
    a.narrow.restrict = string_list(r, "restrict");
    return autotune::cli::space_json(a, optional_field(r, "db").empty() ? "autotune.db" : optional_field(r, "db"));
  }
  if (op == "trials") {
    if (!r.contains("session") || !r["session"].is_number_integer())
      throw UsageError("the request needs \"session\" (an integer)");
    return autotune::cli::trials_json(field(r, "db"), r["session"].get<std::int64_t>());
  }
  if (op == "best") {
    autotune::cli::BestArgs a;
    a.kernel = field(r, "kernel");
    fill_problem(r, a.pf);
    a.device_name = optional_field(r, "device");
    if (r.contains("cc") && r["cc"].is_number_integer()) a.cc = r["cc"].get<int>();
    if (!optional_field(r, "objective").empty()) a.objective = optional_field(r, "objective");
    return autotune::cli::best_json(a, field(r, "db"));
  }
  if (op == "devices") {
    nlohmann::json list = nlohmann::json::array();
    if (autotune::cuda::driver_available(nullptr))
      for (const autotune::DeviceInfo& d : autotune::cuda::list_devices())
        list.push_back({{"name", d.name}, {"cc", d.cc}, {"sm_count", d.sm_count}});
    return {{"devices", list}};
  }
  throw UsageError("unknown query op '" + op + "' (space, trials, best, devices)");
}

/// The dtype names a gat_arg may give, as static strings (autotune::Arg keeps the pointer); nullptr for others.
const char* static_dtype(const char* dtype) {
  static const char* const kNames[] = {"int8",  "uint8",  "int16",   "uint16",  "int32",  "uint32",
                                       "int64", "uint64", "float16", "float32", "float64"};
  if (dtype == nullptr || *dtype == '\0') return "";
  for (const char* n : kNames)
    if (std::strcmp(n, dtype) == 0) return n;
  return nullptr;
}

autotune::Arg to_arg(const gat_arg& a, std::size_t i) {
  const char* dtype = static_dtype(a.dtype);
  if (dtype == nullptr) throw UsageError("argument " + std::to_string(i) + ": unknown dtype '" + a.dtype + "'");
  using Kind = autotune::Arg::Kind;
  switch (a.kind) {
    case GAT_ARG_POINTER:
      return autotune::Arg::raw(Kind::pointer, a.bits, 0, dtype);
    case GAT_ARG_INT:
      return autotune::Arg::raw(Kind::integer, a.bits, 0, dtype);
    case GAT_ARG_UINT:
      return autotune::Arg::raw(Kind::unsigned_integer, a.bits, 0, dtype);
    case GAT_ARG_FLOAT:
      return autotune::Arg::raw(Kind::floating, 0, a.value, dtype);
    default:
      throw UsageError("argument " + std::to_string(i) + ": unknown kind " + std::to_string(a.kind));
  }
}

/// Buffers by name as gat_arrays of bytes ("uint8"): the caller reads them with the dtypes of the spec it made.
std::vector<gat_array> arrays_of(const autotune::HostBuffers& b) {
  std::vector<gat_array> out;
  out.reserve(b.size());
  for (const auto& [name, bytes] : b) out.push_back({name.c_str(), "uint8", bytes.data(), bytes.size()});
  return out;
}

autotune::Kernel& kernel_of(void* k) {
  if (k == nullptr) throw UsageError("no kernel (NULL): gat_kernel_open failed or was not called");
  return *static_cast<autotune::Kernel*>(k);
}

char* copy_out(const std::string& text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) throw std::bad_alloc();
  std::memcpy(out, text.c_str(), text.size() + 1);
  return out;
}

}  // namespace

extern "C" {

int gat_abi_version(void) { return GAT_ABI_VERSION; }

const char* gat_version(void) { return "0.1.0"; }

int gat_set_arrays(const gat_array* arrays, size_t n) {
  return guarded([&] {
    if (n > 0 && arrays == nullptr)
      throw UsageError("gat_set_arrays: no arrays given for a count of " + std::to_string(n));
    std::vector<autotune::MemoryArray> list;
    for (size_t i = 0; i < n; ++i) {
      autotune::MemoryArray m;
      m.name = arrays[i].name != nullptr ? arrays[i].name : "";
      m.dtype = arrays[i].dtype != nullptr ? arrays[i].dtype : "";
      m.data = arrays[i].data;
      m.bytes = arrays[i].bytes;
      list.push_back(std::move(m));
    }
    autotune::set_memory_arrays(std::move(list));
  });
}

int gat_main(int argc, const char* const* argv) {
  int status = 0;
  const int rc = guarded([&] {
    if (argc < 1 || argv == nullptr) throw UsageError("gat_main: no arguments (argv[0] is the program's name)");
    set_helper_executable();
    status = autotune::cli::run_command_line(argc, argv);
  });
  std::fflush(stdout);
  std::cout.flush();
  std::cerr.flush();
  return rc != 0 ? rc : status;
}

int gat_query(const char* request, char** reply) {
  if (reply != nullptr) *reply = nullptr;
  return guarded([&] {
    if (request == nullptr || reply == nullptr) throw UsageError("gat_query: request and reply must not be NULL");
    const nlohmann::json r = nlohmann::json::parse(request);
    if (!r.is_object()) throw UsageError("a query is a JSON object {\"op\": ...}");
    *reply = copy_out(answer(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
}

int gat_kernel_open(const char* spec_path, const char* db_path, void** kernel) {
  if (kernel != nullptr) *kernel = nullptr;
  return guarded([&] {
    if (spec_path == nullptr || db_path == nullptr || kernel == nullptr)
      throw UsageError("gat_kernel_open: a spec path, a database path and a place for the kernel");
    *kernel = new autotune::Kernel(spec_path, db_path);
  });
}

int gat_kernel_launch(void* kernel, uint64_t stream, const int64_t* problem, size_t problem_dims, const gat_arg* args,
                      size_t arg_count) {
  return guarded([&] {
    autotune::Kernel& k = kernel_of(kernel);
    if (arg_count > 64) throw UsageError("gat_kernel_launch: " + std::to_string(arg_count) + " arguments");
    std::vector<autotune::Arg> packed;
    packed.reserve(arg_count);
    for (size_t i = 0; i < arg_count; ++i) packed.push_back(to_arg(args[i], i));
    // NOLINTNEXTLINE(performance-no-int-to-ptr): the caller's stream handle, an integer across the C interface
    const autotune::Stream s(reinterpret_cast<void*>(static_cast<std::uintptr_t>(stream)));
    k.launch(s, problem, problem_dims, packed.data(), arg_count);
  });
}

int gat_kernel_choice(void* kernel, const int64_t* problem, size_t problem_dims, char** reply) {
  if (reply != nullptr) *reply = nullptr;
  return guarded([&] {
    if (reply == nullptr) throw UsageError("gat_kernel_choice: reply must not be NULL");
    const autotune::Choice c = kernel_of(kernel).choice(problem, problem_dims);
    const nlohmann::json j = {{"kernel", c.kernel},
                              {"workload", c.workload},
                              {"problem", c.problem},
                              {"device", c.device},
                              {"config", nlohmann::json::parse(c.answer.config.to_json())},
                              {"config_text", c.config_text},
                              {"match", autotune::lookup::to_string(c.answer.match)},
                              {"measured_problem", c.answer.problem},
                              {"median_ns", c.answer.median_ns},
                              {"binary", autotune::to_string(c.binary)},
                              {"binary_key", c.binary_key},
                              {"compile_ms", c.compile_ms},
                              {"prepare_ms", c.prepare_ms},
                              {"note", c.note},
                              {"online", c.online},
                              {"measured_online", c.answer.online}};
    *reply = copy_out(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  });
}

void gat_kernel_close(void* kernel) { delete static_cast<autotune::Kernel*>(kernel); }

int gat_set_verify_callback(gat_verify_fn fn, void* user) {
  return guarded([&] {
    if (fn == nullptr) {
      autotune::set_host_verify_hook(nullptr);
      return;
    }
    autotune::set_host_verify_hook([fn, user](const std::string& kernel, const autotune::HostBuffers& outputs,
                                              const autotune::HostBuffers& expected) {
      const std::vector<gat_array> o = arrays_of(outputs), e = arrays_of(expected);
      std::array<char, 2048> message{};
      const int rc = fn(user, kernel.c_str(), o.data(), o.size(), e.data(), e.size(), message.data(), message.size());
      if (rc == 0) return std::string();
      message.back() = '\0';
      return message[0] != '\0' ? std::string(message.data()) : std::string("the verification callback said no");
    });
  });
}

void gat_free(char* text) { std::free(text); }

const char* gat_last_error(void) { return last_error.c_str(); }

}  // extern "C"
