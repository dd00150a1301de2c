"""The argument values probed, by name. Made in the child (`make`), where `types` and `fn` are the
side's own; names stay plain strings so both sides' results line up."""
from __future__ import annotations

from typing import Any

import numpy as np

# name -> Python expression; `types`, `np`, `torch` are in scope (DataNodes are made by `make`)
PLAIN: dict[str, str] = {
    "int_1": "1", "int_0": "0", "int_neg": "-1", "int_2": "2", "int_huge": "2**31", "int_huge64": "2**64",
    "float_2.0": "2.0", "float_2.5": "2.5", "float_0.5": "0.5", "float_neg": "-0.5", "float_nan": "float('nan')",
    "float_inf": "float('inf')",
    "bool_T": "True", "bool_F": "False",
    "str_num": "'2'", "str_float": "'0.5'", "str_word": "'abc'", "str_empty": "''", "str_true": "'true'",
    "str_HWC": "'HWC'", "str_dtype": "'float32'", "str_FLOAT": "'FLOAT'", "str_linear": "'linear'",
    "str_rgb": "'RGB'",
    "np_int32": "np.int32(2)", "np_int64": "np.int64(2)", "np_float64": "np.float64(0.5)",
    "np_float32_2": "np.float32(2.0)", "np_bool": "np.bool_(True)", "np_uint8": "np.uint8(1)",
    "arr0_int32": "np.array(2, np.int32)", "arr0_float32": "np.array(0.5, np.float32)",
    "arr0_bool": "np.array(True)",
    "arr1_int32": "np.array([2], np.int32)", "arr1_float64": "np.array([0.5])",
    "arr2_int32": "np.array([2, 3], np.int32)", "arr2_int64": "np.array([2, 3], np.int64)",
    "arr2_float32": "np.array([0.5, 0.5], np.float32)", "arr2_float64": "np.array([0.5, 0.5])",
    "arr2_bool": "np.array([True, False])", "arr3_int64": "np.array([1, 0, 2], np.int64)",
    "arr2d_float32": "np.ones((2, 3), np.float32)", "arr_str": "np.array(['abc'])",
    "torch0_int": "torch.tensor(2)", "torch0_float": "torch.tensor(0.5)", "torch1_int": "torch.tensor([2, 3])",
    "none": "None",
    "list_0": "[]", "list_int1": "[2]", "list_int2": "[2, 3]", "tuple_int2": "(2, 3)", "list_int3": "[1, 0, 2]",
    "list_int4": "[1, 1, 2, 2]", "list_float2": "[0.5, 0.5]", "list_frac2": "[2.5, 3.5]",
    "list_bool2": "[True, False]", "list_str1": "['abc']", "list_str2": "['a', 'b']", "list_nested": "[[1, 2], [3, 4]]",
    "list_np2": "[np.int64(2), np.int64(3)]", "list_none": "[None]", "list_strnum": "['2', '3']",
    "dtype_FLOAT": "types.FLOAT", "dtype_UINT8": "types.UINT8", "dtype_INT32": "types.INT32",
    "img_RGB": "types.RGB", "img_GRAY": "types.GRAY", "interp_LINEAR": "types.INTERP_LINEAR",
    "interp_NN": "types.INTERP_NN", "list_dtype": "[types.FLOAT]",
    "torch_dtype": "torch.float32", "np_type": "np.float32", "np_dtype": "np.dtype('float32')",
    "dict": "{}", "set": "{1}", "callable": "(lambda *a: a[0] if a else 0)", "bytes": "b'ab'",
    "complex": "1j", "object": "object()",
}

# name -> (sample value) for DataNodes fed by an external source: per-sample (tensor) arguments
NODES: dict[str, str] = {
    "dn_int0": "np.array(2, np.int32)", "dn_float0": "np.array(0.5, np.float32)",
    "dn_bool0": "np.array(True)", "dn_int1": "np.array([2, 3], np.int32)",
    "dn_float1": "np.array([0.5, 0.5], np.float32)", "dn_int64_0": "np.array(2, np.int64)",
    "dn_float64_0": "np.array(0.5, np.float64)",
}

NAMES = list(PLAIN) + list(NODES)


def make(name: str, fn: Any, types: Any, batch: int) -> Any:
    """The value called `name`; a DataNode for the `dn_` names (call inside a pipeline)."""
    import torch  # both venvs have torch
    if name in NODES:
        sample = eval(NODES[name], {"np": np})
        return fn.external_source(source=_batch(sample, batch))
    return eval(PLAIN[name], {"np": np, "types": types, "torch": torch})


def _batch(sample: np.ndarray, batch: int) -> Any:
    return lambda: [sample.copy() for _ in range(batch)]

# the default sweep (`--values all` probes every name above): one value of each kind that the
# full list showed to behave differently
CORE = ["int_1", "int_0", "int_neg", "int_huge", "float_2.0", "float_2.5", "bool_T", "str_num", "str_word",
        "str_dtype", "np_int64", "np_float64", "arr0_int32", "arr1_int32", "arr2_int32", "arr2_int64",
        "arr2_float32", "arr2_float64", "torch0_int", "none", "list_0", "list_int1", "list_int2", "list_float2",
        "list_frac2", "list_str1", "dtype_FLOAT", "img_RGB", "interp_LINEAR", "torch_dtype",
        "dn_int0", "dn_float0", "dn_int1", "dn_float1", "dn_float64_0"]
