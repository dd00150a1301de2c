"""experimental.readers.fits against astropy's reading of astropy-written files (DALI's own test's
oracle; DALI 2.4's CPU reader needs a CUDA driver to read data, see tests/reference/fits_cases.py),
DALI's errors, the readers' file naming and sharding, and hostile headers (in a child process)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, DataError, PipelineError

try:
    from tests._isolate import Died, run_isolated
    from tests.reference import fits_cases as C
except ImportError:  # pytest puts tests/ itself on sys.path
    from _isolate import Died, run_isolated  # type: ignore[no-redef]
    from reference import fits_cases as C  # type: ignore[no-redef]

TABLES = np.load(C.HERE / C.TABLES)


def _write(folder: Path, name: str) -> Path:
    p = folder / f"{name}.fits"
    p.write_bytes(TABLES[f"file/{name}"].tobytes())
    return p


def _run(batch_size: int = 1, iters: int = 1, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None)
    def pipe():
        out = fn.experimental.readers.fits(name="R", **kw)
        return tuple(out) if isinstance(out, (list, tuple)) else (out,)
    p = pipe()
    p.build()
    return p, [p.run() for _ in range(iters)]


@pytest.mark.parametrize("name", list(C.IMAGES))
def test_matches_astropy(tmp_path, name):
    path = _write(tmp_path, name)
    _, [(a, b)] = _run(files=[str(path)], hdu_indices=[2, 3])
    for k, out in zip((2, 3), (a, b)):
        want = TABLES[f"astropy/{name}/{k}"]
        got = np.array(out[0])
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    assert a.layout() == ""


def test_listing_default_hdu_and_shards(tmp_path):
    names = ["rice_i16", "gzip1_i16", "tiles_i16"]
    for n in names:
        _write(tmp_path, n)
    (tmp_path / "skip.txt").write_text("not fits")
    want = {n: TABLES[f"astropy/{n}/2"] for n in names}
    order = sorted(f"{n}.fits" for n in names)
    p, runs = _run(batch_size=3, iters=1, file_root=str(tmp_path))  # default hdu_indices=[2]
    got = [np.array(s) for (out,) in runs for s in out]
    assert [g.shape for g in got] == [want[o[:-5]].shape for o in order]
    assert all(np.array_equal(g, want[o[:-5]]) for g, o in zip(got, order))
    assert p.epoch_size("R") == 3
    lst = tmp_path / "list.txt"
    lst.write_text("rice_i16.fits\ntiles_i16.fits\n")
    _, [(out,)] = _run(batch_size=2, file_list=str(lst))
    assert np.array_equal(np.array(out[0]), want["rice_i16"])
    # shard 1 of 2 holds samples [1, 3) of the sorted listing
    _, [(out,)] = _run(batch_size=2, file_root=str(tmp_path), num_shards=2, shard_id=1)
    assert [np.array(s).shape for s in out] == [want[o[:-5]].shape for o in order[1:]]


@pytest.mark.parametrize("case", list(C.ERRORS))
def test_errors_as_dali(tmp_path, case):
    file, kw = C.ERRORS[case]
    assert TABLES[f"dali_error/{case}"].size  # DALI refuses it too
    kw = dict(kw)
    if isinstance(kw.get("dtypes"), str):
        kw["dtypes"] = [getattr(types, t) for t in kw["dtypes"].split(",")]
    path = _write(tmp_path, file) if f"file/{file}" in TABLES.files else tmp_path / file
    with pytest.raises((DataError, ArgumentError, PipelineError)) as e:
        _run(files=[str(path)], **kw)
    if case != "dtypes_count":
        assert path.name in str(e.value)


def test_dtypes_checked():
    with pytest.raises(ArgumentError):
        _run(files=["x.fits"], dtypes=[types.STRING])


# -- hostile headers, in a child process ------------------------------------------------------

def _card(k: str, v: object) -> bytes:
    if isinstance(v, bool):
        v = "T" if v else "F"
    elif isinstance(v, str):
        v = f"'{v:8}'"
    return f"{k:8}= {v!s:>20}".ljust(80).encode()


def _header(cards: list[tuple[str, object]], end: bool = True) -> bytes:
    h = b"".join(_card(k, v) for k, v in cards) + (b"END".ljust(80) if end else b"")
    return h + b" " * (-len(h) % 2880)


PRIMARY = _header([("SIMPLE", True), ("BITPIX", 8), ("NAXIS", 0), ("EXTEND", True)])


def _image(bitpix: int, dims: list[int], data: bytes = b"", naxis: int | None = None) -> bytes:
    cards = [("XTENSION", "IMAGE"), ("BITPIX", bitpix), ("NAXIS", len(dims) if naxis is None else naxis)]
    cards += [(f"NAXIS{i + 1}", d) for i, d in enumerate(dims)] + [("PCOUNT", 0), ("GCOUNT", 1)]
    return _header(cards) + data + b"\0" * (-len(data) % 2880)


def _hostile() -> dict[str, bytes]:
    good = fn_bytes = TABLES["file/rice_i16"].tobytes()
    k = fn_bytes.find(b"ZNAXIS1 =")
    huge = fn_bytes[:k] + _card("ZNAXIS1", 1 << 40) + fn_bytes[k + 80:]
    k = good.find(b"ZNAXIS2 =")
    negative_z = good[:k] + _card("ZNAXIS2", -3) + good[k + 80:]
    heap = int(np.frombuffer(good, np.uint8).size) - 2880  # the compressed bytes are in the last block
    garbled = bytearray(good)
    garbled[heap:heap + 2000] = bytes((i * 37) % 256 for i in range(2000))
    return {
        "naxis_huge": PRIMARY + _image(16, [2, 2], b"\0" * 8, naxis=100000),
        "naxis_negative": PRIMARY + _image(16, [4, -7]),
        "size_huge": PRIMARY + _image(-64, [1 << 30, 1 << 30]),
        "truncated_data": (PRIMARY + _image(32, [100, 100], b"\1" * 40000))[:2880 * 3],
        "no_end": PRIMARY + _header([("XTENSION", "IMAGE"), ("BITPIX", 8)], end=False),
        "not_fits": b"GIF89a" + b"\0" * 3000,
        "bitpix_odd": PRIMARY + _image(24, [3], b"\0" * 9),
        "compressed_huge": huge,
        "compressed_negative": negative_z,
        "compressed_garbled": bytes(garbled),
    }


def _child(request: dict) -> dict:
    path = Path(request["path"])
    try:
        _run(files=[str(path)])
    except Exception as e:  # noqa: BLE001 - what the reader raised, for the parent to check
        cause = e.__cause__ if isinstance(e, PipelineError) and e.__cause__ is not None else e
        return {"type": type(cause).__name__, "msg": str(cause)}
    return {"type": None, "msg": ""}


def test_hostile_headers(tmp_path):
    cases = _hostile()
    requests = []
    for name, data in cases.items():
        p = tmp_path / f"{name}.fits"
        p.write_bytes(data)
        requests.append({"path": str(p)})
    results = run_isolated("tests.test_readers_fits:_child", requests, timeout=60)
    for (name, _), r, req in zip(cases.items(), results, requests):
        assert not isinstance(r, Died), (name, r)
        if name == "compressed_garbled" and r["type"] is None:
            continue  # garbled RICE bits can still decode to some image; it must not crash
        assert r["type"] == "DataError", (name, r)
        assert Path(req["path"]).name in r["msg"], (name, r)


def test_rice_tiles_decode_directly():
    """The RICE decoder on its own: the stored file's tiles give the image astropy read."""
    from torch_dali.io import fits
    buf = TABLES["file/rice_i16"].tobytes()
    read = lambda o, n: buf[o:o + n]  # noqa: E731
    hdus = fits.list_hdus(read, len(buf), "x", 2)
    img = fits.read_image(read, hdus[1], "x")
    assert img.shape == (20, 37) and np.array_equal(img, TABLES["astropy/rice_i16/2"])


@pytest.mark.parametrize("value", ["'abc'    ", "         ", "       0.5", "        -32", "      99999"])
def test_bad_compression_parameters_are_data_errors(value):
    """ZVALi of a compressed image's BLOCKSIZE / BYTEPIX that is not a usable integer (a string, no
    value, a fraction, out of range): a DataError naming the file, not a ValueError / TypeError
    (found by the fits fuzz target)."""
    from torch_dali.io import fits
    buf = bytearray(TABLES["file/rice_i16"].tobytes())
    for name in (b"ZVAL1   =", b"ZVAL2   ="):  # BLOCKSIZE, then BYTEPIX
        at = bytes(buf).index(name)
        bad = bytearray(buf)
        bad[at + 10:at + 30] = value.rjust(20).encode()
        data = bytes(bad)
        read = lambda o, n, d=data: d[o:o + n]  # noqa: E731
        hdus = fits.list_hdus(read, len(data), "hostile.fits", 2)
        with pytest.raises(DataError, match="hostile.fits"):
            fits.read_image(read, hdus[1], "hostile.fits")


def test_gzip_tile_inflates_only_what_the_tile_needs():
    """A GZIP_1/GZIP_2 tile was inflated whole: deflate reaches ~1000x, so a tile of a 64 KiB file
    made 64 MiB here (a 10 MB file, ~10 GB) though the tile's pixels take a few hundred bytes."""
    import tracemalloc
    import zlib
    from torch_dali.io import fits
    bomb = zlib.compress(b"\0" * (64 << 20), 9)
    tracemalloc.start()
    try:
        out = fits._gunzip(bomb, "x.fits", 200)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out == b"\0" * 200 and len(bomb) < 1 << 17 and peak < 1 << 20, (len(bomb), peak)
