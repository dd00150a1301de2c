"""Cases for the tensor ops (transpose, squeeze, expand_dims, element_extract, cat, stack, one_hot,
get_property, permute_batch, reductions.*, tensor_resize), shared by the DALI table generator
(tensor_make.py) and the tests. NumPy only: `graph` builds the pipeline body from DALI's or
torch_dali's `fn` and `types` (their APIs are the same), so both sides run one definition.

A case: the op's `fn` path, its inputs (named batches with layouts), constant arguments (dtypes and
interpolation types by name), per-sample arguments (one value per sample, fed by an external
source), and optionally `mean` (std_dev/variance: the second input is `reductions.mean` of the
first with these arguments, or a constant). A case DALI refuses is stored as its error, and the
test expects torch_dali to refuse it too.
"""
from __future__ import annotations

from typing import Any

import numpy as np

TABLES = "tensor_tables.npz"  # beside this file


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _u8(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return _rng(seed).integers(0, 256, shape).astype(np.uint8)


def _f32(shape: tuple[int, ...], seed: int, lo: float = -10.0, hi: float = 10.0) -> np.ndarray:
    return (lo + (hi - lo) * _rng(seed).random(shape)).astype(np.float32)


def _ints(shape: tuple[int, ...], seed: int, lo: int, hi: int, dt: Any) -> np.ndarray:
    return _rng(seed).integers(lo, hi, shape).astype(dt)


def inputs() -> dict[str, list[np.ndarray]]:
    """Named input batches (a list of samples each)."""
    return {
        "u8_hwc": [_u8((4, 5, 3), 1), _u8((6, 2, 3), 2)],
        "u8_hwc_b": [_u8((4, 5, 3), 3), _u8((6, 2, 3), 4)],
        "u8_hwc_w": [_u8((4, 2, 3), 5), _u8((6, 7, 3), 6)],
        "u8_dense": [_u8((3, 4, 2), 7), _u8((3, 4, 2), 8), _u8((3, 4, 2), 9)],
        "u8_dense_b": [_u8((3, 4, 2), 10), _u8((3, 4, 2), 11), _u8((3, 4, 2), 12)],
        "f32_4d": [_f32((2, 3, 4, 5), 13), _f32((3, 1, 2, 2), 14)],
        "f32_2d": [_f32((3, 7), 15), _f32((5, 2), 16)],
        "f32_scalar": [np.float32(1.5), np.float32(-2.0), np.float32(7.25)],
        "f32_scalar_b": [np.float32(3.0), np.float32(0.5), np.float32(-1.0)],
        "u8_ones": [_u8((1, 5, 1), 17), _u8((1, 3, 1), 18)],
        "u8_empty": [np.zeros((4, 0, 0), np.uint8)],
        "u8_seq": [_u8((5, 4, 3, 2), 19), _u8((3, 2, 3, 2), 20)],
        "i32_seq": [_ints((4, 6), 21, -1000, 1000, np.int32), _ints((6, 3), 22, -1000, 1000, np.int32)],
        "i32_labels": [_ints((), 23, 0, 6, np.int32), _ints((), 24, 0, 6, np.int32),
                       np.int32(9), np.int32(-1)],
        "i32_label_1": [np.array([[3]], np.int32), np.array([[0]], np.int32)],
        "i32_maps": [_ints((3, 4), 25, -1, 7, np.int32), _ints((2, 5), 26, 0, 6, np.int32)],
        "f32_maps": [np.array([0.0, 1.7, 2.5, 3.99, -0.5, 6.0], np.float32)],
        "i64_maps": [_ints((4, 2, 3), 27, 0, 4, np.int64)],
        "u8_batch4": [_u8((2, 3), 28), _u8((4, 1), 29), _u8((3, 3), 30), _u8((1, 5), 31)],
    }


def _case(op: str, ins: Any, **kw: Any) -> dict[str, Any]:
    """`ins`: one input name, or a list of (name, layout) pairs."""
    if isinstance(ins, str):
        ins = [(ins, kw.pop("layout", None))]
    return dict(op=op, inputs=ins, **kw)


_AXES = {
    "transpose_default": _case("transpose", "u8_hwc", layout="HWC"),
    "transpose_chw": _case("transpose", "u8_hwc", layout="HWC", args=dict(perm=[2, 0, 1])),
    "transpose_dense": _case("transpose", "u8_dense", layout="HWC", args=dict(perm=[1, 2, 0])),
    "transpose_keep_layout": _case("transpose", "u8_hwc", layout="HWC",
                                   args=dict(perm=[2, 0, 1], transpose_layout=False)),
    "transpose_output_layout": _case("transpose", "f32_4d", layout="FHWC",
                                     args=dict(perm=[0, 3, 1, 2], output_layout="ABCD")),
    "transpose_no_layout": _case("transpose", "f32_4d", args=dict(perm=[3, 1, 0, 2])),
    "transpose_scalar": _case("transpose", "f32_scalar"),
    "transpose_bad_perm": _case("transpose", "u8_hwc", layout="HWC", args=dict(perm=[0, 0, 1])),
    "transpose_short_perm": _case("transpose", "u8_hwc", layout="HWC", args=dict(perm=[1, 0])),
    "squeeze_axes": _case("squeeze", "u8_ones", layout="XYZ", args=dict(axes=[0, 2])),
    "squeeze_names": _case("squeeze", "u8_ones", layout="XYZ", args=dict(axis_names="Z")),
    "squeeze_empty": _case("squeeze", "u8_empty", layout="XYZ", args=dict(axes=[1])),
    "squeeze_not_one": _case("squeeze", "u8_ones", layout="XYZ", args=dict(axes=[1])),
    "squeeze_missing_name": _case("squeeze", "u8_ones", layout="XYZ", args=dict(axis_names="C")),
    "squeeze_nothing": _case("squeeze", "u8_ones", layout="XYZ"),
    "expand_front": _case("expand_dims", "u8_hwc", layout="HWC", args=dict(axes=[0], new_axis_names="F")),
    "expand_many": _case("expand_dims", "f32_2d", layout="HW", args=dict(axes=[0, 2, 4], new_axis_names="ABC")),
    "expand_reversed": _case("expand_dims", "u8_hwc", layout="HWC", args=dict(axes=[4, 3], new_axis_names="AB")),
    "expand_unnamed": _case("expand_dims", "u8_dense", layout="HWC", args=dict(axes=[1])),
    "expand_scalar": _case("expand_dims", "f32_scalar", args=dict(axes=[0, 1], new_axis_names="XY")),
    "expand_nothing": _case("expand_dims", "f32_2d", layout="HW", args=dict(axes=[])),
    "expand_too_far": _case("expand_dims", "u8_hwc", layout="HWC", args=dict(axes=[5])),
    "expand_names_no_layout": _case("expand_dims", "u8_hwc", args=dict(axes=[0], new_axis_names="F")),
    "extract_two": _case("element_extract", "u8_seq", layout="FHWC", args=dict(element_map=[0, 2])),
    "extract_repeat": _case("element_extract", "i32_seq", layout="FX", args=dict(element_map=[1, 1, 0])),
    "extract_no_layout": _case("element_extract", "i32_seq", args=dict(element_map=[3])),
    "extract_out_of_range": _case("element_extract", "u8_seq", layout="FHWC", args=dict(element_map=[4])),
    "extract_not_sequence": _case("element_extract", "u8_seq", layout="HWCF", args=dict(element_map=[0])),
}
_JOIN = {
    "cat_axis0": _case("cat", [("u8_hwc", "HWC"), ("u8_hwc_b", "HWC")]),
    "cat_axis1": _case("cat", [("u8_hwc", "HWC"), ("u8_hwc_w", "HWC")], args=dict(axis=1)),
    "cat_negative": _case("cat", [("u8_hwc", "HWC"), ("u8_hwc_b", "HWC"), ("u8_hwc", "HWC")], args=dict(axis=-1)),
    "cat_name": _case("cat", [("u8_hwc", "HWC"), ("u8_hwc_w", None)], args=dict(axis_name="W")),
    "cat_name_first_layout": _case("cat", [("u8_hwc", None), ("u8_hwc_w", "HWC")], args=dict(axis_name="W")),
    "cat_layout_first": _case("cat", [("u8_hwc", None), ("u8_hwc_b", "HWC")]),
    "cat_dense": _case("cat", [("u8_dense", "HWC"), ("u8_dense_b", "HWC")], args=dict(axis=2)),
    "cat_mismatch": _case("cat", [("u8_hwc", "HWC"), ("u8_hwc_w", "HWC")], args=dict(axis=0)),
    "cat_types": _case("cat", [("u8_hwc", "HWC"), ("f32_2d", "HW")]),
    "stack_axis0": _case("stack", [("u8_hwc", "HWC"), ("u8_hwc_b", "HWC")]),
    "stack_interleave": _case("stack", [("u8_hwc", "HWC"), ("u8_hwc_b", "HWC")], args=dict(axis=3)),
    "stack_negative": _case("stack", [("u8_hwc", "HWC"), ("u8_hwc_b", "HWC")], args=dict(axis=-1)),
    "stack_named": _case("stack", [("u8_dense", "HWC"), ("u8_dense_b", "HWC")], args=dict(axis=1, axis_name="F")),
    "stack_scalars": _case("stack", [("f32_scalar", None), ("f32_scalar_b", None)], args=dict(axis_name="X")),
    "stack_mismatch": _case("stack", [("u8_hwc", "HWC"), ("u8_hwc_w", "HWC")]),
    "stack_out_of_range": _case("stack", [("u8_hwc", "HWC"), ("u8_hwc_b", "HWC")], args=dict(axis=4)),
}
_VALUES = {
    "one_hot_scalars": _case("one_hot", "i32_labels", args=dict(num_classes=7)),
    "one_hot_scalars_named": _case("one_hot", "i32_labels", args=dict(num_classes=7, axis_name="O", dtype="INT32")),
    "one_hot_legacy": _case("one_hot", "i32_label_1", layout="AB", args=dict(num_classes=5, axis_name="O")),
    "one_hot_legacy_axis": _case("one_hot", "i32_label_1", layout="AB", args=dict(num_classes=5, axis=0)),
    "one_hot_maps_last": _case("one_hot", "i32_maps", layout="HW", args=dict(num_classes=6, axis_name="C")),
    "one_hot_maps_axis0": _case("one_hot", "i32_maps", layout="HW", args=dict(num_classes=6, axis=0, axis_name="C")),
    "one_hot_maps_axis1": _case("one_hot", "i32_maps", args=dict(num_classes=6, axis=1, dtype="UINT8")),
    "one_hot_values": _case("one_hot", "i32_maps", args=dict(num_classes=4, on_value=-2.5, off_value=0.25)),
    "one_hot_wrap": _case("one_hot", "f32_maps", args=dict(num_classes=5, dtype="UINT8", on_value=300.0,
                                                           off_value=-1.5)),
    "one_hot_i64_i16": _case("one_hot", "i64_maps", layout="ABC", args=dict(num_classes=4, axis=2, dtype="INT16",
                                                                           on_value=7.9)),
    "one_hot_bad_axis": _case("one_hot", "i32_maps", args=dict(num_classes=3, axis=3)),
    "one_hot_name_no_layout": _case("one_hot", "i32_maps", args=dict(num_classes=3, axis_name="O")),
    "one_hot_long_name": _case("one_hot", "i32_maps", layout="HW", args=dict(num_classes=3, axis_name="OO")),
    "property_layout": _case("get_property", "u8_hwc", layout="HWC", args=dict(key="layout")),
    "property_no_layout": _case("get_property", "f32_2d", args=dict(key="layout")),
    "property_bad_key": _case("get_property", "f32_2d", args=dict(key="color")),
    "permute_const": _case("permute_batch", "u8_batch4", layout="HW", args=dict(indices=[3, 0, 0, 2])),
    "permute_per_sample": _case("permute_batch", "u8_batch4", per_sample=dict(indices=[1, 1, 3, 0])),
    "permute_out_of_range": _case("permute_batch", "u8_batch4", args=dict(indices=[0, 1, 2, 4])),
    "permute_wrong_length": _case("permute_batch", "u8_batch4", args=dict(indices=[0, 1])),
}
CASES: dict[str, dict[str, Any]] = {**_AXES, **_JOIN, **_VALUES}


def _feed(batch: list[np.ndarray]) -> Any:
    """A source taking no arguments (DALI passes an iteration index to one that takes any)."""
    return lambda: list(batch)


_TYPE_ARGS = ("dtype",)
_INTERP_ARGS = ("interp_type", "min_filter", "mag_filter")


def graph(fn: Any, types: Any, case: dict[str, Any], feeds: dict[str, list[np.ndarray]]) -> Any:
    """The case's pipeline body on DALI's or torch_dali's `fn`/`types`: its output node(s)."""
    ins = [fn.external_source(source=_feed(feeds[name]), batch=True, layout=lay) for name, lay in case["inputs"]]
    kw = dict(case.get("args", {}))
    for key in _TYPE_ARGS:
        if key in kw:
            kw[key] = getattr(types, kw[key])
    for key in _INTERP_ARGS:
        if key in kw:
            kw[key] = getattr(types, kw[key])
    for key, values in case.get("per_sample", {}).items():
        dt = np.float32 if key in case.get("float_args", ()) else np.int32
        kw[key] = fn.external_source(source=_feed([np.array(v, dtype=dt) for v in values]), batch=True)
    if "mean" in case:
        mean = case["mean"]
        ins.append(fn.reductions.mean(ins[0], **mean) if isinstance(mean, dict) else types.Constant(mean))
    op = fn
    for part in case["op"].split("."):
        op = getattr(op, part)
    return op(*ins, **kw)


def all_cases() -> dict[str, dict[str, Any]]:
    """Every case, the reductions' and tensor_resize's included."""
    from . import tensor_cases_more
    return {**CASES, **tensor_cases_more.CASES}


def batch_size(case: dict[str, Any]) -> int:
    if not case["inputs"]:
        return int(case.get("batch") or len(next(iter(case["per_sample"].values()))))
    return len(inputs_for(case)[case["inputs"][0][0]])


def inputs_for(case: dict[str, Any]) -> dict[str, list[np.ndarray]]:
    from . import tensor_cases_more
    return {**inputs(), **tensor_cases_more.inputs()}
