"""tune_kernel's `verify` function as the library's verification callback: what it is given and what it answers,
called as the library calls it (outputs named arg<i>, as bytes), without a GPU."""
import ctypes

import numpy

from gpu_autotune import _lib
from gpu_autotune.kernel_tuner import _Verifier


def call(verifier, outputs):
    """Calls the callback as gat_set_verify_callback's caller does; returns (code, message)."""
    keep = []
    arr = (_lib._GatArray * len(outputs))()
    for k, (name, data) in enumerate(outputs):
        b = numpy.ascontiguousarray(data).tobytes()
        keep.append(ctypes.create_string_buffer(b, len(b)))
        arr[k] = _lib._GatArray(name.encode(), b"uint8", ctypes.cast(keep[-1], ctypes.c_void_p), len(b))
    msg = ctypes.create_string_buffer(256)
    rc = verifier._call(None, b"k", arr, len(outputs), arr, 0, ctypes.cast(msg, ctypes.POINTER(ctypes.c_char)), 256)
    return rc, msg.value.decode()


def test_the_function_gets_answer_and_host_copies_of_the_outputs():
    x = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    partial = numpy.zeros(4, numpy.float32)
    seen = {}

    def verify(answer, result_host, atol=None):
        seen.update(answer=answer, result=result_host, atol=atol)
        return numpy.isclose(answer[0], numpy.sum(result_host[0]), atol=atol)

    args = [partial, x, numpy.int32(6)]
    v = _Verifier(verify, args, [numpy.float32(15.0), None, None], 1e-6)
    rc, _ = call(v, [("arg0", numpy.array([5, 4, 3, 3], numpy.float32))])
    assert rc == 0
    assert seen["atol"] == 1e-6 and seen["result"][1] is None and seen["result"][2] is None
    assert seen["result"][0].dtype == numpy.float32 and seen["result"][0].shape == (4,)
    rc, msg = call(v, [("arg0", numpy.array([5, 4, 3, 2], numpy.float32))])
    assert rc == 1 and "verify returned" in msg


def test_shapes_follow_the_arguments_and_two_argument_functions_work():
    out = numpy.zeros((2, 3), numpy.int32)
    v = _Verifier(lambda answer, result: result[0].shape == (2, 3) and result[0][1, 2] == 7, [out], None, 1e-6)
    assert call(v, [("arg0", numpy.array([[0, 0, 0], [0, 0, 7]], numpy.int32))])[0] == 0


def test_an_exception_is_a_wrong_result_with_its_message():
    def verify(answer, result_host, atol=None):
        raise ValueError("bad shape")

    v = _Verifier(verify, [numpy.zeros(2, numpy.float64)], None, 1e-6)
    rc, msg = call(v, [("arg0", numpy.zeros(2, numpy.float64))])
    assert rc == 1 and msg == "verify raised ValueError: bad shape"
