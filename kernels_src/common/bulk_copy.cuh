// Bulk copies from global into shared memory by the SM's copy engine (sm_90: cp.async.bulk completing on an
// mbarrier), for kernels of any family. A kernel header, embedded at build time and handed to NVRTC as the named
// header "common/bulk_copy.cuh"; it reads no macro. Below sm_90 every function compiles to nothing and
// bulk_copy::kAvailable is false: the caller loads with its threads instead.
//
// Use, for one barrier that completes once (phase 0): one thread calls init(), then the copies' byte count with
// expect() and the copies with copy(); the block passes a barrier (__syncthreads) before anyone calls wait(); after
// every thread has waited (a second block barrier), one thread may call inval() so the barrier's memory can go.
#pragma once

namespace bulk_copy {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
constexpr bool kAvailable = true;
#else
constexpr bool kAvailable = false;
#endif

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// One thread: the barrier expects one arrival (the one expect() makes), made visible to the copy engine.
__device__ __forceinline__ void init(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)) : "memory");
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}

/// The arrival on bar, announcing the bytes that the copies completing on it will bring.
__device__ __forceinline__ void expect(unsigned long long* bar, unsigned bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes) : "memory");
#endif
}

/// Starts the copy of bytes (a multiple of 16) from src (global, 16-byte aligned) to dst (shared, 16-byte
/// aligned), completing on bar.
__device__ __forceinline__ void copy(void* dst, const void* src, unsigned bytes, unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(smem_addr(bar))
               : "memory");
#endif
}

/// Waits until the barrier's phase 0 is complete: every byte expected has arrived.
__device__ __forceinline__ void wait(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned b = smem_addr(bar);
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(b)
        : "memory");
  }
#endif
}

/// One thread, once every thread has passed wait() (or never waits): the barrier's memory may be reused.
__device__ __forceinline__ void inval(unsigned long long* bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
#endif
}

}  // namespace bulk_copy
