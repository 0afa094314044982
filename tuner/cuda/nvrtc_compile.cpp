// NVRTC compilation to CUBIN for an explicit architecture, the binary cache key and config defines.
// Needs the CUDA toolkit's libnvrtc, never a GPU or driver.
#include <nvrtc.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "tuner/core/error.hpp"
#include "tuner/core/hash.hpp"
#include "tuner/cuda/driver.hpp"
#include "tuner/cuda/runtime.hpp"

#ifndef AUTOTUNE_CUDA_INCLUDE_DIR
#define AUTOTUNE_CUDA_INCLUDE_DIR "/usr/local/cuda/include"
#endif

namespace autotune::cuda {
namespace {

/// The calling thread's resource usage (Linux RUSAGE_THREAD): CPU time, context switches, minor page faults.
struct ThreadUsage {
  rusage ru{};
  static ThreadUsage now() {
    ThreadUsage u;
    if (getrusage(RUSAGE_THREAD, &u.ru) != 0) u.ru = rusage{};
    return u;
  }
  static double ms(const timeval& t) {
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3;
  }
  /// Writes what this thread spent since `before` into r.
  void since(const ThreadUsage& before, CompileResult& r) const {
    r.cpu_ms = ms(ru.ru_utime) + ms(ru.ru_stime) - ms(before.ru.ru_utime) - ms(before.ru.ru_stime);
    r.voluntary_switches = ru.ru_nvcsw - before.ru.ru_nvcsw;
    r.involuntary_switches = ru.ru_nivcsw - before.ru.ru_nivcsw;
    r.minor_faults = ru.ru_minflt - before.ru.ru_minflt;
  }
};

bool is_directory(const std::string& path) {
  struct stat st {};
  return !path.empty() && stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

std::vector<std::string> split_list(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : text) {
    if (ch == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

// "-I<dir>" for the toolkit include directories that exist, plus their cccl/ subfolders (CUB, Thrust and
// libcu++ live there since CUDA 13). The environment variable AUTOTUNE_CUDA_INCLUDE_DIR (':'-separated)
// replaces the directories fixed at build time, for machines where the toolkit lives elsewhere.
const std::vector<std::string>& include_options() {
  static const std::vector<std::string> options = [] {
    std::vector<std::string> dirs;
    if (const char* env = std::getenv("AUTOTUNE_CUDA_INCLUDE_DIR"); env != nullptr && *env != '\0') {
      dirs = split_list(env, ':');
    } else {
      dirs = split_list(AUTOTUNE_CUDA_INCLUDE_DIR, ';');  // CMake lists are ';'-separated
    }
    std::vector<std::string> out;
    for (const auto& dir : dirs) {
      if (!is_directory(dir)) continue;
      out.push_back("-I" + dir);
      if (is_directory(dir + "/cccl")) out.push_back("-I" + dir + "/cccl");
    }
    return out;
  }();
  return options;
}

/// "<function> failed at <file>:<line>: <NVRTC's error string>" (file and line: the caller's).
std::string nvrtc_error(nvrtcResult r, const char* function, const char* file = __builtin_FILE(),
                        int line = __builtin_LINE()) {
  return std::string(function) + " failed at " + detail::call_site(file, line) + ": " + nvrtcGetErrorString(r);
}

// NVRTC program handle that is always destroyed.
struct Program {
  nvrtcProgram handle = nullptr;
  ~Program() {
    if (handle != nullptr) nvrtcDestroyProgram(&handle);
  }
};

std::string program_log(nvrtcProgram prog) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(prog, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(prog, log.data()) != NVRTC_SUCCESS) return {};
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

std::string nvrtc_version() {
  static const std::string version = [] {
    int major = 0, minor = 0;
    nvrtcResult r = nvrtcVersion(&major, &minor);
    if (r != NVRTC_SUCCESS) throw EnvironmentError("NVRTC is unusable: " + nvrtc_error(r, "nvrtcVersion"));
    return std::to_string(major) + "." + std::to_string(minor);
  }();
  return version;
}

bool exceeds_hardware_limits(const std::string& compile_log) {
  // ptxas's words for them (CUDA 12 and 13).
  static const char* const kLimits[] = {"uses too much shared data", "uses too much local data",
                                        "too many resources requested"};
  for (const char* limit : kLimits)
    if (compile_log.find(limit) != std::string::npos) return true;
  return false;
}

CompileResult compile(const std::string& source, const Headers& headers, const std::string& program_name,
                      const std::vector<std::string>& options, const std::string& arch) {
  const auto start = std::chrono::steady_clock::now();
  const ThreadUsage usage_before = ThreadUsage::now();
  CompileResult result;
  std::string target = arch;
  if (!target.empty() && target.find_first_not_of("0123456789") == std::string::npos) target = "sm_" + target;
  if (!starts_with(target, "sm_")) {
    result.log = "compile: arch must name a real architecture such as \"sm_90\" (CUBIN output), got \"" + arch + "\"";
    return result;
  }

  std::vector<std::string> all, name_expressions;
  all.push_back("-arch=" + target);
  bool has_std = false;
  for (const auto& o : options) has_std = has_std || starts_with(o, "-std=") || starts_with(o, "--std=");
  if (!has_std) all.push_back("-std=c++17");
  for (const auto& inc : include_options()) all.push_back(inc);
  for (const auto& o : options) {
    if (starts_with(o, kNameExpressionOption)) name_expressions.push_back(o.substr(std::strlen(kNameExpressionOption)));
    else all.push_back(o);
  }
  std::vector<const char*> argv;
  argv.reserve(all.size());
  for (const auto& o : all) argv.push_back(o.c_str());

  // The named headers (a spec's kernel headers), by name: no include path leads to them.
  std::vector<const char*> header_texts, header_names;
  for (const auto& [name, text] : headers) {
    header_texts.push_back(text.c_str());
    header_names.push_back(name.c_str());
  }
  Program prog;
  const std::string name = program_name.empty() ? "kernel.cu" : program_name;
  nvrtcResult r = nvrtcCreateProgram(&prog.handle, source.c_str(), name.c_str(), static_cast<int>(header_texts.size()),
                                     header_texts.data(), header_names.data());
  if (r != NVRTC_SUCCESS) throw EnvironmentError("NVRTC is unusable: " + nvrtc_error(r, "nvrtcCreateProgram"));
  for (const auto& e : name_expressions) {
    r = nvrtcAddNameExpression(prog.handle, e.c_str());
    if (r != NVRTC_SUCCESS) {
      result.log = nvrtc_error(r, "nvrtcAddNameExpression") + " for entry point '" + e + "'";
      return result;
    }
  }

  r = nvrtcCompileProgram(prog.handle, static_cast<int>(argv.size()), argv.data());
  result.log = program_log(prog.handle);
  if (r == NVRTC_ERROR_OUT_OF_MEMORY || r == NVRTC_ERROR_BUILTIN_OPERATION_FAILURE ||
      r == NVRTC_ERROR_INTERNAL_ERROR) {
    throw EnvironmentError("NVRTC is unusable: " + nvrtc_error(r, "nvrtcCompileProgram") +
                           (result.log.empty() ? "" : "\n" + result.log));
  }
  if (r != NVRTC_SUCCESS) {
    // Compilation errors and rejected options are properties of this source/option set: a result.
    if (r != NVRTC_ERROR_COMPILATION || result.log.empty()) {
      result.log = nvrtc_error(r, "nvrtcCompileProgram") + (result.log.empty() ? "" : "\n" + result.log);
    }
  } else {
    std::size_t size = 0;
    r = nvrtcGetCUBINSize(prog.handle, &size);
    if (r == NVRTC_SUCCESS && size > 0) {
      result.cubin.resize(size);
      r = nvrtcGetCUBIN(prog.handle, reinterpret_cast<char*>(result.cubin.data()));
    }
    if (r != NVRTC_SUCCESS || size == 0) {
      result.cubin.clear();
      result.log += (result.log.empty() ? "" : "\n") +
                    (r != NVRTC_SUCCESS ? nvrtc_error(r, "nvrtcGetCUBIN") : std::string("NVRTC produced no CUBIN"));
    } else {
      result.ok = true;
    }
    for (const auto& e : name_expressions) {
      const char* lowered = nullptr;
      if (nvrtcGetLoweredName(prog.handle, e.c_str(), &lowered) == NVRTC_SUCCESS && lowered != nullptr)
        result.lowered_names[e] = lowered;
    }
  }
  result.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ThreadUsage::now().since(usage_before, result);
  return result;
}

bool is_name_expression(const std::string& entry_point) {
  return entry_point.find_first_of("<:") != std::string::npos;
}

std::vector<std::string> name_expression_options(const std::vector<std::string>& entry_points) {
  std::vector<std::string> out;
  for (const auto& e : entry_points)
    if (is_name_expression(e)) out.push_back(kNameExpressionOption + e);
  return out;
}

std::vector<std::string> config_defines(const Config& c, const std::vector<Param>& params) {
  std::vector<std::string> out;
  out.reserve(c.values().size() + 1);
  for (const auto& [name, value] : c.values()) {
    const auto p = std::find_if(params.begin(), params.end(), [&n = name](const Param& q) { return q.name == n; });
    out.push_back("-D" + name + "=" + (p != params.end() ? p->macro(value) : std::to_string(value)));
  }
  out.push_back("-DAUTOTUNE_STRICT=1");
  return out;
}

std::string binary_key(const std::string& source, const Headers& headers, const std::vector<std::string>& options,
                       const std::string& arch) {
  // Fields are separated by NUL bytes so that ("ab","c") and ("a","bc") differ. The fixed options the
  // compile function adds (-std, include dirs) are part of the NVRTC version's behaviour, not hashed.
  std::string text = "autotune-cubin-v1";
  text += '\0';
  text += "nvrtc=" + nvrtc_version();
  text += '\0';
  text += "arch=" + arch;
  text += '\0';
  for (const auto& o : options) {
    text += o;
    text += '\0';
  }
  text += '\0';
  text += source;
  // The named headers compile() hands to NVRTC with this source (none: the key of a source without any).
  for (const auto& [name, header] : headers) {
    text += '\0';
    text += "header=";
    text += name;
    text += '\0';
    text += header;
  }
  return content_hash(text);
}

}  // namespace autotune::cuda
