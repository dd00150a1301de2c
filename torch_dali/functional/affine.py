"""Affine matrices as DALI builds them: rotation canvases, rotate's mapping, inversion, and the
`transforms.*` family's matrices. Small float math on the host (NumPy), one matrix per sample.

Vectors are (x, y[, z]): x is the last spatial dimension. A 2D affine transform is a (2, 3)
matrix [A | t] applied as A @ p + t; 3D is (3, 4).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import math
from typing import Sequence

import numpy as np

F32 = np.float32


def deg2rad(deg: float) -> np.float32:
    """Degrees to radians in float32 (DALI keeps angles as float)."""
    return F32(deg) * F32(math.pi / 180.0)


def _libm_tanf():
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        fn = lib.tanf
    except (OSError, AttributeError):
        return None
    fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float]
    return fn


_TANF = _libm_tanf()


def tan_f32(rad: np.ndarray) -> np.ndarray:
    """tan of float32 angles as DALI's std::tan(float) gives it: the C library's tanf, which is
    not always the nearest float (glibc 2.36: tan(30 deg) one ulp above it, where NumPy's float32
    tan differs at 15 deg); without one, the float64 tangent rounded to float32."""
    r = np.asarray(rad, dtype=F32)
    if _TANF is None:
        return np.tan(r.astype(np.float64)).astype(F32)
    return np.array([_TANF(float(x)) for x in r.reshape(-1)], dtype=F32).reshape(r.shape)


def homogeneous(m: np.ndarray) -> np.ndarray:
    """(n, n + 1) -> (n + 1, n + 1) with the last row (0, .., 0, 1)."""
    n = m.shape[0]
    out = np.eye(n + 1, dtype=m.dtype)
    out[:n] = m
    return out


def rotated_canvas(in_size: Sequence[int], rad: float,
                   axis: Sequence[float] | None = None) -> tuple[list[int], list[int]]:
    """(size, parity) in (x, y[, z]) order: the smallest canvas holding the rotated image (a
    0.01 slack before rounding up), and per axis the parity DALI keeps, that of the input axis
    contributing most (so small rotations do not shift the centre by half a pixel)."""
    eps = 1e-2
    if axis is None:
        w, h = int(in_size[0]), int(in_size[1])
        ac, as_ = abs(math.cos(rad)), abs(math.sin(rad))
        size = [math.ceil(ac * w + as_ * h - eps), math.ceil(ac * h + as_ * w - eps)]
        parity = [w % 2, h % 2] if as_ <= ac else [h % 2, w % 2]
        return size, parity
    absm = np.abs(rotation3d_f32(axis, F32(rad)))
    vin = np.asarray(in_size, dtype=F32)
    extent = ((absm[:, 0] * vin[0] + absm[:, 1] * vin[1]) + absm[:, 2] * vin[2]) - F32(eps)  # float32, DALI's order
    size = [int(math.ceil(float(v))) for v in extent]
    # the input axis contributing most; on a tie the row's own axis, else the first of the maxima (DALI)
    dominant = [i if absm[i, i] == absm[i].max() else int(np.argmax(absm[i])) for i in range(3)]
    return size, [int(in_size[d]) % 2 for d in dominant]


def fix_parity(size: list[int], parities: list[list[int]]) -> list[int]:
    """Rounds each extent up by one where its parity disagrees with the majority of `parities`
    (one per frame; the frames of a sequence share one canvas)."""
    n = len(parities)
    out = []
    for d, s in enumerate(size):
        want = 1 if 2 * sum(p[d] for p in parities) > n else 0
        out.append(s + 1 if s % 2 != want else s)
    return out


def rotate_matrix(in_size: Sequence[int], out_size: Sequence[int], rad: float,
                  axis: Sequence[float] | None = None) -> np.ndarray:
    """Destination-to-source mapping of rotate: the output centre goes to the input centre and
    the image turns by `rad` (counter-clockwise on screen for 2D, about `axis` for 3D)."""
    if axis is None:
        return rotate_matrices([in_size], [out_size], [rad])[0]
    r = rotation3d_f32(axis, -F32(rad))
    t_in = np.array([0.5 * s for s in in_size], dtype=F32)
    t_out = np.array([-0.5 * s for s in out_size], dtype=F32)
    # T_in R T_out in float32, products summed left to right, each rounded (DALI's composition)
    shift = ((r[:, 0] * t_out[0] + r[:, 1] * t_out[1]) + r[:, 2] * t_out[2]) + t_in
    return np.concatenate([r, shift[:, None]], axis=1).astype(F32)


def rotation3d_f32(axis: Sequence[float], rad: np.float32) -> np.ndarray:
    """A right-handed rotation by `rad` about `axis` (3x3) as DALI 2.4 computes it (rotate and
    transforms.rotation), in float32: an axis with one non-zero component snapped to +-1, any other
    divided by its length; no turn is the identity."""
    if rad == 0:
        return np.eye(3, dtype=F32)
    c, s = F32(math.cos(float(rad))), F32(math.sin(float(rad)))  # cosf / sinf of the float32 angle
    a = np.asarray(axis, dtype=F32)
    if int(np.count_nonzero(a)) == 1:
        a = np.sign(a).astype(F32)
    else:
        a = a / np.sqrt((a[0] * a[0] + a[1] * a[1]) + a[2] * a[2])
    u, v, w = a
    one_c = F32(1) - c
    return np.array([
        [u * u + (v * v + w * w) * c, u * v * one_c - w * s, u * w * one_c + v * s],
        [u * v * one_c + w * s, v * v + (u * u + w * w) * c, v * w * one_c - u * s],
        [u * w * one_c - v * s, v * w * one_c + u * s, w * w + (u * u + v * v) * c]], dtype=F32)


def rotate_matrices(in_sizes: Sequence[Sequence[int]], out_sizes: Sequence[Sequence[int]],
                    rads: Sequence[float]) -> np.ndarray:
    """`rotate_matrix` of N images (2D; sizes (x, y)) at once: (N, 2, 3) float32, composed in
    float32 as DALI 2.4 composes it (its rotate equals its warp_affine of the float32-composed
    matrix bit for bit; a float64 composition rounded at the end moves a few pixels by 1): the
    products of T_in R T_out summed left to right, each rounded (no fused multiply-add: a BLAS
    matmul fuses, and at a 30-degree turn of an odd-sized image moved 1% of NN pixels)."""
    n = len(rads)
    t_in = np.array([[0.5 * s for s in size] for size in in_sizes], dtype=F32).reshape(n, 2)
    t_out = np.array([[-0.5 * s for s in size] for size in out_sizes], dtype=F32).reshape(n, 2)
    c = np.array([math.cos(float(F32(r))) for r in rads], dtype=F32)  # cosf of the float32 angle
    s = np.array([math.sin(float(F32(r))) for r in rads], dtype=F32)
    r = np.stack([np.stack([c, -s], -1), np.stack([s, c], -1)], 1)  # (N, 2, 2): rows of R
    # (T_in R) is R beside t_in exactly; times T_out: the translation column (r0 ox + r1 oy) + t_in
    shift = (r[:, :, 0] * t_out[:, None, 0] + r[:, :, 1] * t_out[:, None, 1]) + t_in
    return np.concatenate([r, shift[:, :, None]], axis=2).astype(F32)


def invert_affine(m: np.ndarray) -> np.ndarray:
    """Inverses of (..., n, n + 1) affine matrices as float32; raises for a singular one. 2D as
    DALI 2.4's warp_affine(inverse_map=False) inverts: in float32, det = a d - b c, each entry of
    the linear part divided by det, the translation (-A') t summed left to right. 3D: inverted in
    float64 and rounded."""
    m = np.asarray(m, dtype=F32)
    n = m.shape[-2]
    full = np.zeros(m.shape[:-2] + (n + 1, n + 1))
    full[..., :n, :] = m
    full[..., n, n] = 1
    if (np.abs(np.linalg.det(full)) < 1e-30).any():
        raise ValueError("the affine matrix is singular and cannot be inverted")
    if n != 2:
        return np.linalg.inv(full)[..., :n, :].astype(F32)
    a, b, t0, c, d, t1 = (m[..., i, j] for i in range(2) for j in range(3))
    det = a * d - b * c
    lin = np.stack([np.stack([d / det, -b / det], -1), np.stack([-c / det, a / det], -1)], -2)
    t = (-lin[..., :, 0]) * t0[..., None] + (-lin[..., :, 1]) * t1[..., None]
    return np.concatenate([lin, t[..., None]], -1)


# -- the transforms.* family: homogeneous (ndim + 1, ndim + 1) float32 matrices, built with DALI 2.4's -----
# float32 arithmetic (its transforms ops keep every matrix, argument and intermediate as float): the
# last bits of a matrix move the pixels a warp picks, so the order of each rounding is DALI's.

def f32_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in float32, each product rounded and the products summed left to right (DALI's host
    matrix product; a BLAS matmul fuses multiply-adds and differs in the last bit)."""
    a, b = np.asarray(a, dtype=F32), np.asarray(b, dtype=F32)
    out = a[:, :1] * b[:1, :]
    for k in range(1, a.shape[1]):
        out = out + a[:, k:k + 1] * b[k:k + 1, :]
    return out


def about(m: np.ndarray, center: Sequence[float] | None) -> np.ndarray:
    """`m` applied about `center` instead of the origin: its translation becomes A (-c) + c, the
    products summed left to right, then c added (float32)."""
    if center is None:
        return m
    n = m.shape[0] - 1
    c = np.asarray(center, dtype=F32)
    out = m.copy()
    out[:n, n] = f32_matmul(m[:n, :n], -c[:, None])[:, 0] + c
    return out


def translation(offset: Sequence[float]) -> np.ndarray:
    n = len(offset)
    m = np.eye(n + 1, dtype=F32)
    m[:n, n] = np.asarray(offset, dtype=F32)
    return m


def scale(factors: Sequence[float], center: Sequence[float] | None = None) -> np.ndarray:
    """Scale about `center`: there the translation is c (1 - s) per axis (DALI's form, not A (-c) + c)."""
    s = np.asarray(factors, dtype=F32)
    n = len(s)
    m = np.eye(n + 1, dtype=F32)
    m[np.arange(n), np.arange(n)] = s
    if center is not None:
        m[:n, n] = np.asarray(center, dtype=F32) * (F32(1) - s)
    return m


def rotation(angle_deg: float, axis: Sequence[float] | None = None,
             center: Sequence[float] | None = None) -> np.ndarray:
    """2D: counter-clockwise for y up; 3D: right-handed about `axis` (divided by its length; a zero
    axis gives NaNs, as in DALI's transforms.rotation)."""
    rad = deg2rad(angle_deg)
    if axis is None:
        c, s = F32(math.cos(float(rad))), F32(math.sin(float(rad)))  # cosf / sinf of the float32 angle
        m = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], dtype=F32)
    else:
        m = np.eye(4, dtype=F32)
        with np.errstate(divide="ignore", invalid="ignore"):
            m[:3, :3] = rotation3d_f32(axis, rad)
    return about(m, center)


def shear(factors: np.ndarray, center: Sequence[float] | None = None) -> np.ndarray:
    """`factors` (ndim, ndim - 1): row i holds the shear of axis i along each other axis, in
    order (2D: (sx, sy); 3D: (sxy, sxz), (syx, syz), (szx, szy))."""
    n = factors.shape[0]
    m = np.eye(n + 1, dtype=F32)
    for i in range(n):
        others = [j for j in range(n) if j != i]
        for k, j in enumerate(others):
            m[i, j] = F32(factors[i, k])
    return about(m, center)


def crop(from_start: Sequence[float], from_end: Sequence[float], to_start: Sequence[float],
         to_end: Sequence[float], absolute: bool = False) -> np.ndarray:
    """Maps the box [from_start, from_end] onto [to_start, to_end], axis by axis (float32: scale =
    to extent / from extent, translation = to_start - scale * from_start)."""
    fs, fe, ts, te = (np.asarray(v, dtype=F32) for v in (from_start, from_end, to_start, to_end))
    if absolute:
        fs, fe = np.minimum(fs, fe), np.maximum(fs, fe)
        ts, te = np.minimum(ts, te), np.maximum(ts, te)
    n = len(fs)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = (te - ts) / (fe - fs)
    m = np.eye(n + 1, dtype=F32)
    m[np.arange(n), np.arange(n)] = s
    m[:n, n] = ts - s * fs
    return m
