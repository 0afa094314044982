/* gpu_autotune._fastlaunch: the launch path of gpu_autotune.Kernel (python/gpu_autotune/launch.py) in C.
 *
 * Through ctypes, Kernel.launch costs about 7.4 us per call on the host over autotune::Kernel::launch
 * (docs/python.md): five ctypes structs filled from Python, then ctypes' own call. A Launcher does the same work
 * here: it reads the stream, the problem and the arguments into arrays on its stack and calls gat_kernel_launch
 * through the address Python hands it; this extension does not link libgpu_autotune (nor libpython).
 *
 * It knows the common cases only. For anything else, and for every error (a bool, a host array, an unknown type or
 * dtype, a number out of 64 bits, too many arguments or dims, an exception of an attribute), launch() returns None
 * without launching, and launch.py runs its Python path, whose messages stay the only ones. Which Python types are
 * which kind, and the dtype names, come from launch.py's own caches and helpers (the constructor's arguments), so
 * the rules live in one place.
 *
 * Built on the stable ABI (Py_LIMITED_API 3.8): one _fastlaunch.abi3.so loads in every CPython from 3.8 on.
 */
#define Py_LIMITED_API 0x03080000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>

#include "gpu_autotune.h"

/* Only the type of gat_kernel_launch is taken from the header: the address comes from Python at run time. */
typedef __typeof__(gat_kernel_launch)* LaunchFn;

enum { MAX_ARGS = 64, MAX_DIMS = 8 }; /* as launch.py's ctypes buffers and gat_kernel_launch's limit */

/* What a Python type is to the fast path (launch.py maps its extractors to these). */
enum Kind { KIND_INT = 0, KIND_FLOAT = 1, KIND_OWN = 2, KIND_CUPY = 3, KIND_TORCH = 4, KIND_INTERFACE = 5 };

typedef struct {
  PyObject ob_base; /* what PyObject_HEAD declares */
  LaunchFn launch;
  void* kernel;
  Py_ssize_t max_args;
  PyObject* kinds;         /* dict: Python type -> kind (int) or None (the Python path's) */
  PyObject* kind_of;       /* callable(type, arg, index) -> kind or None; fills `kinds` */
  PyObject* dtype_names;   /* dict: dtype object or typestr -> the project's dtype name (bytes) */
  PyObject* dtype_of;      /* callable(key, is_torch, index) -> bytes; fills `dtype_names` */
  PyObject* stream_handle; /* callable(stream) -> int */
  PyObject* last_stream;   /* the last stream object that was not an int (NULL before one), and its handle */
  uint64_t last_handle;
} Launcher;

/* The dtype names (bytes) a call points into, held until gat_kernel_launch returns. */
typedef struct {
  PyObject* items[MAX_ARGS];
  Py_ssize_t n;
} Held;

static void release(Held* held) {
  for (Py_ssize_t i = 0; i < held->n; ++i) Py_DECREF(held->items[i]);
  held->n = 0;
}

/* An int of 64 bits or less, as launch.py's _set_int: INT with its two's complement bits when negative, UINT
 * otherwise. 0 without an error set for a value out of that range (the Python path masks it). */
static int int_arg(PyObject* v, gat_arg* slot) {
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (x == -1 && PyErr_Occurred()) return 0;
  if (overflow == 0) {
    slot->kind = x < 0 ? GAT_ARG_INT : GAT_ARG_UINT;
    slot->bits = (uint64_t)x;
    return 1;
  }
  if (overflow < 0) return 0;
  unsigned long long u = PyLong_AsUnsignedLongLong(v);
  if (u == (unsigned long long)-1 && PyErr_Occurred()) return 0;
  slot->kind = GAT_ARG_UINT;
  slot->bits = u;
  return 1;
}

/* A device pointer: an int of 0 .. 2^64 - 1 (anything else is the Python path's). */
static int pointer_value(PyObject* p, uint64_t* bits) {
  if (!PyLong_Check(p)) return 0;
  unsigned long long u = PyLong_AsUnsignedLongLong(p);
  if (u == (unsigned long long)-1 && PyErr_Occurred()) return 0;
  *bits = u;
  return 1;
}

static PyObject* index_object(Py_ssize_t index) { return PyLong_FromSsize_t(index); }

/* The dtype name of `key` from launch.py's dict, or from its helper on a miss; held until the launch returns. */
static int dtype_name(Launcher* self, PyObject* key, int is_torch, Py_ssize_t index, gat_arg* slot, Held* held) {
  PyObject* name = PyDict_GetItemWithError(self->dtype_names, key);
  if (name != NULL) {
    Py_INCREF(name);
  } else {
    if (PyErr_Occurred()) return 0;
    PyObject* i = index_object(index);
    if (i == NULL) return 0;
    name = PyObject_CallFunctionObjArgs(self->dtype_of, key, is_torch ? Py_True : Py_False, i, NULL);
    Py_DECREF(i);
    if (name == NULL) return 0;
  }
  if (!PyBytes_Check(name)) {
    Py_DECREF(name);
    return 0;
  }
  slot->dtype = PyBytes_AsString(name);
  held->items[held->n++] = name;
  return slot->dtype != NULL;
}

/* A pointer argument: its address from `ptr` and its dtype from `dtype` (the key of the dtype dict). Steals both
 * references (either may be NULL after a failed lookup). */
static int pointer_arg(Launcher* self, PyObject* ptr, PyObject* dtype, int is_torch, Py_ssize_t index, gat_arg* slot,
                       Held* held) {
  int ok = ptr != NULL && dtype != NULL && pointer_value(ptr, &slot->bits);
  if (ok) {
    slot->kind = GAT_ARG_POINTER;
    ok = dtype_name(self, dtype, is_torch, index, slot, held);
  }
  Py_XDECREF(ptr);
  Py_XDECREF(dtype);
  return ok;
}

/* __cuda_array_interface__: data[0] (None or 0 is a null pointer, as launch.py's `or 0`) and typestr. */
static int interface_arg(Launcher* self, PyObject* a, Py_ssize_t index, gat_arg* slot, Held* held) {
  PyObject* cai = PyObject_GetAttrString(a, "__cuda_array_interface__");
  if (cai == NULL) return 0;
  PyObject* data = PyMapping_GetItemString(cai, "data");
  PyObject* typestr = data != NULL ? PyMapping_GetItemString(cai, "typestr") : NULL;
  Py_DECREF(cai);
  PyObject* ptr = typestr != NULL ? PySequence_GetItem(data, 0) : NULL;
  Py_XDECREF(data);
  if (ptr != NULL) {
    int truth = PyObject_IsTrue(ptr);
    if (truth <= 0) {
      Py_DECREF(ptr);
      ptr = truth == 0 ? PyLong_FromLong(0) : NULL;
    }
  }
  return pointer_arg(self, ptr, typestr, 0, index, slot, held);
}

static int torch_arg(Launcher* self, PyObject* a, Py_ssize_t index, gat_arg* slot, Held* held) {
  PyObject* on_gpu = PyObject_GetAttrString(a, "is_cuda");
  if (on_gpu == NULL) return 0;
  int truth = PyObject_IsTrue(on_gpu);
  Py_DECREF(on_gpu);
  if (truth <= 0) return 0; /* a tensor on the CPU: the Python path names it */
  PyObject* ptr = PyObject_CallMethod(a, "data_ptr", NULL);
  PyObject* dtype = ptr != NULL ? PyObject_GetAttrString(a, "dtype") : NULL;
  return pointer_arg(self, ptr, dtype, 1, index, slot, held);
}

static int cupy_arg(Launcher* self, PyObject* a, Py_ssize_t index, gat_arg* slot, Held* held) {
  PyObject* data = PyObject_GetAttrString(a, "data");
  if (data == NULL) return 0;
  PyObject* ptr = PyObject_GetAttrString(data, "ptr");
  Py_DECREF(data);
  PyObject* dtype = ptr != NULL ? PyObject_GetAttrString(a, "dtype") : NULL;
  return pointer_arg(self, ptr, dtype, 0, index, slot, held);
}

/* The kind of a's type: launch.py's dict, or its helper on a miss. -1 for the Python path's types and errors. */
static long kind_of(Launcher* self, PyObject* a, Py_ssize_t index) {
  PyObject* type = (PyObject*)Py_TYPE(a);
  PyObject* kind = PyDict_GetItemWithError(self->kinds, type);
  if (kind != NULL) {
    Py_INCREF(kind);
  } else {
    if (PyErr_Occurred()) return -1;
    PyObject* i = index_object(index);
    if (i == NULL) return -1;
    kind = PyObject_CallFunctionObjArgs(self->kind_of, type, a, i, NULL);
    Py_DECREF(i);
    if (kind == NULL) return -1;
  }
  long k = kind == Py_None ? -1 : PyLong_AsLong(kind);
  Py_DECREF(kind);
  return k;
}

/* One argument (index counts from 1, as the messages do) into `slot`. */
static int read_arg(Launcher* self, PyObject* a, Py_ssize_t index, gat_arg* slot, Held* held) {
  slot->dtype = NULL;
  slot->bits = 0;
  slot->value = 0.0;
  switch (kind_of(self, a, index)) {
    case KIND_INT: {
      PyObject* v = Py_TYPE(a) == &PyLong_Type ? (Py_INCREF(a), a) : PyNumber_Long(a); /* int(a) */
      if (v == NULL) return 0;
      int ok = int_arg(v, slot);
      Py_DECREF(v);
      return ok;
    }
    case KIND_FLOAT: {
      PyObject* v = Py_TYPE(a) == &PyFloat_Type ? (Py_INCREF(a), a) : PyNumber_Float(a); /* float(a) */
      if (v == NULL) return 0;
      slot->kind = GAT_ARG_FLOAT;
      slot->value = PyFloat_AsDouble(v);
      Py_DECREF(v);
      return !PyErr_Occurred();
    }
    case KIND_OWN: { /* gpu_autotune.cuda_memory.DeviceArray */
      PyObject* ptr = PyObject_GetAttrString(a, "ptr");
      PyObject* dtype = ptr != NULL ? PyObject_GetAttrString(a, "dtype") : NULL;
      return pointer_arg(self, ptr, dtype, 0, index, slot, held);
    }
    case KIND_CUPY:
      return cupy_arg(self, a, index, slot, held);
    case KIND_TORCH:
      return torch_arg(self, a, index, slot, held);
    case KIND_INTERFACE:
      return interface_arg(self, a, index, slot, held);
    default:
      return 0;
  }
}

static int read_args(Launcher* self, PyObject* seq, gat_arg* out, Held* held, Py_ssize_t* count) {
  int is_list = PyList_Check(seq);
  if (!is_list && !PyTuple_Check(seq)) return 0;
  Py_ssize_t n = is_list ? PyList_Size(seq) : PyTuple_Size(seq);
  if (n < 0 || n > self->max_args) return 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* a = is_list ? PyList_GetItem(seq, i) : PyTuple_GetItem(seq, i);
    if (a == NULL) return 0; /* a list that an attribute's code shortened */
    Py_INCREF(a);            /* the attributes' code may drop the list's reference */
    int ok = read_arg(self, a, i + 1, &out[i], held);
    Py_DECREF(a);
    if (!ok) return 0;
  }
  *count = n;
  return 1;
}

/* One dim: int(d) within int64 (beyond it the Python path masks). */
static int read_dim(PyObject* d, int64_t* dim) {
  PyObject* v = PyLong_Check(d) ? (Py_INCREF(d), d) : PyNumber_Long(d);
  if (v == NULL) return 0;
  int overflow = 0;
  long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  Py_DECREF(v);
  if ((x == -1 && PyErr_Occurred()) || overflow != 0) return 0;
  *dim = (int64_t)x;
  return 1;
}

/* The problem: an int, or a list or tuple of at most MAX_DIMS (any other sequence is the Python path's). */
static int read_problem(PyObject* problem, int64_t* dims, size_t* n_dims) {
  if (PyLong_Check(problem)) {
    *n_dims = 1;
    return read_dim(problem, &dims[0]);
  }
  int is_list = PyList_Check(problem);
  if (!is_list && !PyTuple_Check(problem)) return 0;
  Py_ssize_t n = is_list ? PyList_Size(problem) : PyTuple_Size(problem);
  if (n < 0 || n > MAX_DIMS) return 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* d = is_list ? PyList_GetItem(problem, i) : PyTuple_GetItem(problem, i);
    if (d == NULL) return 0;
    Py_INCREF(d);
    int ok = read_dim(d, &dims[i]);
    Py_DECREF(d);
    if (!ok) return 0;
  }
  *n_dims = (size_t)n;
  return 1;
}

/* The stream's handle: an int as it is; the last stream object's handle remembered (a stream's handle does not
 * change while it lives, and it lives: it is held here); any other object through launch.py's stream_handle. */
static int read_stream(Launcher* self, PyObject* stream, uint64_t* handle) {
  if (Py_TYPE(stream) == &PyLong_Type) return pointer_value(stream, handle);
  if (stream == self->last_stream) {
    *handle = self->last_handle;
    return 1;
  }
  PyObject* h = PyObject_CallFunctionObjArgs(self->stream_handle, stream, NULL);
  if (h == NULL) return 0;
  int ok = pointer_value(h, handle);
  Py_DECREF(h);
  if (!ok) return 0;
  PyObject* old = self->last_stream;
  Py_INCREF(stream);
  self->last_stream = stream;
  Py_XDECREF(old);
  self->last_handle = *handle;
  return 1;
}

/* None, for launch.py to run its Python path: after an exception only of the Exception family (KeyboardInterrupt
 * and SystemExit go on up). */
static PyObject* python_path(void) {
  if (PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return NULL;
    PyErr_Clear();
  }
  Py_RETURN_NONE;
}

static PyObject* launcher_launch(Launcher* self, PyObject* call_args) {
  PyObject *stream, *problem, *seq;
  if (!PyArg_UnpackTuple(call_args, "launch", 3, 3, &stream, &problem, &seq)) return NULL;
  gat_arg out[MAX_ARGS];
  int64_t dims[MAX_DIMS];
  size_t n_dims = 0;
  uint64_t handle = 0;
  Py_ssize_t count = 0;
  Held held;
  held.n = 0;
  if (!read_stream(self, stream, &handle) || !read_problem(problem, dims, &n_dims) ||
      !read_args(self, seq, out, &held, &count)) {
    release(&held);
    return python_path();
  }
  /* As ctypes does: other threads run during the launch (the memory it reads is on this stack or held). */
  PyThreadState* saved = PyEval_SaveThread();
  int rc = self->launch(self->kernel, handle, dims, n_dims, out, (size_t)count);
  PyEval_RestoreThread(saved);
  release(&held);
  return PyLong_FromLong(rc);
}

static int launcher_traverse(Launcher* self, visitproc visit, void* arg) {
  Py_VISIT(self->kinds);
  Py_VISIT(self->kind_of);
  Py_VISIT(self->dtype_names);
  Py_VISIT(self->dtype_of);
  Py_VISIT(self->stream_handle);
  Py_VISIT(self->last_stream);
  Py_VISIT((PyObject*)Py_TYPE(self));
  return 0;
}

static int launcher_clear(Launcher* self) {
  Py_CLEAR(self->kinds);
  Py_CLEAR(self->kind_of);
  Py_CLEAR(self->dtype_names);
  Py_CLEAR(self->dtype_of);
  Py_CLEAR(self->stream_handle);
  Py_CLEAR(self->last_stream);
  return 0;
}

static void launcher_dealloc(Launcher* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  launcher_clear(self);
  freefunc free_slot = (freefunc)PyType_GetSlot(type, Py_tp_free);
  free_slot(self);
  Py_DECREF(type);
}

static int address_of(PyObject* o, const char* what, void** address) {
  unsigned long long a = PyLong_AsUnsignedLongLong(o);
  if (a == (unsigned long long)-1 && PyErr_Occurred()) return 0;
  if (a == 0) {
    PyErr_Format(PyExc_ValueError, "Launcher: %s is 0 (NULL)", what);
    return 0;
  }
  *address = (void*)(uintptr_t)a;
  return 1;
}

static PyObject* launcher_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  PyObject *fn, *kernel, *kinds, *kind_of, *dtype_names, *dtype_of, *stream_handle;
  Py_ssize_t max_args;
  static char* names[] = {"launch_address", "kernel",   "max_args",      "kinds", "kind_of",
                          "dtype_names",    "dtype_of", "stream_handle", NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOnO!OO!OO:Launcher", names, &fn, &kernel, &max_args, &PyDict_Type,
                                   &kinds, &kind_of, &PyDict_Type, &dtype_names, &dtype_of, &stream_handle)) {
    return NULL;
  }
  void *fn_address, *kernel_address;
  if (!address_of(fn, "launch_address", &fn_address) || !address_of(kernel, "kernel", &kernel_address)) return NULL;
  if (max_args < 0 || max_args > MAX_ARGS) {
    return PyErr_Format(PyExc_ValueError, "Launcher: max_args must be 0 .. %d, got %zd", (int)MAX_ARGS, max_args);
  }
  PyObject* callables[] = {kind_of, dtype_of, stream_handle};
  const char* callable_names[] = {"kind_of", "dtype_of", "stream_handle"};
  for (int i = 0; i < 3; ++i) {
    if (!PyCallable_Check(callables[i])) {
      return PyErr_Format(PyExc_TypeError, "Launcher: %s is not callable", callable_names[i]);
    }
  }
  allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
  Launcher* self = (Launcher*)alloc(type, 0);
  if (self == NULL) return NULL;
  self->launch = (LaunchFn)fn_address;
  self->kernel = kernel_address;
  self->max_args = max_args;
  Py_INCREF(kinds);
  self->kinds = kinds;
  Py_INCREF(kind_of);
  self->kind_of = kind_of;
  Py_INCREF(dtype_names);
  self->dtype_names = dtype_names;
  Py_INCREF(dtype_of);
  self->dtype_of = dtype_of;
  Py_INCREF(stream_handle);
  self->stream_handle = stream_handle;
  self->last_stream = NULL;
  self->last_handle = 0;
  return (PyObject*)self;
}

static PyMethodDef launcher_methods[] = {
    {"launch", (PyCFunction)launcher_launch, METH_VARARGS,
     "launch(stream, problem, args) -> gat_kernel_launch's return code, or None (nothing launched) where the "
     "Python path must run: a case this path does not know, or any error."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot launcher_slots[] = {
    {Py_tp_new, (void*)launcher_new},
    {Py_tp_dealloc, (void*)launcher_dealloc},
    {Py_tp_traverse, (void*)launcher_traverse},
    {Py_tp_clear, (void*)launcher_clear},
    {Py_tp_methods, (void*)launcher_methods},
    {Py_tp_doc,
     (void*)"Launcher(launch_address, kernel, max_args, kinds, kind_of, dtype_names, dtype_of, stream_handle): "
            "gat_kernel_launch (at launch_address) of one kernel handle, called from C (gpu_autotune.launch)."},
    {0, NULL}};

static PyType_Spec launcher_spec = {"gpu_autotune._fastlaunch.Launcher", sizeof(Launcher), 0,
                                    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, launcher_slots};

/* A function of gat_kernel_launch's type that launches nothing and returns 0: the host cost of a launch path
 * without the library or a GPU (bench/python_launch.py, tests). */
static int null_launch(void* kernel, uint64_t stream, const int64_t* problem, size_t problem_dims, const gat_arg* args,
                       size_t arg_count) {
  (void)kernel, (void)stream, (void)problem, (void)problem_dims, (void)args, (void)arg_count;
  return 0;
}

static PyObject* null_launch_address(PyObject* module, PyObject* unused) {
  (void)module, (void)unused;
  LaunchFn fn = null_launch;
  return PyLong_FromVoidPtr((void*)fn);
}

static PyMethodDef module_methods[] = {
    {"null_launch_address", null_launch_address, METH_NOARGS,
     "The address of a function of gat_kernel_launch's type that does nothing and returns 0."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    "gpu_autotune._fastlaunch",
    "The launch path of gpu_autotune.Kernel in C (python/ext/fastlaunch.c); launch.py uses it where it imports.",
    -1,
    module_methods,
    NULL,
    NULL,
    NULL,
    NULL};

PyMODINIT_FUNC PyInit__fastlaunch(void) {
  PyObject* m = PyModule_Create(&module_def);
  if (m == NULL) return NULL;
  PyObject* type = PyType_FromSpec(&launcher_spec);
  if (type == NULL || PyModule_AddObject(m, "Launcher", type) < 0) {
    Py_XDECREF(type);
    Py_DECREF(m);
    return NULL;
  }
  if (PyModule_AddIntConstant(m, "KIND_INT", KIND_INT) < 0 ||
      PyModule_AddIntConstant(m, "KIND_FLOAT", KIND_FLOAT) < 0 ||
      PyModule_AddIntConstant(m, "KIND_OWN", KIND_OWN) < 0 || PyModule_AddIntConstant(m, "KIND_CUPY", KIND_CUPY) < 0 ||
      PyModule_AddIntConstant(m, "KIND_TORCH", KIND_TORCH) < 0 ||
      PyModule_AddIntConstant(m, "KIND_INTERFACE", KIND_INTERFACE) < 0 ||
      PyModule_AddIntConstant(m, "MAX_ARGS", MAX_ARGS) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
