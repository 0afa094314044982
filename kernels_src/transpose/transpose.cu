// Matrix transpose (and the tiled copy that serves as its roofline reference).
//
// Input: a row-major rows x cols matrix `in`. The transpose writes the row-major cols x rows matrix
// `out` with out[c][r] = in[r][c]; the tiled copy (VARIANT 2, spec "transpose_copy") writes
// out[r][c] = in[r][c] with the same tiling, so the two are compared on equal terms.
//
// One thread block handles one TILE_DIM x TILE_DIM tile with TILE_DIM x BLOCK_ROWS threads, so every
// thread moves TILE_DIM / BLOCK_ROWS elements. The grid is one-dimensional (one block per tile, tiles
// numbered row by row), which lifts the 65535 limit of gridDim.y for tall matrices. Any rows x cols works;
// partial tiles on the right and bottom edges are bounds-checked.
//
// Compiles alone at its defaults; every macro below is read only in the policy block.

// ---- element type (set by the host adapter's compile_options) -----------------------------------------
// DTYPE_ID: 1 float32, 2 float64 (the numbering of the reduction family).
#ifndef DTYPE_ID
#ifdef AUTOTUNE_STRICT
#error "DTYPE_ID is not defined (1 float32, 2 float64)"
#endif
#define DTYPE_ID 1
#endif

// ---- tunable parameters ------------------------------------------------------------------------------
// VARIANT: 0 naive (coalesced reads, strided writes), 1 tiled (through a shared-memory tile, coalesced
// both ways), 2 tiled_copy (same tiling, no transposition: the roofline reference).
#ifndef VARIANT
#ifdef AUTOTUNE_STRICT
#error "VARIANT is not defined"
#endif
#define VARIANT 1
#endif
// TILE_DIM: edge of the square tile one block handles (elements).
#ifndef TILE_DIM
#ifdef AUTOTUNE_STRICT
#error "TILE_DIM is not defined"
#endif
#define TILE_DIM 32
#endif
// BLOCK_ROWS: rows of threads per block; each thread handles TILE_DIM / BLOCK_ROWS elements.
#ifndef BLOCK_ROWS
#ifdef AUTOTUNE_STRICT
#error "BLOCK_ROWS is not defined"
#endif
#define BLOCK_ROWS 8
#endif
// PADDING: 1 adds one element to every shared-memory tile row (TILE_DIM + 1) to avoid bank conflicts
// when the tile is read by columns; only the tiled variant uses shared memory.
#ifndef PADDING
#ifdef AUTOTUNE_STRICT
#error "PADDING is not defined"
#endif
#define PADDING 1
#endif
// DIAGONAL: 1 maps block ids to tiles in diagonal order (against partition camping), 0 row by row.
#ifndef DIAGONAL
#ifdef AUTOTUNE_STRICT
#error "DIAGONAL is not defined"
#endif
#define DIAGONAL 0
#endif

// ---- policy: the only place the macros above are read -------------------------------------------------
#if DTYPE_ID == 1
typedef float value_t;
#elif DTYPE_ID == 2
typedef double value_t;
#else
#error "DTYPE_ID must be 1 (float32) or 2 (float64)"
#endif

struct Policy {
  static constexpr int variant = VARIANT;
  static constexpr int tile_dim = TILE_DIM;
  static constexpr int block_rows = BLOCK_ROWS;
  static constexpr int padding = PADDING;
  static constexpr bool diagonal = DIAGONAL != 0;
  static constexpr int threads = TILE_DIM * BLOCK_ROWS;
};

// The entry point is named after what it computes: "transpose" (VARIANT 0, 1) or "tiled_copy" (VARIANT 2).
#if VARIANT == 2
#define AUTOTUNE_TRANSPOSE_ENTRY tiled_copy
#else
#define AUTOTUNE_TRANSPOSE_ENTRY transpose
#endif

static_assert(Policy::variant >= 0 && Policy::variant <= 2, "VARIANT must be 0 (naive), 1 (tiled) or 2 (tiled_copy)");
static_assert(Policy::tile_dim > 0 && Policy::block_rows > 0, "TILE_DIM and BLOCK_ROWS must be positive");
static_assert(Policy::tile_dim % Policy::block_rows == 0, "BLOCK_ROWS must divide TILE_DIM");
static_assert(Policy::threads <= 1024, "TILE_DIM * BLOCK_ROWS must not exceed 1024 threads");
static_assert(Policy::padding == 0 || Policy::padding == 1, "PADDING must be 0 or 1");

// ---- helpers ---------------------------------------------------------------------------------------------

// Tile coordinates (in tiles) of this block. Row-major order: block b handles tile (b % tiles_x,
// b / tiles_x). Diagonal order: consecutive blocks walk a diagonal of the tile grid, so the blocks in
// flight write to different column ranges of the output (the diagonal reordering of Ruetsch &
// Micikevicius, generalised to a one-dimensional grid of tiles_x x tiles_y tiles; a bijection for any
// tile grid shape: for each tile_y, b / tiles_y runs over 0 .. tiles_x - 1 once).
__device__ __forceinline__ void tile_of_block(unsigned int tiles_x, unsigned int tiles_y, unsigned int& tile_x,
                                              unsigned int& tile_y) {
  const unsigned int b = blockIdx.x;
  if (Policy::diagonal) {
    tile_y = b % tiles_y;
    tile_x = (b / tiles_y + tile_y) % tiles_x;
  } else {
    tile_x = b % tiles_x;
    tile_y = b / tiles_x;
  }
}

// Moves one tile whose first input element is (row0, col0). A template so that only the selected
// variant is instantiated (and only the tiled variant declares shared memory).
template <int Variant>
__device__ __forceinline__ void move_tile(const value_t* __restrict__ in, value_t* __restrict__ out, int rows,
                                          int cols, int row0, int col0) {
  constexpr int tile = Policy::tile_dim;
  constexpr int step = Policy::block_rows;
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int c = col0 + tx;
  if constexpr (Variant == 0) {
    // Naive: read rows of the tile (coalesced), write them as columns of the output (stride rows).
#pragma unroll
    for (int j = 0; j < tile; j += step) {
      const int r = row0 + ty + j;
      if (c < cols && r < rows) out[static_cast<long long>(c) * rows + r] = in[static_cast<long long>(r) * cols + c];
    }
  } else if constexpr (Variant == 1) {
    // Tiled: stage the tile in shared memory, then write its columns as coalesced rows of the output.
    __shared__ value_t buf[tile][tile + Policy::padding];
#pragma unroll
    for (int j = 0; j < tile; j += step) {
      const int r = row0 + ty + j;
      if (c < cols && r < rows) buf[ty + j][tx] = in[static_cast<long long>(r) * cols + c];
    }
    __syncthreads();
    const int out_c = row0 + tx;  // output column = input row
#pragma unroll
    for (int j = 0; j < tile; j += step) {
      const int out_r = col0 + ty + j;  // output row = input column
      if (out_c < rows && out_r < cols) out[static_cast<long long>(out_r) * rows + out_c] = buf[tx][ty + j];
    }
  } else {
    // Tiled copy: the same tiles and thread mapping, no transposition.
#pragma unroll
    for (int j = 0; j < tile; j += step) {
      const int r = row0 + ty + j;
      if (c < cols && r < rows) {
        const long long i = static_cast<long long>(r) * cols + c;
        out[i] = in[i];
      }
    }
  }
}

// ---- entry point -----------------------------------------------------------------------------------------
// in: rows x cols (row-major); out: cols x rows (transpose) or rows x cols (tiled_copy).
// Launch: grid (tiles_x * tiles_y), block (TILE_DIM, BLOCK_ROWS), no dynamic shared memory, where
// tiles_x = ceil(cols / TILE_DIM), tiles_y = ceil(rows / TILE_DIM); 1 <= rows, cols < 2^30.
extern "C" __global__ void __launch_bounds__(Policy::threads)
AUTOTUNE_TRANSPOSE_ENTRY(const value_t* __restrict__ in, value_t* __restrict__ out, int rows, int cols,
                         unsigned int tiles_x, unsigned int tiles_y) {
  unsigned int tile_x, tile_y;
  tile_of_block(tiles_x, tiles_y, tile_x, tile_y);
  move_tile<Policy::variant>(in, out, rows, cols, static_cast<int>(tile_y) * Policy::tile_dim,
                             static_cast<int>(tile_x) * Policy::tile_dim);
}
