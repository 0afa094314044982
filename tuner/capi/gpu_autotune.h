/* The C interface of gpu-autotune (libgpu_autotune.so): what the Python package loads with ctypes, and what any
 * language with a C foreign-function interface can call. It is a thin layer over the C++ modules: the command line
 * run in this process, a few queries answered as JSON, and the in-memory arrays that specs name with
 * {"memory": NAME}. Every function catches every C++ exception; none ends the process. Strings passed in are
 * UTF-8 and NUL-terminated; strings handed out are freed with gat_free. docs/python.md. */
#ifndef GPU_AUTOTUNE_H
#define GPU_AUTOTUNE_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define GAT_API __attribute__((visibility("default")))
#else
#define GAT_API
#endif

/* Version of this interface: bumped when a function or a query's JSON changes incompatibly. */
#define GAT_ABI_VERSION 1

/* GAT_ABI_VERSION of the library (the caller checks it against the one it was written for). */
GAT_API int gat_abi_version(void);
/* The project's version ("0.1.0"); a static string. */
GAT_API const char* gat_version(void);

/* An array in the caller's memory: `bytes` bytes of little-endian elements of `dtype` (the project's dtype names:
 * "float32", "int32", "uint8", ...), C order. The memory must stay valid and unchanged while calls that read it
 * run. */
typedef struct gat_array {
  const char* name;
  const char* dtype;
  const void* data;
  uint64_t bytes;
} gat_array;

/* Replaces the set of named in-memory arrays that specs read with {"memory": NAME} (an input buffer's or
 * constant's "init", a scalar's "value", an output's "expected") by these `n` arrays (n = 0 clears it). The
 * names and dtypes are copied; the data is not (it is read where a file would be read, and hashed into the
 * problem's data tag like a file's bytes). Returns 0, or 2 with gat_last_error() set (a name twice, an empty
 * name, an unknown dtype, bytes not a multiple of the element size). */
GAT_API int gat_set_arrays(const gat_array* arrays, size_t n);

/* Runs the command line `autotune ARGS...` in this process: argv[0] is the program name (ignored), argv[1] the
 * sub-command. Writes to stdout and stderr as the command does (progress, time split, tables). Returns the
 * command's exit code (0 ok, 1 a configuration failed where that is an error, 2 bad input, 3 no GPU,
 * 4 database). */
GAT_API int gat_main(int argc, const char* const* argv);

/* A query answered as JSON. `request` is a JSON object {"op": NAME, ...}; on success *reply is a JSON text (free
 * it with gat_free) and 0 is returned; on failure 2 (bad input: unknown op, missing field, invalid spec), 3 (no
 * GPU), 4 (database) or 5 (anything else) is returned, *reply is NULL and gat_last_error() says why.
 * Ops (docs/python.md "The C interface"):
 *   {"op": "space", "kernel": K, "problem": "x=1000,y=1", "workload": W?, "device": D?}
 *       -> {"parameters": [NAME...], "configs": [{NAME: value...}...], "cartesian": N}: the valid configurations
 *          of kernel K (a built-in name or a spec/T1 file) at that problem, in enumeration order; D is a device
 *          name as `autotune devices` prints it (default: GPU 0 where there is one, else a generic Hopper device).
 *   {"op": "trials", "db": PATH, "session": ID}
 *       -> {"trials": [ROW...]}: every trial of that session, a row being the trials table's columns by name
 *          (config as an object under "config").
 *   {"op": "best", "db": PATH, "kernel": K, "problem": P, "workload": W?, "device": D?}
 *       -> {"config": {...}, "match": LEVEL, "provenance": TEXT, "median_ns": T, ...} as `autotune best --json`.
 *   {"op": "devices"} -> {"devices": [{"name", "cc", "sm_count", ...}]} (empty without a GPU).
 */
GAT_API int gat_query(const char* request, char** reply);

/* The verification of a spec whose top-level "verification" is {"callback": true} (docs/spec-format.md): called
 * on the host after each configuration's verification run, from a thread of the tuner (not the caller's), with
 * every output of the run and the expected values by argument name, as bytes (dtype "uint8": the caller knows the
 * dtypes of the spec it made; the arrays are valid during the call only).
 * Returns 0 when the run is correct; otherwise non-zero, with why in `message` (at most message_size bytes,
 * NUL-terminated). */
typedef int (*gat_verify_fn)(void* user, const char* kernel, const gat_array* outputs, size_t output_count,
                             const gat_array* expected, size_t expected_count, char* message, size_t message_size);
/* Registers the callback (NULL removes it) with `user` handed back to it. Returns 0. */
GAT_API int gat_set_verify_callback(gat_verify_fn fn, void* user);

/* One argument of gat_kernel_launch, in the order of the spec's "arguments": a device pointer (a buffer, or the
 * data of a __constant__), or a number (a scalar). `dtype` is the element type the pointer points to or the
 * number's type ("float32", "int64", ...; NULL or "" where it tells none); it must match the spec's. */
typedef enum gat_arg_kind { GAT_ARG_POINTER = 0, GAT_ARG_INT = 1, GAT_ARG_UINT = 2, GAT_ARG_FLOAT = 3 } gat_arg_kind;
typedef struct gat_arg {
  int kind;          /* a gat_arg_kind */
  const char* dtype; /* a dtype name or NULL */
  uint64_t bits;     /* POINTER: the address; INT: the value's two's complement bits; UINT: the value */
  double value;      /* FLOAT: the value */
} gat_arg;

/* A kernel of a spec (a *.tune.json of family "user" or a T1 file) launched with the configuration the database
 * serves for this GPU and problem (autotune::Kernel, docs/lookup.md). Returns 0 and *kernel, or an error code
 * (2 a bad spec, 3 no GPU, 4 database, 5 other) with *kernel NULL and gat_last_error() set. */
GAT_API int gat_kernel_open(const char* spec_path, const char* db_path, void** kernel);
/* Launches on `stream` (a CUstream / cudaStream_t; 0 the default stream): `problem` the spec's problem dims in its
 * order, `args` one per spec argument. Checks every argument first; returns 0, or 2 (an argument that does not
 * match, named in gat_last_error()), 3 (no GPU, a failed launch) or 5. Asynchronous like any launch. */
GAT_API int gat_kernel_launch(void* kernel, uint64_t stream, const int64_t* problem, size_t problem_dims,
                              const gat_arg* args, size_t arg_count);
/* The configuration a launch of this problem uses, as JSON {"config", "match", "provenance", "binary", ...}
 * (prepares it: lookup, binary, plan). Returns 0 and *reply (free with gat_free), or an error code. */
GAT_API int gat_kernel_choice(void* kernel, const int64_t* problem, size_t problem_dims, char** reply);
/* Releases a kernel (NULL is fine). */
GAT_API void gat_kernel_close(void* kernel);

/* Frees a string this library handed out (NULL is fine). */
GAT_API void gat_free(char* text);

/* The message of the last failed call on this thread ("" if none). */
GAT_API const char* gat_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
