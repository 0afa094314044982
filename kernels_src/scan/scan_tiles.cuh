// Tile loads and stores of the scan family (scan.cu): global memory <-> shared memory or registers, in the
// three layouts of the variants (striped through shared memory: VARIANT 0-4, 7, 8; register-blocked: VARIANT 5;
// warp-transposed: VARIANT 6). A kernel header embedded at build time and handed to NVRTC as the named header
// "scan/scan_tiles.cuh". Unlike the variant headers it is not a unit of its own: scan.cu includes it inside its
// namespace scan_detail, right after load_vec and store_vec, and it uses the names defined there before it (value_t,
// vec_t, kTile, kItems, kVec, kBlock, kWarp, pad, identity, combine). So the code the compiler sees, and the code
// identity of the family's trials (tuner/core/identity.hpp), are those of the single file it was cut from.
// It reads no macro: its parameters are ScanPolicy's from the policy block of scan.cu.
#pragma once

// ---- tile load/store (global <-> shared, striped so that each instruction of a warp is coalesced) ------

/// Loads tile elements [base, base + kTile) into s; elements at or beyond n become the identity.
__device__ __forceinline__ void load_tile(const value_t* __restrict__ in, long long base, long long n, value_t* s) {
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
    const vec_t* vin = reinterpret_cast<const vec_t*>(in + base);
#pragma unroll
    for (int r = 0; r < kItems / kVec; ++r) {
      const int v = r * kBlock + tid;
      const vec_t x = load_vec(vin + v);
#pragma unroll
      for (int j = 0; j < kVec; ++j) s[pad(v * kVec + j)] = x.v[j];
    }
  } else {
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const int i = r * kBlock + tid;
      s[pad(i)] = base + i < n ? in[base + i] : identity();
    }
  }
}

/// VARIANT 7: the tile's elements into registers, in the striped order of load_tile (r[v * kVec + j] is tile
/// element (v * kBlock + tid) * kVec + j; v * kBlock + tid for a partial tile, loaded one by one), so that
/// the loads can be in flight while the block works on another tile.
__device__ __forceinline__ void load_striped(const value_t* __restrict__ in, long long base, long long n,
                                             value_t (&r)[kItems]) {
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
    const vec_t* vin = reinterpret_cast<const vec_t*>(in + base);
#pragma unroll
    for (int v = 0; v < kItems / kVec; ++v) {
      const vec_t x = load_vec(vin + v * kBlock + tid);
#pragma unroll
      for (int j = 0; j < kVec; ++j) r[v * kVec + j] = x.v[j];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const long long i = base + k * kBlock + tid;
      r[k] = i < n ? in[i] : identity();
    }
  }
}

/// VARIANT 7: registers filled by load_striped into the shared tile, where load_tile would have put them.
__device__ __forceinline__ void stage_striped(const value_t (&r)[kItems], long long base, long long n, value_t* s) {
  const int tid = threadIdx.x;
  if (base + kTile <= n) {
#pragma unroll
    for (int v = 0; v < kItems / kVec; ++v) {
#pragma unroll
      for (int j = 0; j < kVec; ++j) s[pad((v * kBlock + tid) * kVec + j)] = r[v * kVec + j];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) s[pad(k * kBlock + tid)] = r[k];
  }
}

/// Stores prefix combined with the inclusive scan in s (exclusive: shifted by one, prefix first).
__device__ __forceinline__ void store_tile(value_t* __restrict__ out, long long base, long long n,
                                           const value_t* s, value_t prefix, bool exclusive) {
  const int tid = threadIdx.x;
  auto value_at = [&](int i) -> value_t {
    if (exclusive) return i == 0 ? prefix : combine(prefix, s[pad(i - 1)]);
    return combine(prefix, s[pad(i)]);
  };
  if (base + kTile <= n) {
    vec_t* vout = reinterpret_cast<vec_t*>(out + base);
#pragma unroll
    for (int r = 0; r < kItems / kVec; ++r) {
      const int v = r * kBlock + tid;
      vec_t x;
#pragma unroll
      for (int j = 0; j < kVec; ++j) x.v[j] = value_at(v * kVec + j);
      store_vec(vout + v, x);
    }
  } else {
#pragma unroll
    for (int r = 0; r < kItems; ++r) {
      const int i = r * kBlock + tid;
      if (base + i < n) out[base + i] = value_at(i);
    }
  }
}

// ---- register-blocked tile (VARIANT 5): thread t owns elements [t * kItems, (t + 1) * kItems) -----------

/// Loads this thread's kItems consecutive elements of the tile at base; elements at or beyond n become the
/// identity. A full tile uses kItems / kVec aligned vector loads per thread.
__device__ __forceinline__ void load_blocked(const value_t* __restrict__ in, long long base, long long n,
                                             value_t (&r)[kItems]) {
  const long long first = base + static_cast<long long>(threadIdx.x) * kItems;
  if (base + kTile <= n) {
    const vec_t* v = reinterpret_cast<const vec_t*>(in + first);
#pragma unroll
    for (int k = 0; k < kItems / kVec; ++k) {
      const vec_t x = load_vec(v + k);
#pragma unroll
      for (int j = 0; j < kVec; ++j) r[k * kVec + j] = x.v[j];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) r[k] = first + k < n ? in[first + k] : identity();
  }
}

/// Stores prefix combined with this thread's inclusive scan r (exclusive: shifted by one, prefix first).
__device__ __forceinline__ void store_blocked(value_t* __restrict__ out, long long base, long long n,
                                              const value_t (&r)[kItems], value_t prefix, bool exclusive) {
  const long long first = base + static_cast<long long>(threadIdx.x) * kItems;
  value_t o[kItems];
  if (exclusive) {
    o[0] = prefix;
#pragma unroll
    for (int k = 1; k < kItems; ++k) o[k] = combine(prefix, r[k - 1]);
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) o[k] = combine(prefix, r[k]);
  }
  if (base + kTile <= n) {
    vec_t* v = reinterpret_cast<vec_t*>(out + first);
#pragma unroll
    for (int k = 0; k < kItems / kVec; ++k) {
      vec_t x;
#pragma unroll
      for (int j = 0; j < kVec; ++j) x.v[j] = o[k * kVec + j];
      store_vec(v + k, x);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (first + k < n) out[first + k] = o[k];
    }
  }
}

// ---- warp-transposed tile (VARIANT 6): warp w owns tile elements [w * kWarpTile, (w + 1) * kWarpTile) --------

constexpr int kWarpTile = kWarp * kItems;
constexpr int kWarpSmem = kWarpTile + (ScanPolicy::padding ? kWarpTile / 32 : 0);

/// Loads this warp's elements (coalesced, VEC wide) through its shared-memory region ws and leaves lane l with
/// elements [l * kItems, (l + 1) * kItems) of the warp's part in r; beyond n: the identity.
__device__ __forceinline__ void load_warp(const value_t* __restrict__ in, long long base, long long n, value_t* ws,
                                          value_t (&r)[kItems]) {
  const int lane = threadIdx.x & (kWarp - 1);
  const long long wbase = base + static_cast<long long>(threadIdx.x / kWarp) * kWarpTile;
  if (base + kTile <= n) {
    const vec_t* vin = reinterpret_cast<const vec_t*>(in + wbase);
#pragma unroll
    for (int k = 0; k < kItems / kVec; ++k) {
      const int v = k * kWarp + lane;
      const vec_t x = load_vec(vin + v);
#pragma unroll
      for (int j = 0; j < kVec; ++j) ws[pad(v * kVec + j)] = x.v[j];
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kWarp + lane;
      ws[pad(i)] = wbase + i < n ? in[wbase + i] : identity();
    }
  }
  __syncwarp();
#pragma unroll
  for (int k = 0; k < kItems; ++k) r[k] = ws[pad(lane * kItems + k)];
  __syncwarp();
}

/// Stores o (lane l: elements [l * kItems, (l + 1) * kItems) of the warp's part) through ws, coalesced.
__device__ __forceinline__ void store_warp(value_t* __restrict__ out, long long base, long long n, value_t* ws,
                                           const value_t (&o)[kItems]) {
  const int lane = threadIdx.x & (kWarp - 1);
  const long long wbase = base + static_cast<long long>(threadIdx.x / kWarp) * kWarpTile;
#pragma unroll
  for (int k = 0; k < kItems; ++k) ws[pad(lane * kItems + k)] = o[k];
  __syncwarp();
  if (base + kTile <= n) {
    vec_t* vout = reinterpret_cast<vec_t*>(out + wbase);
#pragma unroll
    for (int k = 0; k < kItems / kVec; ++k) {
      const int v = k * kWarp + lane;
      vec_t x;
#pragma unroll
      for (int j = 0; j < kVec; ++j) x.v[j] = ws[pad(v * kVec + j)];
      store_vec(vout + v, x);
    }
  } else {
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      const int i = k * kWarp + lane;
      if (wbase + i < n) out[wbase + i] = ws[pad(i)];
    }
  }
}
