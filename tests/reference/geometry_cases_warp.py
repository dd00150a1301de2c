"""Geometry reference cases, part 1: warps, transforms.*, coord_transform, coord_flip (see
geometry_cases.py)."""
from __future__ import annotations

import numpy as np

from .geometry_cases import (AFFINE, AFFINE_3D, HOMOGRAPHY, IMG, IMG2, IMG_F, IMG_I16, SEQ, VOL, Case, f32,
                             noise)


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
    # the matrix input: float32 3x3 only, and never beside `matrix`
    hm = f32(*HOMOGRAPHY).reshape(3, 3)
    c["warp_perspective/err_input_int16"] = Case(wp, [[IMG], [hm.astype(np.int16)]], ["HWC", ""], {})
    c["warp_perspective/err_input_float64"] = Case(wp, [[IMG], [hm.astype(np.float64)]], ["HWC", ""], {})
    c["warp_perspective/err_input_flat"] = Case(wp, [[IMG], [hm.reshape(9)]], ["HWC", ""], {})
    c["warp_perspective/err_input_3x4"] = Case(wp, [[IMG], [np.ones((3, 4), np.float32)]], ["HWC", ""], {})
    c["warp_perspective/err_input_and_arg"] = Case(wp, [[IMG], [hm]], ["HWC", ""], dict(matrix=HOMOGRAPHY))
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
