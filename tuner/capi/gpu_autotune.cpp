// The C interface (gpu_autotune.h) over the CLI library: the command line run in this process, its queries as
// JSON, and the in-memory arrays of tuner/core/memory_arrays.hpp. Every entry point catches every exception.
#include "tuner/capi/gpu_autotune.h"

#include <dlfcn.h>
#include <unistd.h>

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
#include "tuner/core/memory_arrays.hpp"
#include "tuner/cuda/runtime.hpp"

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
  } catch (const autotune::UsageError& e) {
    last_error = e.what();
    return 2;
  } catch (const autotune::SpecError& e) {
    last_error = std::string("invalid spec: ") + e.what();
    return 2;
  } catch (const autotune::ExprError& e) {
    last_error = e.what();
    return 2;
  } catch (const nlohmann::json::exception& e) {
    last_error = std::string("malformed request: ") + e.what();
    return 2;
  } catch (const autotune::EnvironmentError& e) {
    last_error = e.what();
    return 3;
  } catch (const autotune::DbError& e) {
    last_error = std::string("database: ") + e.what();
    return 4;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 5;
  } catch (...) {
    last_error = "unknown error";
    return 5;
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
    const std::string text = answer(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (out == nullptr) throw std::bad_alloc();
    std::memcpy(out, text.c_str(), text.size() + 1);
    *reply = out;
  });
}

void gat_free(char* text) { std::free(text); }

const char* gat_last_error(void) { return last_error.c_str(); }

}  // extern "C"
