// Work spread over the cores: one index space, one shared counter, no pool kept between calls.
#pragma once
#include <cstddef>
#include <functional>

namespace autotune {

/// Calls fn(i) for every i in [0, count) on up to max_threads threads (0: the cores, at most 64), the calling thread
/// one of them; inline when count <= 1 or one thread is allowed. Every index runs exactly once, unless fn throws:
/// then no further index starts, and the first exception is rethrown once every thread has stopped. Where no more
/// threads can be started, the ones running (this one at least) finish the work.
void parallel_for(std::size_t count, const std::function<void(std::size_t)>& fn, std::size_t max_threads = 0);

}  // namespace autotune
