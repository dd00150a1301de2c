"""decoders.inflate against lz4's own compressor: the cases of DALI's operator_1/test_inflate.py
(which needs a GPU), run on the CPU here."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentError, ArgumentTypeError, DataError, PipelineError

lz4_block = pytest.importorskip("lz4.block")

ERRORS = (ArgumentError, ArgumentTypeError, DataError, PipelineError)


def lz(a: np.ndarray) -> np.ndarray:
    return np.frombuffer(lz4_block.compress(np.ascontiguousarray(a), store_size=False), np.uint8)


def run(samples, batch_size=None, **kw):
    """One iteration of inflate over `samples` (each a tuple: data, then per-sample args named in
    kw as the string "@name")."""
    names = [k for k, v in kw.items() if isinstance(v, str) and v == "@"]
    const = {k: v for k, v in kw.items() if k not in names}
    bs = batch_size or len(samples)

    @pipeline_def(batch_size=bs, num_threads=2, device_id=None)
    def pipe():
        outs = fn.external_source(source=lambda: [list(c) for c in zip(*samples)],
                                  num_outputs=1 + len(names), batch=True)
        return fn.decoders.inflate(outs[0], **dict(zip(names, outs[1:])), **const)
    p = pipe()
    p.build()
    (out,) = p.run()
    return out


@pytest.mark.parametrize("dtype,np_dtype", [(types.UINT8, np.uint8), (types.INT8, np.int8),
                                            (types.UINT16, np.uint16), (types.INT32, np.int32),
                                            (types.FLOAT, np.float32), (types.FLOAT16, np.float16)])
def test_one_chunk_per_sample(dtype, np_dtype):
    sizes = [1, 7, 300]
    base = [np.arange(s * 3, s * 4).astype(np_dtype) for s in sizes]
    out = run([(lz(b), np.array(len(b), np.int32)) for b in base], shape="@", dtype=dtype)
    assert out.layout() == ""
    for o, b in zip(out, base):
        np.testing.assert_array_equal(np.array(o), b)


@pytest.mark.parametrize("shape,layout", [(65521, "X"), ([3, 5, 7], "ABC"), ([4, 8, 16, 2], None),
                                          (np.array([], np.int32), None)])
def test_constant_shape_and_layout(shape, layout):
    dims = [int(d) for d in np.atleast_1d(shape)]
    base = [(np.arange(int(np.prod(dims)), dtype=np.uint16) * k).reshape(dims) for k in (1, 2)]
    out = run([(lz(b),) for b in base], shape=shape, dtype=types.UINT16, layout=layout)
    assert out.layout() == (layout or "")
    for o, b in zip(out, base):
        assert np.array(o).shape == b.shape
        np.testing.assert_array_equal(np.array(o), b)


def _chunked(rng, nchunks, frame_shape, dtype=np.int16):
    frames = (rng.standard_normal((nchunks,) + frame_shape) * 100).astype(dtype)
    chunks = [lz(f) for f in frames]
    sizes = np.array([len(c) for c in chunks], np.int32)
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32)
    return frames, np.concatenate(chunks), offsets, sizes


@pytest.mark.parametrize("mode", ["offsets", "sizes", "both", "subset"])
@pytest.mark.parametrize("layout,seq", [("HW", None), ("HW", "Q"), (None, "Q")])
def test_chunks(mode, layout, seq):
    rng = np.random.default_rng(len(mode) * 7 + len(layout or "") + (seq == "Q"))
    samples, want = [], []
    for n in (1, 5, 9):
        frames, data, offsets, sizes = _chunked(rng, n, (6, 4))
        if mode == "subset":
            pick = rng.permutation(n)[: max(1, n // 2)]
            frames, offsets, sizes = frames[pick], offsets[pick], sizes[pick]
        args = {"offsets": (offsets,), "sizes": (sizes,)}.get(mode, (offsets, sizes))
        samples.append((data,) + args)
        want.append(frames)
    kw = {"chunk_offsets": "@"} if mode == "offsets" else {"chunk_sizes": "@"} if mode == "sizes" \
        else {"chunk_offsets": "@", "chunk_sizes": "@"}
    out = run(samples, shape=[6, 4], dtype=types.INT16, layout=layout, sequence_axis_name=seq, **kw)
    assert out.layout() == ((seq or "F") + layout if layout else "")
    for o, w in zip(out, want):
        np.testing.assert_array_equal(np.array(o), w)


def test_oversized_shape_pads_with_zeros():
    frames, data, offsets, _ = _chunked(np.random.default_rng(0), 3, (4, 5))
    out = run([(data, offsets)], shape=[5, 6], dtype=types.INT16, chunk_offsets="@")
    o = np.array(out[0])
    assert o.shape == (3, 5, 6)
    for got, f in zip(o, frames):
        flat = got.reshape(-1)
        np.testing.assert_array_equal(flat[:20], f.reshape(-1))
        assert not flat[20:].any()


@pytest.mark.parametrize("kw", [{"chunk_offsets": []}, {"chunk_sizes": np.array([], np.int32)}])
def test_no_chunks(kw):
    data = np.concatenate([lz(np.full((8, 8, 3), 42, np.uint8))] * 3)
    out = run([(data,), (data,)], shape=(8, 8, 3), layout="HWC", **kw)
    assert out.layout() == "FHWC"
    assert all(np.array(o).shape == (0, 8, 8, 3) for o in out)


B5 = np.array([1, 2, 3, 4, 5], np.uint8)


@pytest.mark.parametrize("data,kw,fragment", [
    (B5, {"shape": np.array([[1, 5], [4, 5]], np.int32)}, "1-D"),
    (B5, {"shape": 4, "dtype": types.STRING}, "type"),
    (np.array([1, 2, 3, 4], np.float32), {"shape": 42}, "uint8"),
    (np.array(1, np.uint8), {"shape": 42}, "1-D"),
    (B5, {"shape": 42, "algorithm": ""}, "algorithm"),
    (B5, {"shape": 42, "chunk_sizes": [6]}, "larger than the sample"),
    (B5, {"shape": 42, "chunk_sizes": [3, 3]}, "add up"),
    (B5, {"shape": 42, "chunk_sizes": [0]}, "chunk size 0"),
    (B5, {"shape": 42, "chunk_sizes": [3, -1]}, "chunk size -1"),
    (B5, {"shape": 42, "chunk_offsets": [0, 5]}, "offset 5"),
    (B5, {"shape": 42, "chunk_offsets": [1, 1]}, "chunk of 0 bytes"),
    (B5, {"shape": 42, "chunk_offsets": [1, 1], "chunk_sizes": [1, 1, 1]}, "2 chunk offsets and 3"),
    (B5, {"shape": 42, "chunk_offsets": [-5, 0], "chunk_sizes": [5, 5]}, "non-negative"),
    (B5, {"shape": 42, "chunk_offsets": [2], "chunk_sizes": [4]}, "past the sample"),
    (B5, {"shape": 5, "sequence_axis_name": ""}, "one character"),
    (B5, {"shape": 5, "sequence_axis_name": "AB"}, "one character"),
    (B5, {"shape": 42}, "not an LZ4 block"),  # corrupt data
    (lz(np.arange(100, dtype=np.uint8)), {"shape": 50}, "not an LZ4 block"),  # inflates to more
])
def test_refusals(data, kw, fragment):
    with pytest.raises(ERRORS) as e:
        run([(data,)], **kw)
    assert fragment in str(e.value)


def test_random_garbage_never_crashes():
    rng = np.random.default_rng(5)
    good = lz(np.arange(4000, dtype=np.int32))
    for _ in range(40):
        bad = good.copy()
        bad[rng.integers(0, len(bad), 8)] = rng.integers(0, 256, 8)
        try:
            out = run([(bad,)], shape=4000, dtype=types.INT32)
            assert np.array(out[0]).shape == (4000,)
        except PipelineError as e:
            assert isinstance(e.__cause__, DataError)


_MANY_CHUNKS = """
import sys, time
import numpy as np
from torch_dali import fn, pipeline_def
n = int(sys.argv[1])
data = np.zeros(2 * n, np.uint8)
data[0::2] = 0x10  # each chunk a 2-byte LZ4 block: one literal, the byte after it
data[1::2] = np.arange(n) % 251
sizes = np.full(n, 2, np.int32)

@pipeline_def(batch_size=1, num_threads=1, device_id=None)
def pipe():
    x, s = fn.external_source(source=lambda: ([data], [sizes]), num_outputs=2, batch=True)
    return fn.decoders.inflate(x, shape=[1], chunk_sizes=s)
p = pipe()
p.build()
out = np.array(p.run()[0].at(0))
assert out.shape == (n, 1) and (out[:, 0] == np.arange(n) % 251).all()
print("ok")
"""


def test_many_chunks_take_linear_time():
    """Chunk offsets from `chunk_sizes` alone were summed afresh for each chunk: 100,000 sizes
    (a 200 kB sample, the sizes a per-sample input that may come from data) took 56 s, a million
    hours. In a child with a timeout; 200,000 chunks now take about a second."""
    import subprocess
    from pathlib import Path
    r = subprocess.run([sys.executable, "-c", _MANY_CHUNKS, "200000"], capture_output=True, text=True,
                       timeout=90, cwd=Path(__file__).resolve().parent.parent)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def test_needs_lz4(monkeypatch):
    monkeypatch.setitem(sys.modules, "lz4.block", None)
    monkeypatch.setitem(sys.modules, "lz4", None)
    with pytest.raises(ERRORS, match="lz4"):
        run([(B5,)], shape=5)


@pytest.mark.parametrize("dtype,np_dtype", [(types.UINT8, np.uint8), (types.FLOAT, np.float32),
                                            (types.INT64, np.int64)])
def test_empty_samples_of_any_type(dtype, np_dtype):
    # an empty uint8 buffer could not be viewed as a wider type (DALI's test_inflate has empty samples)
    out = run([(lz(np.zeros(0, np_dtype)),)], shape=[0], dtype=dtype)
    got = np.asarray(out.as_cpu()[0])
    assert got.shape == (0,) and got.dtype == np_dtype
