// KTT's public CUDA tuning scripts (tests/data/ktt/, copied unchanged from HiPerCoRe/KTT), for the cpu and nvrtc
// tests of KTT's flavour of T1 files.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace autotune_test {

/// tests/data/ktt.
inline std::string ktt_dir() { return data_dir() + "/ktt"; }

/// KTT's CUDA tuning scripts other than the tutorial's (which needs its data file: ktt_tutorial()).
inline std::vector<std::string> ktt_example_scripts() {
  return {ktt_dir() + "/Examples/CoulombSum3d/CoulombSum3dCudaScript.json",
          ktt_dir() + "/Examples/CoulombSum3d/CoulombSum3dCudaScript-full-search.json",
          ktt_dir() + "/Examples/Nbody/NbodyScript.json"};
}

/// The tutorial's script and kernel, unchanged, copied into a folder of its own under the temporary directory with
/// the data file KTT's repository holds beside them, ArgumentData.bin: 1048576 float32 b[i] = i (the values its
/// expected 2 * i + 3 = a + b + 3, with a[i] = i, implies). Returns the script's path; the folder stays until
/// remove_ktt_tutorial().
inline std::string ktt_tutorial() {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("autotune_ktt_tutorial_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path from = fs::path(ktt_dir()) / "Tutorials" / "03KernelTuning";
  for (const char* f : {"KernelTuningCudaScript.json", "CudaKernel.cu"})
    fs::copy_file(from / f, dir / f, fs::copy_options::overwrite_existing);
  std::ofstream out(dir / "ArgumentData.bin", std::ios::binary);
  for (std::int32_t i = 0; i < 1048576; ++i) {
    const auto v = static_cast<float>(i);
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
  }
  return (dir / "KernelTuningCudaScript.json").string();
}

/// Removes the folder of ktt_tutorial().
inline void remove_ktt_tutorial(const std::string& script) {
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(script).parent_path(), ec);
}

}  // namespace autotune_test
