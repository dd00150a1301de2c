"""The FITS reader's reference cases (tests/test_readers_fits.py).

`make_fits_tables.py` (DALI's venv, with astropy importable) writes each case's FITS file with
astropy, what DALI 2.4's CPU reader gives for it, and what astropy reads from it, into
`fits_tables.npz`; the test reads the files from there, so it needs neither astropy nor DALI.

DALI 2.4's CPU FITS reader allocates its output with CUDA: on a machine without a CUDA driver every
case that reads data fails with a CUDA error (measured here, cudaErrorInsufficientDriver). For
those cases the table holds astropy's reading, which is the oracle DALI's own test
(reader/test_fits.py) holds its reader to; the cases that fail before reading (bad HDU numbers,
tables, images without axes, missing files, `dtypes` of the wrong length) hold DALI's error.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

TABLES = "fits_tables.npz"
HERE = Path(__file__).parent

# name -> (numpy type, shape, how it is stored)
IMAGES: dict[str, tuple[str, tuple[int, ...], str]] = {
    "u8": ("uint8", (5, 7), "plain"), "i8": ("int8", (6,), "plain"),
    "i16": ("int16", (3, 4, 5), "plain"), "u16": ("uint16", (4, 6), "plain"),
    "i32": ("int32", (2, 3, 2, 2), "plain"), "u32": ("uint32", (3, 3), "plain"),
    "i64": ("int64", (4, 2), "plain"), "u64": ("uint64", (2, 5), "plain"),
    "f32": ("float32", (7, 3), "plain"), "f64": ("float64", (2, 9), "plain"),
    "rice_u8": ("uint8", (9, 40), "RICE_1"), "rice_i16": ("int16", (20, 37), "RICE_1"),
    "rice_u16": ("uint16", (11, 13), "RICE_1"), "rice_i32": ("int32", (3, 7, 5), "RICE_1"),
    "rice_f32": ("float32", (12, 17), "RICE_1"), "rice_f64": ("float64", (5, 40), "RICE_1"),
    "gzip1_i16": ("int16", (10, 10), "GZIP_1"), "gzip2_i32": ("int32", (8, 9), "GZIP_2"),
    "gzip2_f32_lossless": ("float32", (6, 7), "GZIP_2 lossless"),
    "tiles_i16": ("int16", (23, 31), "RICE_1 tiles"), "dither2_f32": ("float32", (16, 16), "RICE_1 dither2"),
    "none_u16": ("uint16", (4, 4), "NOCOMPRESS"),
}


def make_array(name: str) -> Any:
    import numpy as np
    dtype, shape, _ = IMAGES[name]
    rng = np.random.default_rng(sum(map(ord, name)))
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal(shape) * 50
        if "dither2" in name:
            a.flat[::5] = 0.0  # SUBTRACTIVE_DITHER_2 stores zeros exactly
        return a.astype(dtype)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -3000), min(info.max, 3000)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def write_file(path: Path, name: str) -> None:
    """Case `name`'s file: an empty primary HDU, the image, and its double as a third HDU."""
    from astropy.io import fits
    a = make_array(name)
    how = IMAGES[name][2]
    hdus = [fits.PrimaryHDU()]
    for k, data in enumerate((a, a[::-1].copy())):
        if how == "plain":
            hdus.append(fits.ImageHDU(data))
            continue
        kw: dict[str, Any] = {"compression_type": how.split()[0]}
        if "lossless" in how:
            kw["quantize_level"] = 0.0
        if "tiles" in how:
            kw["tile_shape"] = (7, 10)
        if "dither2" in how:
            kw["quantize_method"] = 2
        hdus.append(fits.CompImageHDU(data, **kw))
    fits.HDUList(hdus).writeto(path, overwrite=True)


def write_special(folder: Path) -> dict[str, Path]:
    """The files of the error cases: a table extension, a primary HDU without data."""
    import numpy as np
    from astropy.io import fits
    out = {"table": folder / "table.fits", "bare": folder / "bare.fits"}
    t = fits.BinTableHDU.from_columns([fits.Column(name="a", format="J", array=np.arange(3))])
    fits.HDUList([fits.PrimaryHDU(), t]).writeto(out["table"], overwrite=True)
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.zeros((2, 3), np.int16))]).writeto(
        out["bare"], overwrite=True)
    return out


# error cases: name -> (file, reader kwargs besides `files`)
ERRORS: dict[str, tuple[str, dict[str, Any]]] = {
    "table_hdu": ("table", {}),
    "no_axes": ("bare", {"hdu_indices": [1]}),
    "hdu_zero": ("bare", {"hdu_indices": [0]}),
    "hdu_past_end": ("bare", {"hdu_indices": [3]}),
    "dtypes_count": ("bare", {"dtypes": "INT16,INT16"}),
    "missing_file": ("nonexistent", {}),
}
