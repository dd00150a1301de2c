"""readers.numpy beyond the DALI tables (tests/test_readers_formats.py): per-sample regions, the
files numpy.save writes for any shape and order, refusals naming the file, YAML round trips."""
from __future__ import annotations

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError, PipelineError
from torch_dali.pipeline import Pipeline


def _pipe(bs=2, **kw):
    @pipeline_def(batch_size=bs, num_threads=2, device_id=None, seed=3)
    def p():
        return fn.readers.numpy(name="R", **kw)
    pipe = p()
    pipe.build()
    return pipe


def _arrays(pipe, n=1):
    out = []
    for _ in range(n):
        (tl,) = pipe.run()
        out += [np.asarray(tl.at(i)) for i in range(len(tl))]
    return out


@pytest.fixture()
def arrays(tmp_path):
    rng = np.random.default_rng(0)
    made = []
    for k, shape in enumerate([(6, 7, 3), (9, 4, 3), (5, 5, 3)]):
        a = rng.integers(-1000, 1000, shape).astype(np.int32)
        np.save(tmp_path / f"a{k}.npy", np.asfortranarray(a) if k == 1 else a)
        made.append(a)
    return tmp_path, made


def test_numpy_save_files_any_order_and_rank(tmp_path):
    """What numpy.save writes (C and Fortran order, 0 to 6 dims, empty arrays) reads back as np.load."""
    rng = np.random.default_rng(1)
    shapes = [(), (0,), (3, 0, 2), (4,), (2, 3), (3, 1, 4), (2, 2, 2, 3), (1, 2, 1, 2, 3, 2)]
    for k, shape in enumerate(shapes):
        a = rng.standard_normal(shape).astype(np.float32)
        np.save(tmp_path / f"f{k}.npy", np.asfortranarray(a) if k % 2 else a)
    files = [f"f{k}.npy" for k in range(len(shapes))]
    got = _arrays(_pipe(bs=1, file_root=str(tmp_path), files=files), len(shapes))
    for k, g in enumerate(got):
        want = np.load(tmp_path / files[k])
        assert g.shape == want.shape and g.flags.c_contiguous
        np.testing.assert_array_equal(g, want)


def test_version_2_and_3_headers(tmp_path):
    for v in ((2, 0), (3, 0)):
        with open(tmp_path / f"v{v[0]}.npy", "wb") as f:
            np.lib.format.write_array(f, np.arange(6, dtype=np.int16).reshape(2, 3), version=v)
    got = _arrays(_pipe(bs=2, file_root=str(tmp_path)))
    for g in got:
        np.testing.assert_array_equal(g, np.arange(6, dtype=np.int16).reshape(2, 3))


def test_per_sample_roi_equals_numpy_slicing(arrays):
    root, made = arrays
    starts = [[1, 2], [3, 0], [0, 1]]
    ends = [[5, 6], [9, 3], [2, 5]]

    @pipeline_def(batch_size=3, num_threads=2, device_id=None)
    def p():
        s = fn.external_source(source=lambda: [np.array(x, np.int32) for x in starts])
        e = fn.external_source(source=lambda: [np.array(x, np.int32) for x in ends])
        return fn.readers.numpy(file_root=str(root), roi_start=s, roi_end=e, roi_axes=[0, 1])
    pipe = p()
    pipe.build()
    got = _arrays(pipe)
    for a, s, e, g in zip(made, starts, ends, got):
        np.testing.assert_array_equal(g, a[s[0]:e[0], s[1]:e[1]])


def test_roi_pad_fills_outside(arrays):
    root, made = arrays
    got = _arrays(_pipe(bs=3, file_root=str(root), roi_start=[-2], roi_end=[8], roi_axes=[1],
                        out_of_bounds_policy="pad", fill_value=-7.5), 1)
    for a, g in zip(made, got):
        assert g.shape == (a.shape[0], 10, 3)
        np.testing.assert_array_equal(g[:, 2:2 + min(a.shape[1], 6)], a[:, :min(a.shape[1], 6)])
        assert (g[:, :2] == -8).all()  # -7.5 rounded half away from zero, as DALI converts


@pytest.mark.parametrize("data, why", [
    (lambda p: np.save(p, np.arange(3, dtype=np.complex64)), "Unknown Numpy type string"),
    (lambda p: np.save(p, np.arange(3, dtype=">i4")), "big-endian"),
    (lambda p: np.save(p, np.array(["ab"])), "Unknown Numpy type string"),
    (lambda p: np.save(p, np.zeros(2, dtype=[("a", "<i4")])), "structured"),
    (lambda p: p.write_bytes(b"\x93NUMPY\x01\x00\xff\xff{'descr'"), "runs past the end"),
    (lambda p: p.write_bytes(b"not a numpy file at all"), "no \\x93NUMPY magic"),
    (lambda p: p.write_bytes(b""), "no \\x93NUMPY magic"),
])
def test_bad_files_are_errors_naming_them(tmp_path, data, why):
    p = tmp_path / "bad.npy"
    data(p)
    pipe = _pipe(bs=1, file_root=str(tmp_path))
    with pytest.raises(PipelineError) as e:
        pipe.run()
    assert why in str(e.value) and "bad.npy" in str(e.value)


def _npy_v1(path, header: str) -> None:
    h = header.encode("latin-1")
    h += b" " * ((-(len(h) + 11)) % 64) + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h)


@pytest.mark.parametrize("shape, why", [
    ("(0, 9223372036854775808)", "does not fit 64 bits"),  # nbytes 0: torch's view() overflowed
    ("(0, 4611686018427387904, 4)", "does not fit 64 bits"),  # numel overflow in torch
    ("(0, " + "9" * 5000 + ")", "5000 digits"),  # int() refused 4300+ digits with a ValueError
    ("(0, " + "0" * 5000 + "7)", "(0, 7)"),  # leading zeros are not digits that count
])
def test_npy_shape_that_overflows_is_named(tmp_path, shape, why):
    """A header whose zero extent makes the data 0 bytes, with other extents past 64 bits, gave a
    TypeError/RuntimeError from torch (or a ValueError from int()) naming no file."""
    _npy_v1(tmp_path / "huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % shape)
    pipe = _pipe(bs=1, file_root=str(tmp_path))
    if why == "(0, 7)":
        assert _arrays(pipe)[0].shape == (0, 7)
        return
    with pytest.raises(PipelineError) as e:
        pipe.run()
    assert "DataError" in str(e.value) and why in str(e.value) and "huge.npy" in str(e.value)


def test_truncated_data_is_an_error(tmp_path):
    np.save(tmp_path / "t.npy", np.arange(100, dtype=np.float64))
    raw = (tmp_path / "t.npy").read_bytes()
    (tmp_path / "t.npy").write_bytes(raw[:-9])
    with pytest.raises(PipelineError, match="truncated"):
        _pipe(bs=1, file_root=str(tmp_path)).run()


def test_inconsistent_batch_is_named(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros((2, 3), np.int32))
    np.save(tmp_path / "b.npy", np.zeros((2, 3), np.float32))
    with pytest.raises(PipelineError, match="Inconsistent data.*float32.*int32"):
        _pipe(bs=2, file_root=str(tmp_path)).run()


def test_listing_arguments(tmp_path):
    np.save(tmp_path / "a.npy", np.zeros(1))
    (tmp_path / "list.txt").write_text("../outside.npy\n")
    with pytest.raises(DataError, match="outside"):
        _pipe(file_list=str(tmp_path / "list.txt"))
    with pytest.raises(DataError, match="does not exist"):
        _pipe(file_root=str(tmp_path), files=["missing.npy"])
    with pytest.raises(ArgumentError, match="cannot be used together"):
        _pipe(files=["a.npy"], file_list=str(tmp_path / "list.txt"))
    with pytest.raises(ArgumentError, match="file_root"):
        _pipe()
    with pytest.raises(DataError, match="empty"):
        _pipe(file_root=str(tmp_path), file_filter="*.nothing")
    pipe = _pipe(bs=1, file_root=str(tmp_path), lazy_init=True)
    np.testing.assert_array_equal(_arrays(pipe)[0], np.zeros(1))


def test_yaml_round_trip(arrays):
    root, made = arrays
    pipe = _pipe(bs=3, file_root=str(root), rel_roi_start=[0.2, 0.1], rel_roi_shape=[0.5, 0.5], roi_axes=[0, 1],
                 dont_use_mmap=True)
    again = Pipeline.deserialize(serialized_pipeline=pipe.serialize())
    again.build()
    for a, b in zip(_arrays(pipe), _arrays(again)):
        np.testing.assert_array_equal(a, b)


def test_one_roi_value_applies_to_every_roi_axis(tmp_path):
    # DALI 2.4 (measured on this 6x5x4 array): an ROI argument with one value is broadcast to
    # every ROI axis (all axes, or `roi_axes`), each argument on its own; it was refused here.
    b = np.arange(6 * 5 * 4, dtype=np.int16).reshape(6, 5, 4)
    np.save(tmp_path / "b.npy", b)
    f = [str(tmp_path / "b.npy")]
    cases = [(dict(roi_start=[1], roi_shape=[2]), b[1:3, 1:3, 1:3]),
             (dict(roi_start=[1], roi_end=[3]), b[1:3, 1:3, 1:3]),
             (dict(roi_start=[1], roi_shape=[2], roi_axes=[0, 2]), b[1:3, :, 1:3]),
             (dict(roi_start=[1], roi_shape=[2, 2, 2]), b[1:3, 1:3, 1:3]),
             (dict(roi_start=[1, 0, 2], roi_shape=[2]), b[1:3, 0:2, 2:4]),
             (dict(roi_end=[3]), b[:3, :3, :3]),
             (dict(roi_start=[2]), b[2:, 2:, 2:]),
             (dict(rel_roi_start=[0.2], rel_roi_end=[0.8]), b[1:5, 1:4, 1:3]),
             (dict(rel_roi_start=[0.2], rel_roi_shape=[0.5]), b[1:4, 1:4, 1:3]),
             (dict(roi_start=[4], roi_shape=[3], out_of_bounds_policy="pad", fill_value=-7),
              np.full((3, 3, 3), -7, np.int16))]
    for kw, want in cases:
        (got,) = _arrays(_pipe(bs=1, files=f, **kw))
        assert got.dtype == np.int16 and np.array_equal(got, want), kw
    # two values for three axes stay an error, as in DALI 2.4
    with pytest.raises((DataError, PipelineError)):
        _arrays(_pipe(bs=1, files=f, roi_start=[1, 2], roi_shape=[2, 2]))
