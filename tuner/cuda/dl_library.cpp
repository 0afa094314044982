#include "tuner/cuda/dl_library.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace autotune::cuda::detail {

bool DlLibrary::open(const std::string& library, std::string* why) {
  handle_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle_ != nullptr) return true;
  const char* err = dlerror();
  *why = library + " cannot be loaded (" + (err != nullptr ? err : "unknown dlopen error") + ")";
  return false;
}

void* DlLibrary::lookup(const char* symbol) const { return handle_ != nullptr ? dlsym(handle_, symbol) : nullptr; }

LibraryChoice library_choice(const char* env_var) {
  LibraryChoice c;
  const char* env = std::getenv(env_var);
  if (env == nullptr || *env == '\0') return c;
  c.library = env;
  c.off = c.library == "off";
  if (c.off) c.library.clear();
  return c;
}

}  // namespace autotune::cuda::detail
