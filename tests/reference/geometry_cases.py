"""Cases for the geometry ops (warps, transforms, regions, crop generators), run the same way on
DALI (the table generator, `geometry_make_tables.py`) and on torch_dali (the tests).

NumPy only. A case names an `fn` path, its positional inputs (a batch per input, with a layout),
its constant arguments, and its per-sample argument inputs; `run_case` builds one CPU pipeline
with whichever `fn` / `pipeline_def` / `types` it is handed, so both sides run the same code.
Cases DALI refuses are stored as refusals and the tests check that torch_dali refuses them too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

TABLES = "geometry_tables.npz"


def noise(shape: tuple[int, ...], seed: int, dtype: Any = np.uint8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        return (rng.random(shape) * 300.0 - 20.0).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -3000), min(info.max, 3000) + 1, shape).astype(dtype)


@dataclass
class Case:
    op: str  # fn path: "rotate", "transforms.rotation"
    inputs: list[list[np.ndarray]] = field(default_factory=list)  # per input: the batch
    layouts: list[str] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)  # "dtype"/"interp_type" as names
    arg_inputs: dict[str, list[np.ndarray]] = field(default_factory=dict)
    batch: int = 0  # for ops without inputs
    seed: int = 1234
    iterations: int = 1


def _kw(kwargs: dict[str, Any], types: Any) -> dict[str, Any]:
    out = {}
    for k, v in kwargs.items():
        if k in ("dtype", "output_dtype") and isinstance(v, str):
            v = getattr(types, v)
        elif k in ("output_type", "image_type") and isinstance(v, str):
            v = getattr(types, v)
        elif k == "interp_type" and isinstance(v, str):
            v = getattr(types, "INTERP_" + v.upper())
        out[k] = v
    return out


def run_case(case: Case, fn: Any, pipeline_def: Callable, types: Any,
             to_input: Callable[[np.ndarray], Any] = lambda a: a, device: str = "cpu") -> list[list[np.ndarray]]:
    """Outputs of the case (a list of samples per output, all iterations concatenated); with
    device="gpu" the inputs move to the GPU and the op runs there (argument inputs stay on the CPU);
    device="mixed" runs a decoder as device='mixed' on GPU 0."""
    bs = len(case.inputs[0]) if case.inputs else case.batch

    def feed(batch: list[np.ndarray]) -> Callable[[], list[Any]]:
        return lambda: [to_input(a) for a in batch]  # no parameters: DALI would pass it the iteration

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None if device == "cpu" else 0, seed=case.seed)
    def pipe():
        ins = [fn.external_source(source=feed(b), batch=True, layout=lay)
               for b, lay in zip(case.inputs, case.layouts)]
        args = {k: fn.external_source(source=feed(v), batch=True) for k, v in case.arg_inputs.items()}
        op = fn
        for part in case.op.split("."):
            op = getattr(op, part)
        kw = _kw(case.kwargs, types)
        if device == "gpu":
            ins = [x.gpu() for x in ins]
            kw["device"] = "gpu"
        elif device == "mixed":  # decoders: encoded data stays on the CPU
            kw["device"] = "mixed"
        out = op(*ins, **kw, **args)
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    p = pipe()
    p.build()
    got: list[list[np.ndarray]] = []
    for _ in range(case.iterations):
        res = p.run()
        if not got:
            got = [[] for _ in res]
        for k, tl in enumerate(res):
            tl = tl.as_cpu() if hasattr(tl, "as_cpu") else tl
            got[k].extend(np.array(tl.at(i)) for i in range(len(tl)))
    return got


# -- inputs ---------------------------------------------------------------------------------------------

IMG = noise((23, 31, 3), seed=11)
IMG2 = noise((16, 20, 3), seed=12)
IMG_I16 = noise((9, 12, 2), seed=13, dtype=np.int16)
IMG_F = noise((9, 12, 3), seed=14, dtype=np.float32)
VOL = noise((7, 9, 11, 2), seed=15)
SEQ = noise((3, 10, 14, 3), seed=16)
AFFINE = [0.9, 0.3, -2.0, -0.2, 1.1, 3.0]
HOMOGRAPHY = [1.1, 0.1, -2.0, -0.05, 0.9, 3.0, 0.001, -0.002, 1.0]
AFFINE_3D = [0.9, 0.1, 0.0, -1.0, -0.1, 1.0, 0.2, 0.5, 0.0, 0.1, 0.8, 1.5]


def f32(*v: float) -> np.ndarray:
    return np.array(v, dtype=np.float32)


# -- warps (rotate, warp_affine) -------------------------------------------------------------------------

def _warp_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    for interp in ("nn", "linear"):
        for fill in (None, 42.0):
            extra = {} if fill is None else {"fill_value": fill}
            tag = f"{interp}_{'fill' if fill is not None else 'clamp'}"
            for ang in (30.0, 90.0, -135.5, 7.0, 180.0):
                c[f"rotate/{tag}_{ang}"] = Case("rotate", [[IMG]], ["HWC"],
                                                dict(angle=ang, interp_type=interp, **extra))
            c[f"rotate/{tag}_keep"] = Case("rotate", [[IMG]], ["HWC"],
                                           dict(angle=33.0, keep_size=True, interp_type=interp, **extra))
            c[f"warp_affine/{tag}"] = Case("warp_affine", [[IMG]], ["HWC"],
                                           dict(matrix=AFFINE, interp_type=interp, **extra))
            c[f"warp_affine/{tag}_size"] = Case("warp_affine", [[IMG]], ["HWC"],
                                                dict(matrix=AFFINE, size=(17, 40), interp_type=interp, **extra))
            c[f"warp_affine/{tag}_fwd"] = Case("warp_affine", [[IMG]], ["HWC"],
                                               dict(matrix=AFFINE, inverse_map=False, interp_type=interp, **extra))
            c[f"warp_affine/{tag}_3d"] = Case("warp_affine", [[VOL]], ["DHWC"],
                                              dict(matrix=AFFINE_3D, interp_type=interp, **extra))
            c[f"rotate/{tag}_3d"] = Case("rotate", [[VOL]], ["DHWC"],
                                         dict(angle=40.0, axis=[0.3, -1.0, 0.5], interp_type=interp, **extra))
    c["rotate/size_rounds"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=20.0, size=(12.5, 13.5)))
    c["rotate/per_sample"] = Case("rotate", [[IMG, IMG2, IMG]], ["HWC"], dict(fill_value=7.0),
                                  arg_inputs={"angle": [f32(10.0), f32(-75.0), f32(123.0)]})
    c["rotate/per_sample_size"] = Case("rotate", [[IMG, IMG2]], ["HWC"], dict(angle=15.0),
                                       arg_inputs={"size": [f32(10.7, 20.2), f32(5.0, 9.9)]})
    c["rotate/seq"] = Case("rotate", [[SEQ]], ["FHWC"], dict(angle=25.0, fill_value=0.0))
    c["rotate/no_layout"] = Case("rotate", [[IMG2]], [""], dict(angle=-40.0))
    c["rotate/int16"] = Case("rotate", [[IMG_I16]], ["HWC"], dict(angle=25.0, fill_value=-5.0))
    c["rotate/int16_to_float"] = Case("rotate", [[IMG_I16]], ["HWC"], dict(angle=25.0, dtype="FLOAT"))
    c["rotate/float"] = Case("rotate", [[IMG_F]], ["HWC"], dict(angle=-60.0))
    c["rotate/float_to_u8"] = Case("rotate", [[IMG_F]], ["HWC"], dict(angle=-60.0, dtype="UINT8", fill_value=300.0))
    c["rotate/u8_fill_saturates"] = Case("rotate", [[IMG2]], ["HWC"], dict(angle=45.0, fill_value=-20.0))
    c["warp_affine/per_sample_matrix"] = Case(
        "warp_affine", [[IMG, IMG2]], ["HWC"], dict(fill_value=1.0),
        arg_inputs={"matrix": [f32(*AFFINE).reshape(2, 3), f32(1.2, -0.1, 0.5, 0.1, 0.8, -1.0).reshape(2, 3)]})
    c["warp_affine/err_per_sample_matrix_flat"] = Case(
        "warp_affine", [[IMG]], ["HWC"], {}, arg_inputs={"matrix": [f32(*AFFINE)]})
    c["warp_affine/matrix_input"] = Case(
        "warp_affine", [[IMG, IMG2], [f32(*AFFINE).reshape(2, 3), f32(0.5, 0.0, 2.0, 0.0, 0.5, 1.0).reshape(2, 3)]],
        ["HWC", ""], dict(fill_value=3.0, size=(11, 13)))
    c["warp_affine/matrix_input_fwd"] = Case(
        "warp_affine", [[IMG2], [f32(2.0, 0.5, -3.0, 0.0, 1.5, 1.0).reshape(2, 3)]], ["HWC", ""],
        dict(inverse_map=False))
    c["warp_affine/seq"] = Case("warp_affine", [[SEQ]], ["FHWC"], dict(matrix=AFFINE, fill_value=9.0))
    c["warp_affine/per_sample_size"] = Case("warp_affine", [[IMG2]], ["HWC"], dict(matrix=AFFINE),
                                            arg_inputs={"size": [f32(3.9, 4.2)]})
    # refused by DALI
    c["rotate/err_cubic"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=10.0, interp_type="cubic"))
    c["rotate/err_chw"] = Case("rotate", [[IMG.transpose(2, 0, 1).copy()]], ["CHW"], dict(angle=10.0))
    c["rotate/err_3d_no_axis"] = Case("rotate", [[VOL]], ["DHWC"], dict(angle=10.0))
    c["rotate/err_u8_to_i16"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=10.0, dtype="INT16"))
    c["rotate/err_size_0"] = Case("rotate", [[IMG]], ["HWC"], dict(angle=10.0, size=(0, 5)))
    c["rotate/err_uint16"] = Case("rotate", [[IMG.astype(np.uint16)]], ["HWC"], dict(angle=10.0))
    c["warp_affine/err_no_matrix"] = Case("warp_affine", [[IMG]], ["HWC"], {})
    c["warp_affine/err_matrix_len"] = Case("warp_affine", [[IMG]], ["HWC"], dict(matrix=[1.0, 0.0, 0.0, 1.0]))
    # experimental.warp_perspective
    wp = "experimental.warp_perspective"
    for interp in ("nn", "linear", "cubic"):
        for bm in ("constant", "replicate", "reflect", "reflect_101", "wrap"):
            c[f"warp_perspective/{interp}_{bm}"] = Case(wp, [[IMG]], ["HWC"], dict(
                matrix=HOMOGRAPHY, interp_type=interp, border_mode=bm, fill_value=[42.0, 43.0, 44.0]))
    c["warp_perspective/corner_size"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, size=(10.5, 12.5)))
    c["warp_perspective/center"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, pixel_origin="center",
                                                                   size=(20.0, 25.0)))
    c["warp_perspective/center_nn"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, pixel_origin="center",
                                                                      interp_type="nn"))
    c["warp_perspective/fwd"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, inverse_map=False))
    c["warp_perspective/chw"] = Case(wp, [[IMG.transpose(2, 0, 1).copy()]], ["CHW"], dict(matrix=HOMOGRAPHY))
    c["warp_perspective/hw"] = Case(wp, [[np.ascontiguousarray(IMG[..., 0])]], ["HW"], dict(matrix=HOMOGRAPHY))
    c["warp_perspective/fhwc"] = Case(wp, [[SEQ]], ["FHWC"], dict(matrix=HOMOGRAPHY, fill_value=[7.0]))
    c["warp_perspective/fchw"] = Case(wp, [[SEQ.transpose(0, 3, 1, 2).copy()]], ["FCHW"], dict(matrix=HOMOGRAPHY))
    c["warp_perspective/float"] = Case(wp, [[IMG_F]], ["HWC"], dict(matrix=HOMOGRAPHY, interp_type="cubic"))
    c["warp_perspective/uint16"] = Case(wp, [[IMG.astype(np.uint16) * 200]], ["HWC"], dict(matrix=HOMOGRAPHY))
    c["warp_perspective/int16"] = Case(wp, [[IMG_I16]], ["HWC"], dict(matrix=HOMOGRAPHY, border_mode="reflect"))
    c["warp_perspective/matrix_input"] = Case(
        wp, [[IMG, IMG2], [f32(*HOMOGRAPHY).reshape(3, 3), f32(0.8, 0.0, 1.0, 0.1, 1.2, -2.0, 0.0, 0.003, 1.0).reshape(3, 3)]],
        ["HWC", ""], {})
    c["warp_perspective/per_sample_matrix"] = Case(
        wp, [[IMG, IMG2]], ["HWC"], dict(size=(15.0, 18.0)),
        arg_inputs={"matrix": [f32(*HOMOGRAPHY).reshape(3, 3), f32(0.8, 0.0, 1.0, 0.1, 1.2, -2.0, 0.0, 0.003, 1.0).reshape(3, 3)]})
    c["warp_perspective/err_fill_count"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, fill_value=[1.0, 2.0]))
    c["warp_perspective/err_lanczos"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, interp_type="lanczos3"))
    c["warp_perspective/err_border"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, border_mode="foo"))
    c["warp_perspective/err_origin"] = Case(wp, [[IMG]], ["HWC"], dict(matrix=HOMOGRAPHY, pixel_origin="foo"))
    c["warp_perspective/err_int32"] = Case(wp, [[IMG.astype(np.int32)]], ["HWC"], dict(matrix=HOMOGRAPHY))
    c["warp_perspective/err_no_matrix"] = Case(wp, [[IMG]], ["HWC"], {})
    c["warp_perspective/err_5_channels"] = Case(wp, [[np.zeros((5, 6, 5), np.uint8)]], ["HWC"], dict(matrix=HOMOGRAPHY))
    return c


# -- transforms.*, coord_transform, coord_flip -----------------------------------------------------------

T2 = [f32(0.5, -1.0, 2.0, 0.3, 1.5, -0.5).reshape(2, 3), f32(1.0, 0.2, 0.0, -0.1, 0.9, 3.0).reshape(2, 3)]
T3 = [noise((3, 4), seed=21, dtype=np.float32) / 100, noise((3, 4), seed=22, dtype=np.float32) / 100]
PTS = [noise((7, 2), seed=23, dtype=np.float32), noise((3, 2), seed=24, dtype=np.float32)]
PTS3 = [noise((5, 3), seed=25, dtype=np.float32)]


def _transform_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    ops = {
        "translation": [dict(offset=[1.5, -2.0]), dict(offset=[1.0, 2.0, 3.0])],
        "scale": [dict(scale=[2.0, 0.5]), dict(scale=[2.0, 0.5], center=[1.0, 3.0]), dict(scale=[3.0], ndim=2),
                  dict(scale=[2.0]), dict(scale=[1.0, 2.0, 3.0], center=[1.0, 0.0, -1.0])],
        "rotation": [dict(angle=30.0), dict(angle=-123.0, center=[1.0, 0.5]),
                     dict(angle=40.0, axis=[0.4, 0.3, 0.1]), dict(angle=40.0, axis=[0.4, 0.3, 0.1], center=[1.0, -0.4, 10.0])],
        "shear": [dict(shear=[1.0, 2.0]), dict(shear=[1.0, 2.0], center=[0.4, 0.5]),
                  dict(shear=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], center=[0.4, 0.5, 0.6]), dict(angles=[30.0, 10.0]),
                  dict(angles=[40.0, 30.0, 10.0, 35.0, 25.0, 15.0])],
        "crop": [{}, dict(from_start=[0.1, 0.2], from_end=[1.0, 1.2], to_start=[0.3, 0.2], to_end=[0.5, 0.6]),
                 dict(from_start=[0.2]), dict(from_start=[1.0, 1.2], from_end=[0.1, 0.2], to_start=[0.5, 0.6],
                                              to_end=[0.3, 0.2], absolute=True),
                 dict(from_start=[0.1, 0.2, 0.3], from_end=[1.0, 1.2, 1.3])],
    }
    for op, variants in ops.items():
        for k, kw in enumerate(variants):
            c[f"transforms/{op}_{k}"] = Case(f"transforms.{op}", kwargs=kw, batch=2)
            nd = len(kw.get("offset", kw.get("center", kw.get("from_start", [0, 0]))))
            if op == "rotation":
                nd = 3 if "axis" in kw else 2
            if op == "shear":
                nd = 3 if len(kw.get("shear", kw.get("angles"))) == 6 else 2
            if op == "scale" and "center" not in kw:
                nd = kw.get("ndim", len(kw["scale"]) if len(kw["scale"]) > 1 else 2)
            mats = T2 if nd == 2 else T3 if nd == 3 else None
            if mats is not None:
                for rev in (False, True):
                    c[f"transforms/{op}_{k}_input{'_rev' if rev else ''}"] = Case(
                        f"transforms.{op}", [mats], [""], dict(kw, reverse_order=rev))
    c["transforms/rotation_per_sample"] = Case("transforms.rotation", batch=2,
                                               arg_inputs={"angle": [f32(10.0).reshape(()), f32(-80.0).reshape(())], "center": [f32(1, 2), f32(-3, 4)]})
    c["transforms/shear_per_sample_matrix"] = Case("transforms.shear", batch=1,
                                                   arg_inputs={"shear": [f32(1, 2, 3, 4, 5, 6).reshape(3, 2)]})
    c["transforms/scale_per_sample"] = Case("transforms.scale", batch=2, arg_inputs={"scale": [f32(2, 3), f32(0.5, 4)]})
    c["transforms/translation_per_sample"] = Case("transforms.translation", [T2], [""], {},
                                                  arg_inputs={"offset": [f32(1, 2), f32(-5, 0.25)]})
    c["transforms/combine_2"] = Case("transforms.combine", [T2, T2[::-1]], ["", ""], {})
    c["transforms/combine_3_rev"] = Case("transforms.combine", [T2, T2[::-1], T2], ["", "", ""], dict(reverse_order=True))
    c["transforms/combine_3d"] = Case("transforms.combine", [T3, T3[::-1]], ["", ""], {})
    c["transforms/rotation_zero_axis"] = Case("transforms.rotation", kwargs=dict(angle=30.0, axis=[0.0, 0.0, 0.0]), batch=1)
    c["transforms/crop_empty_extent"] = Case("transforms.crop", kwargs=dict(from_start=[1.0, 2.0], from_end=[1.0, 5.0]), batch=1)
    c["transforms/err_shear_4"] = Case("transforms.shear", kwargs=dict(shear=[1.0, 2.0, 3.0, 4.0]), batch=1)
    c["transforms/err_shear_angle_95"] = Case("transforms.shear", kwargs=dict(angles=[95.0, 2.0]), batch=1)
    c["transforms/err_shear_both"] = Case("transforms.shear", kwargs=dict(angles=[5.0, 2.0], shear=[1.0, 2.0]), batch=1)
    c["transforms/err_crop_sizes"] = Case("transforms.crop", kwargs=dict(from_start=[1.0, 2.0], from_end=[1.0, 2.0, 3.0]), batch=1)
    c["transforms/err_rotation_center"] = Case("transforms.rotation", kwargs=dict(angle=3.0, center=[1.0, 2.0, 3.0]), batch=1)
    c["transforms/err_scale_center"] = Case("transforms.scale", kwargs=dict(scale=[2.0], center=[1.0, 2.0]), batch=1)
    c["transforms/err_input_ndim"] = Case("transforms.translation", [T3], [""], dict(offset=[1.0, 2.0]))
    c["transforms/err_input_shape"] = Case("transforms.translation", [[np.zeros((3, 3), np.float32)]], [""],
                                           dict(offset=[1.0, 2.0]))
    c["transforms/err_input_type"] = Case("transforms.translation", [[np.zeros((2, 3), np.float64)]], [""],
                                          dict(offset=[1.0, 2.0]))
    c["transforms/err_ndim_7"] = Case("transforms.translation", kwargs=dict(offset=[1.0] * 7), batch=1)
    c["transforms/err_combine_shapes"] = Case("transforms.combine", [T2, T3], ["", ""], {})
    # coord_transform
    c["coord_transform/M"] = Case("coord_transform", [PTS], ["NX"], dict(M=[1, 2, 3, 4, 5, 6]))
    c["coord_transform/M_T"] = Case("coord_transform", [PTS], [""], dict(M=[0.5, -1.0, 2.0, 0.25], T=[3.0, -4.0]))
    c["coord_transform/scalar_M_T"] = Case("coord_transform", [PTS3], [""], dict(M=2.5, T=1.5))
    c["coord_transform/MT"] = Case("coord_transform", [PTS], [""], dict(MT=[1, 2, 3, 4, 5, 6]))
    c["coord_transform/MT_scalar"] = Case("coord_transform", [PTS], [""], dict(MT=3.0))
    c["coord_transform/project"] = Case("coord_transform", [PTS3], [""], dict(M=[0.2, 0.3, 0.5]))
    c["coord_transform/none"] = Case("coord_transform", [PTS], [""], {})
    c["coord_transform/u8_to_u8"] = Case("coord_transform", [[noise((6, 3), seed=26)]], [""],
                                         dict(M=[1.5, 0, 0, 0, -1, 0, 0.5, 0.5, 0], T=[0.5, 200, 0], dtype="UINT8"))
    c["coord_transform/i16_to_float"] = Case("coord_transform", [[noise((6, 2), seed=27, dtype=np.int16)]], [""],
                                             dict(M=[0.3, 0.7, -1.1, 2.0]))
    c["coord_transform/i32_round"] = Case("coord_transform", [[np.array([[1, 2], [3, -5], [7, 9]], np.int32)]], [""],
                                          dict(M=0.5, dtype="INT32"))
    c["coord_transform/per_sample_M"] = Case("coord_transform", [PTS], [""], {},
                                             arg_inputs={"M": [f32(1, 2, 3, 4).reshape(2, 2), f32(0, 1, 1, 0).reshape(2, 2)],
                                                         "T": [f32(1, 1), f32(-2, 5)]})
    c["coord_transform/per_sample_MT"] = Case("coord_transform", [PTS], [""], {},
                                              arg_inputs={"MT": [f32(1, 2, 3).reshape(1, 3), f32(0, 1, 1).reshape(1, 3)]})
    c["coord_transform/per_sample_scalar_M"] = Case("coord_transform", [PTS], [""], {},
                                                    arg_inputs={"M": [f32(2.0).reshape(()), f32(-1.0).reshape(())]})
    c["coord_transform/batch_dims"] = Case("coord_transform", [[noise((2, 4, 3), seed=28, dtype=np.float32)]], ["ABC"],
                                           dict(T=3.0))
    c["coord_transform/empty_mixed"] = Case("coord_transform", [[np.zeros((0, 3), np.float32), PTS3[0]]], [""],
                                            dict(M=[1, 2, 3]))
    c["coord_transform/all_empty"] = Case("coord_transform", [[np.zeros((0, 3), np.float32)]], [""], dict(M=[1, 2, 3]))
    c["coord_transform/err_u8_to_i32"] = Case("coord_transform", [[noise((6, 3), seed=26)]], [""], dict(dtype="INT32"))
    c["coord_transform/err_MT_and_T"] = Case("coord_transform", [PTS], [""], dict(MT=[1, 2, 3, 4, 5, 6], T=[1.0, 2.0]))
    c["coord_transform/err_M_cols"] = Case("coord_transform", [PTS], [""], dict(M=[1, 2, 3, 4, 5]))
    c["coord_transform/err_1d"] = Case("coord_transform", [[np.zeros((3,), np.float32)]], [""], {})
    c["coord_transform/err_7_rows"] = Case("coord_transform", [PTS], [""], dict(M=list(range(14))))
    c["coord_transform/err_float64"] = Case("coord_transform", [[np.zeros((2, 2), np.float64)]], [""], {})
    c["coord_transform/err_T_size"] = Case("coord_transform", [PTS], [""], dict(T=[1.0, 2.0, 3.0]))
    # coord_flip
    c["coord_flip/default"] = Case("coord_flip", [PTS], [""], {})
    c["coord_flip/yx"] = Case("coord_flip", [PTS], [""], dict(layout="yx", flip_y=1, center_y=2.0))
    c["coord_flip/xyz"] = Case("coord_flip", [PTS3], [""], dict(flip_x=0, flip_y=1, flip_z=1, center_z=-0.5))
    c["coord_flip/x"] = Case("coord_flip", [[noise((4, 1), seed=29, dtype=np.float32)]], [""], dict(center_x=0.0))
    c["coord_flip/per_sample"] = Case("coord_flip", [PTS], [""], {},
                                      arg_inputs={"flip_x": [np.int32(1), np.int32(0)], "flip_y": [np.int32(1), np.int32(1)],
                                                  "center_y": [f32(0.25).reshape(()), f32(3.0).reshape(())]})
    c["coord_flip/empty"] = Case("coord_flip", [[np.zeros((0, 2), np.float32)]], [""], {})
    c["coord_flip/err_int"] = Case("coord_flip", [[np.zeros((2, 2), np.int32)]], [""], {})
    c["coord_flip/err_4d"] = Case("coord_flip", [[np.zeros((2, 4), np.float32)]], [""], {})
    c["coord_flip/err_3dims"] = Case("coord_flip", [[np.zeros((2, 2, 2), np.float32)]], [""], {})
    return c


# -- erase, pad, slice, paste -----------------------------------------------------------------------------

RAMP = (np.arange(5 * 7, dtype=np.uint8).reshape(5, 7, 1) + 1).repeat(3, -1)
RAMP_F = RAMP.astype(np.float32) * 10 - 20


def _region_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    er = {
        "trunc": dict(anchor=[1.7, 2.2], shape=[1.6, 2.5]),
        "negative": dict(anchor=[-1.5, 4.5], shape=[3.0, 9.0]),
        "normalized": dict(anchor=[0.2, 0.3], shape=[0.5, 0.5], normalized=True, fill_value=[99.0]),
        "centered_rgb": dict(anchor=[2, 3], shape=[2, 2], centered_anchor=True, fill_value=[7.0, 8.0, 9.0]),
        "axis_W": dict(anchor=[1], shape=[2], axis_names="W"),
        "two_regions": dict(anchor=[1, 2, 3, 4], shape=[1, 1, 1, 1]),
        "axes_0": dict(anchor=[1], shape=[2], axes=[0]),
        "shape_only": dict(shape=[2, 2]),
        "nothing": {},
        "fill_wraps": dict(anchor=[1, 2], shape=[2, 2], fill_value=[300.0]),
        "fill_negative": dict(anchor=[1, 2], shape=[2, 2], fill_value=[-1.0]),
        "fill_truncates": dict(anchor=[1, 2], shape=[2, 2], fill_value=[2.5]),
        "norm_shape_only": dict(anchor=[1, 0.5], shape=[2, 0.5], normalized_shape=True),
        "err_fill_channels": dict(anchor=[1, 2], shape=[2, 2], fill_value=[1.0, 2.0]),
        "err_normalized_both": dict(anchor=[1, 2], shape=[2, 2], normalized=True, normalized_anchor=True),
    }
    for k, kw in er.items():
        c[f"erase/{k}"] = Case("erase", [[RAMP]], ["HWC"], kw)
    c["erase/float"] = Case("erase", [[RAMP_F]], ["HWC"], dict(anchor=[1, 2], shape=[2, 2], fill_value=[-1.5]))
    c["erase/int32_fill_overflow"] = Case("erase", [[RAMP.astype(np.int32)]], ["HWC"],
                                          dict(anchor=[1, 2], shape=[2, 2], fill_value=[1e10]))
    c["erase/hw"] = Case("erase", [[np.ascontiguousarray(RAMP[..., 0])]], ["HW"], dict(anchor=[1, 2], shape=[2, 2]))
    c["erase/fhwc"] = Case("erase", [[np.stack([RAMP, RAMP])]], ["FHWC"], dict(anchor=[0, 1, 2], shape=[1, 2, 2]))
    c["erase/per_sample"] = Case("erase", [[RAMP, RAMP]], ["HWC"], {},
                                 arg_inputs={"anchor": [f32(1, 1), f32(0, 3)], "shape": [f32(2, 3), f32(4, 1)],
                                             "fill_value": [f32(5.0, 4.0, 3.0), f32(6.0, 7.0, 8.0)]})
    c["erase/err_hw_multifill"] = Case("erase", [[np.ascontiguousarray(RAMP[..., 0])]], ["HW"],
                                       dict(anchor=[1, 2], shape=[2, 2], fill_value=[1.0, 2.0]))
    c["erase/err_float64"] = Case("erase", [[RAMP.astype(np.float64)]], ["HWC"], dict(anchor=[1, 2], shape=[2, 2]))
    # pad
    a, b = np.arange(6, dtype=np.uint8).reshape(2, 3, 1), np.arange(8, dtype=np.uint8).reshape(4, 2, 1)
    big = np.arange(10, dtype=np.uint8).reshape(1, 10, 1)
    pd = {
        "all": {}, "fill_wraps": dict(fill_value=300.0), "fill_neg": dict(fill_value=-1.7),
        "fill_trunc": dict(fill_value=2.5), "shape_0": dict(axes=[1], shape=[0]), "shape_small": dict(axes=[1], shape=[2]),
        "align_neg_axis": dict(axes=[-2], align=[4]), "align_only": dict(axis_names="W", align=[4], shape=[1]),
        "shape_bcast": dict(axis_names="HW", shape=[5]), "channels": dict(axis_names="C", align=[4]),
        "err_shape_len": dict(axis_names="HW", shape=[5, -1, 3]), "err_both": dict(axes=[0, 1], axis_names="HW"),
        "err_axis_range": dict(axes=[3]), "err_axis_name": dict(axis_names="D"), "err_align_0": dict(align=[0]),
    }
    for k, kw in pd.items():
        c[f"pad/{k}"] = Case("pad", [[a, b]], ["HWC"], kw)
    c["pad/float"] = Case("pad", [[a.astype(np.float32), b.astype(np.float32)]], ["HWC"], dict(fill_value=-0.5))
    c["pad/bool"] = Case("pad", [[a.astype(bool), b.astype(bool)]], ["HWC"], {})
    c["pad/no_layout"] = Case("pad", [[a.astype(np.int16), b.astype(np.int16)]], [""], dict(axes=[0], fill_value=-1.0))
    c["pad/per_sample_fill"] = Case("pad", [[a, b]], ["HWC"], {}, arg_inputs={"fill_value": [f32(5.0).reshape(()), f32(9.0).reshape(())]})
    c["pad/per_sample_axes"] = Case("pad", [[a, b, big]], ["HWC"], {}, arg_inputs={
        "axes": [np.array([0], np.int32), np.array([1], np.int32), np.array([0, 1], np.int32)]})
    c["pad/per_sample_shape"] = Case("pad", [[a, b]], ["HWC"], dict(axes=[0, 1]), arg_inputs={
        "shape": [np.array([3, 5], np.int32), np.array([-1, 1], np.int32)]})
    c["pad/per_sample_align"] = Case("pad", [[a, b]], ["HWC"], dict(axes=[0, 1]), arg_inputs={
        "align": [np.array([3, 5], np.int32), np.array([1, 2], np.int32)]})
    c["pad/err_float64"] = Case("pad", [[a.astype(np.float64), b.astype(np.float64)]], ["HWC"], {})
    # slice
    sl = {
        "start_shape": dict(start=[1, 2], shape=[2, 3]), "rel": dict(rel_start=[0.2, 0.3], rel_shape=[0.5, 0.5]),
        "rel_end_hw": dict(rel_start=[0.3, 0.3], rel_end=[0.9, 0.9], axis_names="HW"),
        "start_end_axes": dict(start=[1, 2], end=[3, 6], axes=[0, 1]), "start_bcast": dict(start=[1]),
        "start_rel_shape": dict(start=[1, 2], rel_shape=[0.5, 0.5]), "rel_round": dict(rel_start=[0.5], rel_end=[0.75], axis_names="H"),
        "dtype_float": dict(start=[1, 2], shape=[2, 3], dtype="FLOAT"), "dtype_f16": dict(start=[1], end=[3], axis_names="W", dtype="FLOAT16"),
        "channels": dict(start=[1], end=[3], axes=[-1]),
        "err_oob": dict(start=[3], end=[9], axis_names="W"),
        "pad_rgb": dict(start=[3], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[7.0, 8.0, 9.0]),
        "pad_wraps": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[300.7]),
        "pad_neg": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[-2.7]),
        "pad_float": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[300.7], dtype="FLOAT"),
        "trim": dict(start=[-2], end=[9], axis_names="W", out_of_bounds_policy="trim_to_shape"),
        "trim_2d": dict(start=[-2, 3], end=[4, 9], axis_names="HW", out_of_bounds_policy="trim_to_shape"),
        "err_end_before": dict(start=[2], end=[1], axes=[0]), "err_dtype_int32": dict(start=[1, 2], shape=[2, 3], dtype="INT32"),
        "err_fill_count": dict(start=[5], end=[9], axis_names="W", out_of_bounds_policy="pad", fill_values=[1.0, 2.0]),
        "err_both_ends": dict(start=[1, 1], shape=[2, 2], rel_shape=[0.3, 0.2]), "err_axis": dict(start=[1], end=[3], axes=[5]),
    }
    for pol in ("edge", "clamp", "reflect", "reflect_1001", "reflect_101", "wrap", "constant"):
        sl[f"policy_{pol}"] = dict(start=[-4, -2], end=[12, 8], axis_names="WH", out_of_bounds_policy=pol)
    for k, kw in sl.items():
        c[f"slice/{k}"] = Case("slice", [[RAMP]], ["HWC"], kw)
    c["slice/float_to_u8"] = Case("slice", [[RAMP_F]], ["HWC"], dict(start=[1], end=[3], axis_names="W", dtype="UINT8"))
    c["slice/float64"] = Case("slice", [[RAMP.astype(np.float64)]], ["HWC"], dict(start=[1], end=[3], axis_names="W"))
    c["slice/pos_rel"] = Case("slice", [[RAMP], [f32(0.2, 0.3)], [f32(0.5, 0.5)]], ["HWC", "", ""], {})
    c["slice/pos_abs_float"] = Case("slice", [[RAMP], [f32(1, 2)], [f32(3, 2)]], ["HWC", "", ""],
                                    dict(normalized_anchor=False, normalized_shape=False))
    c["slice/pos_int"] = Case("slice", [[RAMP], [np.array([1, 2], np.int32)], [np.array([3, 2], np.int32)]],
                              ["HWC", "", ""], {})
    c["slice/pos_scalar"] = Case("slice", [[RAMP], [f32(0.2).reshape(())], [f32(0.5).reshape(())]], ["HWC", "", ""],
                                 dict(axis_names="H"))
    c["slice/pos_mixed_types"] = Case("slice", [[RAMP], [f32(0.2).reshape(())], [np.int32(2).reshape(())]],
                                      ["HWC", "", ""], dict(axis_names="H"))
    c["slice/per_sample"] = Case("slice", [[RAMP, RAMP]], ["HWC"], dict(axis_names="HW"),
                                 arg_inputs={"start": [np.array([1, 2], np.int32), np.array([0, 0], np.int32)],
                                             "rel_end": [f32(0.8, 0.9), f32(0.5, 0.5)]})
    c["slice/3d"] = Case("slice", [[VOL]], ["DHWC"], dict(start=[1, 2, 3], shape=[4, 5, 6], axis_names="DHW"))
    c["slice/no_layout_all_axes"] = Case("slice", [[RAMP]], [""], dict(start=[1, 2, 0], end=[3, 4, 2], axes=[0, 1, 2]))
    c["slice/no_layout_default_axes"] = Case("slice", [[RAMP]], [""], dict(start=[1, 2]))
    c["slice/err_bool"] = Case("slice", [[RAMP.astype(bool)]], ["HWC"], dict(start=[1], end=[3], axis_names="W"))
    # paste
    ps = {
        "half": dict(ratio=1.5, fill_value=[9, 9, 9]), "corner": dict(ratio=1.3, fill_value=[9, 8, 7], paste_x=0.0, paste_y=1.0),
        "min_canvas": dict(ratio=1.0, fill_value=[9, 8, 7], min_canvas_size=9.5),
        "trunc": dict(ratio=1.25, fill_value=[9, 8, 7], paste_x=0.3, paste_y=0.7), "one_fill": dict(ratio=2.0, fill_value=[9]),
        "fill_wraps": dict(ratio=2.0, fill_value=[300, 8, 7]), "err_ratio": dict(ratio=0.5, fill_value=[9, 8, 7]),
        "err_pos": dict(ratio=1.5, fill_value=[9, 8, 7], paste_x=1.5),
    }
    for k, kw in ps.items():
        c[f"paste/{k}"] = Case("paste", [[RAMP]], ["HWC"], kw)
    c["paste/per_sample"] = Case("paste", [[RAMP, IMG2]], ["HWC"], dict(fill_value=[1, 2, 3]),
                                 arg_inputs={"ratio": [f32(2.0).reshape(()), f32(1.7).reshape(())],
                                             "paste_x": [f32(0.1).reshape(()), f32(0.9).reshape(())]})
    c["paste/err_float"] = Case("paste", [[RAMP_F]], ["HWC"], dict(ratio=2.0, fill_value=[9, 8, 7]))
    return c


# -- random crop windows: many draws, compared as distributions (outputs stored stacked) -----------------

DIST_DRAWS = 1500


def _dist_cases() -> dict[str, Case]:
    n = DIST_DRAWS
    shapes = [np.array([200, 300, 3], np.int64)] * n
    return {
        "dist/roi_holds": Case("roi_random_crop", kwargs=dict(crop_shape=[30, 12], roi_start=[10, 20],
                                                              roi_shape=[20, 30], in_shape=[45, 60]), batch=n),
        "dist/roi_unbounded": Case("roi_random_crop", kwargs=dict(crop_shape=[5, 50], roi_start=[3, 7],
                                                                  roi_end=[13, 17]), batch=n),
        "dist/roi_input": Case("roi_random_crop", [[np.zeros((40, 30, 3), np.uint8)] * n], ["HWC"],
                               dict(crop_shape=[8, 20, 3], roi_start=[5, 0, 0], roi_shape=[25, 30, 3])),
        "dist/crop_generator": Case("random_crop_generator", [shapes], [""], {}),
        "dist/crop_generator_wide": Case("random_crop_generator", [shapes], [""],
                                         dict(random_area=[0.5, 0.6], random_aspect_ratio=[2.0, 3.0])),
    }


def _random_error_cases() -> dict[str, Case]:
    c = {}
    base = dict(crop_shape=[2, 2], roi_start=[1, 1], roi_shape=[1, 1])
    c["roi_random_crop/err_in_shape_and_input"] = Case("roi_random_crop", [[np.zeros((4, 4), np.uint8)]], [""],
                                                       dict(base, in_shape=[4, 4]))
    c["roi_random_crop/err_end_and_shape"] = Case("roi_random_crop", kwargs=dict(base, roi_end=[2, 2]), batch=1)
    c["roi_random_crop/err_negative_in_shape"] = Case("roi_random_crop", kwargs=dict(base, in_shape=[-4, 4]), batch=1)
    c["roi_random_crop/err_negative_crop"] = Case("roi_random_crop", kwargs=dict(base, crop_shape=[1, -1], in_shape=[4, 4]),
                                                  batch=1)
    c["roi_random_crop/err_roi_out"] = Case("roi_random_crop", kwargs=dict(base, roi_start=[-1, -1], in_shape=[4, 4]),
                                            batch=1)
    c["roi_random_crop/err_crop_too_big"] = Case("roi_random_crop", kwargs=dict(base, crop_shape=[5, 2], in_shape=[4, 4]),
                                                 batch=1)
    c["random_crop_generator/err_4d_shape"] = Case("random_crop_generator", [[np.array([2, 3, 4, 5], np.int64)]], [""], {})
    return c


# -- decoders.image_crop / image_slice, peek_image_shape: on the encoded files of dali_tables.npz ---------

def encoded() -> dict[str, np.ndarray]:
    """The encoded test images stored with the decoder tables (the same bytes on both sides)."""
    from pathlib import Path
    with np.load(Path(__file__).with_name("dali_tables.npz")) as z:
        return {k.split("/", 1)[1]: z[k] for k in z.files if k.startswith("decode_input/")}


def _decoder_cases() -> dict[str, Case]:
    enc = encoded()
    c: dict[str, Case] = {}
    for name in ("jpeg_420", "jpeg_444", "jpeg_gray", "png_rgba", "bmp"):
        data = [[enc[name]]]
        c[f"decoders/crop_{name}"] = Case("decoders.image_crop", data, [""], dict(crop=(10, 12), crop_pos_x=0.3,
                                                                                    crop_pos_y=0.8))
        c[f"decoders/slice_{name}"] = Case("decoders.image_slice", data, [""], dict(start=[5, 3], end=[29, 17]))
        c[f"decoders/peek_{name}"] = Case("peek_image_shape", data, [""], {})
    j = [[enc["jpeg_420"]]]
    c["decoders/crop_hw_trunc"] = Case("decoders.image_crop", j, [""], dict(crop_h=10.6, crop_w=12.4, rounding="truncate",
                                                                            crop_pos_x=0.33))
    c["decoders/crop_gray_float"] = Case("decoders.image_crop", j, [""], dict(crop=(7, 9), output_type="GRAY", dtype="FLOAT"))
    c["decoders/crop_corner"] = Case("decoders.image_crop", j, [""], dict(crop=(24, 32), crop_pos_x=1.0, crop_pos_y=0.0))
    c["decoders/crop_per_sample"] = Case("decoders.image_crop", [[enc["jpeg_420"], enc["png_rgba"]]], [""], dict(crop=(8, 8)),
                                         arg_inputs={"crop_pos_x": [f32(0.0).reshape(()), f32(1.0).reshape(())]})
    c["decoders/slice_rel"] = Case("decoders.image_slice", j, [""], dict(rel_start=[0.1, 0.2], rel_shape=[0.5, 0.5]))
    c["decoders/slice_hw"] = Case("decoders.image_slice", j, [""], dict(start=[2, 3], shape=[10, 12], axis_names="HW"))
    c["decoders/slice_positional"] = Case("decoders.image_slice", [[enc["png_rgba"]], [f32(0.1, 0.2)], [f32(0.5, 0.5)]],
                                          ["", "", ""], {})
    c["decoders/slice_positional_int"] = Case("decoders.image_slice", [[enc["jpeg_444"]], [np.array([4, 5], np.int32)],
                                                                       [np.array([9, 7], np.int32)]], ["", "", ""], {})
    c["decoders/peek_gray_int32"] = Case("peek_image_shape", j, [""], dict(image_type="GRAY", dtype="INT32"))
    c["decoders/peek_float"] = Case("peek_image_shape", j, [""], dict(dtype="FLOAT"))
    c["decoders/err_crop_out"] = Case("decoders.image_crop", j, [""], dict(crop=(30, 12)))
    c["decoders/err_slice_out"] = Case("decoders.image_slice", j, [""], dict(start=[20, 3], end=[40, 12]))
    c["decoders/err_slice_axis"] = Case("decoders.image_slice", j, [""], dict(start=[2, 3, 0], end=[10, 12, 2], axes=[0, 1, 2]))
    return c


def _rcm_cases() -> dict[str, Case]:
    c: dict[str, Case] = {}
    variants = [
        (dict(resize_shorter=20), dict(crop=(16, 16))),
        (dict(resize_x=40, resize_y=30), dict(crop=(16, 20), crop_pos_x=0.2, crop_pos_y=0.7)),
        (dict(size=(50, 60)), dict(crop=(7.5, 9.5), crop_pos_x=0.33)),
        (dict(resize_longer=15, interp_type="nn"), dict(crop_h=6, crop_w=5, rounding="truncate", crop_pos_x=0.5)),
        (dict(resize_shorter=20), {}),
        (dict(resize_shorter=20), dict(crop=(30, 30))),
        (dict(size=(12, 14), antialias=False, dtype="FLOAT"), dict(crop=(10, 10))),
    ]
    for k, (rkw, ckw) in enumerate(variants):
        for mirror in (0, 1):
            c[f"resize_crop_mirror/{k}_m{mirror}"] = Case("resize_crop_mirror", [[IMG]], ["HWC"], dict(rkw, **ckw, mirror=mirror))
    c["resize_crop_mirror/plain_resize_shorter"] = Case("resize", [[IMG]], ["HWC"], dict(resize_shorter=20))
    c["resize_crop_mirror/plain_resize_xy"] = Case("resize", [[IMG]], ["HWC"], dict(resize_x=40, resize_y=30))
    c["resize_crop_mirror/per_sample"] = Case("resize_crop_mirror", [[IMG, IMG2]], ["HWC"], dict(resize_shorter=14, crop=(10, 10)),
                                              arg_inputs={"mirror": [np.int32(1), np.int32(0)],
                                                          "crop_pos_x": [f32(0.0).reshape(()), f32(0.8).reshape(())]})
    return c


def _multipaste_cases() -> dict[str, Case]:
    a = (np.arange(6 * 7, dtype=np.uint8).reshape(6, 7, 1) + 1).repeat(2, -1)
    b = (np.arange(5 * 5, dtype=np.uint8).reshape(5, 5, 1) + 100).repeat(2, -1)
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    pairs = lambda *v: np.array(v, np.int32).reshape(-1, 2)  # noqa: E731
    rel = lambda *v: np.array(v, np.float32).reshape(-1, 2)  # noqa: E731
    c: dict[str, Case] = {}
    mp = "multi_paste"
    c["multi_paste/ids"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={
        "in_ids": [i32(1, 0), i32(0)], "in_anchors": [pairs(1, 1, 0, 2), pairs(2, 3)],
        "shapes": [pairs(2, 3, 3, 2), pairs(3, 3)], "out_anchors": [pairs(0, 0, 4, 5), pairs(5, 6)]})
    c["multi_paste/rel"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={
        "in_ids": [i32(1), i32(0)], "in_anchors_rel": [rel(0.3, 0.5), rel(0.25, 0.35)],
        "shapes_rel": [rel(0.5, 0.5), rel(0.49, 0.51)], "out_anchors_rel": [rel(0.3, 0.55), rel(0.5, 0.5)]})
    c["multi_paste/rel_rounding"] = Case(mp, [[np.arange(100, dtype=np.uint8).reshape(10, 10, 1) + 1] * 4], ["HWC"],
                                         dict(output_size=[10, 10]), arg_inputs={
        "in_ids": [i32(0), i32(1), i32(2), i32(3)],
        "in_anchors_rel": [rel(0.18, 0.05), rel(0.12, 0.33), rel(0.07, 0.0), rel(0.21, 0.0)],
        "shapes_rel": [rel(0.34, 0.47), rel(0.25, 0.33), rel(0.55, 0.45), rel(0.29, 0.35)]})
    c["multi_paste/uniform_no_size"] = Case(mp, [[a, a]], ["HWC"], {}, arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/overlap_order"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[7, 8]), arg_inputs={
        "in_ids": [i32(0, 1), i32(1, 0)], "out_anchors": [pairs(0, 0, 1, 2), pairs(0, 0, 1, 1)]})
    c["multi_paste/float_out"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9], dtype="FLOAT"),
                                      arg_inputs={"in_ids": [i32(1), np.zeros(0, np.int32)]})
    c["multi_paste/positional"] = Case(mp, [[a, b], [b, a]], ["HWC", "HWC"], dict(output_size=[8, 9]))
    c["multi_paste/positional_anchors"] = Case(mp, [[a, b], [b, a]], ["HWC", "HWC"], dict(output_size=[9, 12]),
                                               arg_inputs={"out_anchors": [pairs(0, 0, 3, 5), pairs(4, 4, 0, 0)]})
    c["multi_paste/int16_to_u8"] = Case(mp, [[IMG_I16]], ["HWC"], dict(dtype="UINT8"), arg_inputs={"in_ids": [i32(0)]})
    c["multi_paste/err_sizes"] = Case(mp, [[a, b]], ["HWC"], {}, arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/err_out_bounds"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[4, 4]), arg_inputs={"in_ids": [i32(1), i32(0)]})
    c["multi_paste/err_idx"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={"in_ids": [i32(1), i32(5)]})
    c["multi_paste/err_negative_anchor"] = Case(mp, [[a, b]], ["HWC"], dict(output_size=[8, 9]), arg_inputs={
        "in_ids": [i32(1), i32(0)], "out_anchors": [pairs(-1, 0), pairs(0, 0)]})
    c["multi_paste/err_channels"] = Case(mp, [[a, np.ascontiguousarray(b[..., :1])]], ["HWC"], dict(output_size=[8, 9]),
                                         arg_inputs={"in_ids": [i32(0, 1), i32(1)]})
    return c


CASES: dict[str, Case] = {}
CASES.update(_multipaste_cases())
CASES.update(_rcm_cases())
CASES.update(_decoder_cases())
CASES.update(_warp_cases())
CASES.update(_transform_cases())
CASES.update(_region_cases())
CASES.update(_dist_cases())
CASES.update(_random_error_cases())


def is_tie(coord: np.ndarray, eps: float = 1e-4) -> np.ndarray:
    """Where a source coordinate lies within eps of a pixel edge: DALI's CPU warp steps the
    coordinate along a row by repeated float32 additions, ours computes each directly, so a
    nearest-neighbour pick there may land on either side."""
    return np.abs(coord - np.round(coord)) < eps
