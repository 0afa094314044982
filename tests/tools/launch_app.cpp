// An application that launches a kernel of its own through autotune::Kernel, for the gpu tier's check that the
// launch API leaves no CUDA API error behind (tests/gpu/test_sanitizer_gpu.cpp runs it under compute-sanitizer).
// Usage: launch_app SPEC DB N   launches SPEC (the two-step test spec: x, tmp, out, bias, a, shift, n) at n = N
// with the configuration DB serves (the spec default where DB holds none), twice, and checks every output element.
// Exit 0 when every element is right, 1 when one is wrong, 2 on an error (its message on stderr).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "tuner/runtime/launch.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s SPEC DB N\n", argv[0]);
    return 2;
  }
  try {
    using autotune::DeviceBuffer;
    using autotune::DevicePtr;
    const std::int64_t n = std::strtoll(argv[3], nullptr, 10);
    if (n < 1) throw std::invalid_argument(std::string("N must be at least 1, got ") + argv[3]);
    autotune::Kernel k(argv[1], argv[2]);
    const std::size_t count = static_cast<std::size_t>(n);
    const std::size_t bytes = count * sizeof(int);
    std::vector<int> x(count);
    for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<int>(i % 1000) - 500;
    const int bias[4] = {-40, 5, 1000, 77};
    DeviceBuffer dx(bytes), dtmp(bytes), dout(bytes), dbias(sizeof bias);
    dx.upload(x.data(), bytes);
    dbias.upload(bias, sizeof bias);
    int wrong = 0;
    for (int round = 0; round < 2; ++round) {
      const int a = 3 + round, shift = -7 * round;
      k.launch(nullptr, {n},
               {DevicePtr(dx.ptr()), DevicePtr(dtmp.ptr()), DevicePtr(dout.ptr()), DevicePtr(dbias.ptr()), a, shift,
                static_cast<int>(n)});
      autotune::synchronize();
      std::vector<int> out(count);
      dout.download(out.data(), bytes);
      for (std::size_t i = 0; i < count; ++i)
        if (out[i] != a * x[i] + bias[i % 4] + shift) ++wrong;
    }
    const autotune::Choice c = k.choice({n});
    std::printf("launched %s (%s) at n=%lld: %d wrong elements\n", c.config_text.c_str(), c.answer.note.c_str(),
                static_cast<long long>(n), wrong);
    return wrong == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "launch_app: %s\n", e.what());
    return 2;
  }
}
