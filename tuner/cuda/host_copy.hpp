// Internal to tuner/cuda: large host-to-host copies on several threads (the problem's inputs into the shared region,
// the executor's staging of uploads).
#pragma once
#include <cstddef>

namespace autotune::cuda::detail {

/// memcpy on up to 16 threads, in pieces of 16 MB (the first touch of fresh shared pages dominates a large copy).
void parallel_copy(unsigned char* dst, const unsigned char* src, std::size_t bytes);

}  // namespace autotune::cuda::detail
