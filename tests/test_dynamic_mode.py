"""DALI's dynamic mode (`nvidia.dali.experimental.dynamic`, "ndd") over torch_dali. Expected values
were measured with DALI 2.4's CPU backend."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import torch_dali.experimental.dynamic as ndd
from torch_dali import types


def test_dtypes_of_python_data_and_names():
    # DALI 2.4: ints are i32, floats f32, bools bool; NumPy scalars keep their type
    assert ndd.tensor([1, 2, 3]).dtype == ndd.int32
    assert ndd.tensor([1.0, 2]).dtype == ndd.float32
    assert ndd.tensor(True).dtype == ndd.bool
    assert ndd.tensor(np.int64(3)).dtype == ndd.int64
    assert str(ndd.float32) == "f32" and str(ndd.uint8) == "u8" and ndd.float32.bytes == 4
    assert ndd.dtype(np.float32) == ndd.float32 and ndd.type_id(ndd.int8) == types.INT8
    assert int(types.INT32) == 6 and int(types.INTERP_CUBIC) == 2 and int(types.YCbCr) == 3


def test_enum_tensors():
    t = ndd.Tensor(types.INTERP_CUBIC)
    assert t.dtype == ndd.InterpType
    assert ndd.tensor(t, dtype=ndd.int32).item() == 2


def test_as_tensor_shares_tensor_copies():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    shared, copied = ndd.as_tensor(a), ndd.tensor(a)
    a[0, 0] = 100
    assert np.asarray(shared)[0, 0] == 100 and np.asarray(copied)[0, 0] == 0
    assert shared.torch().data_ptr() == a.ctypes.data
    src = torch.arange(4)
    assert ndd.as_tensor(src).torch().data_ptr() == src.data_ptr()


def test_tensor_properties_and_subscript():
    t = ndd.tensor(np.zeros((5, 6, 7, 10), dtype=np.int32), layout="DHWC")
    assert (t.shape, t.ndim, t.size, t.nbytes, t.itemsize) == ((5, 6, 7, 10), 4, 2100, 8400, 4)
    s = t[1:3, ..., 0]
    assert s.shape == (2, 6, 7) and s.layout == "DHW"
    r = ndd.tensor([0, 1, 2, 3, 4, 5])[-1:1:-1]
    assert np.asarray(r).tolist() == [5, 4, 3, 2]
    with pytest.raises(ValueError, match="dimensions"):
        ndd.tensor(np.zeros((2, 2)), layout="HWC")
    for new_axis in ((None,), (Ellipsis, None), (0, None)):  # DALI 2.4: ValueError for each
        with pytest.raises(ValueError, match="new axis"):
            t[new_axis]


def test_batch_construction_and_slicing():
    b = ndd.batch([[1, 2, 3], [4, 5]])
    assert b.batch_size == 2 and b.shape == [(3,), (2,)] and b.dtype == ndd.int32
    with pytest.raises(ValueError):
        ndd.batch([])
    assert ndd.batch([], dtype=ndd.int32).shape == []
    split = ndd.as_batch(ndd.tensor(np.arange(6).reshape(3, 2)))
    assert split.batch_size == 3 and split.shape == [(2,)] * 3
    m = ndd.as_batch([ndd.tensor([[1, 2, 3], [4, 5, 6]]), ndd.tensor([[7, 8, 9, 10], [11, 12, 13, 14]])])
    picked = m.slice[ndd.as_batch([1, 0]), ndd.as_batch([1, 2])]  # per-sample indices
    assert [t.item() for t in picked.tensors] == [5, 9]
    assert np.asarray(m.slice[..., 1:-1].tensors[1]).tolist() == [[8, 9], [12, 13]]


def test_arithmetic_type_promotion():
    u8 = ndd.tensor(np.uint8([1, 2]))
    assert (u8 + 1).dtype == ndd.int32  # a Python int counts as INT32 (DALI 2.4)
    assert (u8 / 2).dtype == ndd.float32 and (u8 // 2).dtype == ndd.int32
    assert (ndd.tensor(np.int8([1])) + ndd.tensor(np.uint8([1]))).dtype == ndd.int16
    b = ndd.batch([[1, 2, 3], [4, 5]]) + ndd.batch([[5], [42]])
    assert [np.asarray(t).tolist() for t in b.tensors] == [[6, 7, 8], [46, 47]]
    assert np.asarray(3 - ndd.tensor([1, 2])).tolist() == [2, 1]
    assert ndd.math.sqrt(ndd.tensor([4, 9])).dtype == ndd.float32


def test_ops_on_tensor_and_batch():
    img = np.arange(12, dtype=np.uint8).reshape(2, 2, 3)
    x = ndd.tensor(img, layout="HWC")
    f = ndd.flip(x, horizontal=1)
    assert isinstance(f, ndd.Tensor) and f.layout == "HWC"
    assert np.array_equal(np.asarray(f), img[:, ::-1])
    b = ndd.batch([img, img], layout="HWC")
    per_sample = ndd.flip(b, horizontal=ndd.batch(np.int32([0, 1])))
    assert isinstance(per_sample, ndd.Batch)
    assert np.array_equal(np.asarray(per_sample.tensors[0]), img)
    assert np.array_equal(np.asarray(per_sample.tensors[1]), img[:, ::-1])
    cmn = ndd.crop_mirror_normalize(b, mean=[1, 2, 3], std=[2, 2, 2], output_layout="CHW")
    assert cmn.shape == [(3, 2, 2)] * 2 and cmn.dtype == ndd.float32 and cmn.layout == "CHW"
    assert ndd.resize(x, size=[4, 4]).shape == (4, 4, 3)


def test_random_reproducible():
    ndd.random.set_seed(5)
    a = np.asarray(ndd.random.uniform(range=[0, 1], shape=[4]))
    ndd.random.set_seed(5)
    assert np.array_equal(a, np.asarray(ndd.random.uniform(range=[0, 1], shape=[4])))
    rng = ndd.random.RNG(seed=9)
    twin = rng.clone()
    first = ndd.random.normal(shape=[4], batch_size=2, rng=rng)
    assert isinstance(first, ndd.Batch)
    again = ndd.random.normal(shape=[4], batch_size=2, rng=twin)
    assert all(np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(first.tensors, again.tensors))
    nxt = ndd.random.normal(shape=[4], batch_size=2, rng=rng)
    assert not np.array_equal(np.asarray(first.tensors[0]), np.asarray(nxt.tensors[0]))
    with pytest.raises(ValueError):
        ndd.random.uniform(rng=lambda: 3)


@pytest.fixture
def tiny_dataset(tmp_path):
    for cls, names in (("a", ["a0", "a1", "a2"]), ("b", ["bb0", "bb1"])):
        (tmp_path / cls).mkdir()
        for i, n in enumerate(names):
            (tmp_path / cls / f"{i}.jpg").write_bytes(n.encode())
    return str(tmp_path)


def _names(b):
    return [bytes(np.asarray(t)).decode() for t in b.tensors]


def test_reader_epochs_as_dali(tiny_dataset):
    # DALI 2.4: batches are full; the last one of an epoch runs into the next epoch's samples
    r = ndd.readers.File(file_root=tiny_dataset, enable_checkpointing=True)
    epochs = [[(_names(f), [int(np.asarray(t)[0]) for t in lbl.tensors]) for f, lbl in r.next_epoch(batch_size=2)]
              for _ in range(2)]
    assert epochs[0] == [(["a0", "a1"], [0, 0]), (["a2", "bb0"], [0, 1]), (["bb1", "a0"], [1, 0])]
    assert [n for n, _ in epochs[1]] == [["a1", "a2"], ["bb0", "bb1"], ["a0", "a1"]]
    samples = list(ndd.readers.File(file_root=tiny_dataset).next_epoch())
    assert len(samples) == 5 and all(isinstance(f, ndd.Tensor) for f, _ in samples)
    sharded = ndd.readers.File(file_root=tiny_dataset, shard_id=1, num_shards=2)
    got = [[bytes(np.asarray(f)).decode() for f, _ in sharded.next_epoch()] for _ in range(2)]
    assert got == [["a2", "bb0", "bb1"], ["a0", "a1"]]
    with pytest.raises(ValueError):  # DALI 2.4: one batch size per reader
        next(r.next_epoch(batch_size=3))
    padded = ndd.readers.File(file_root=tiny_dataset, shard_id=1, num_shards=2, stick_to_shard=True,
                              pad_last_batch=True)
    assert [[bytes(np.asarray(f)).decode() for f, _ in padded.next_epoch()] for _ in range(2)] == [
        ["a2", "bb0", "bb1"]] * 2
    assert '"consumed"' in str(r.get_state())  # a reader's state: tests/test_conf_hid24_ndd_state.py


def test_contexts_and_refusals():
    with ndd.EvalMode.deferred:
        assert ndd.EvalMode.current() is ndd.EvalMode.deferred
    assert len(list(ndd.EvalMode)) == 4
    with ndd.EvalContext(num_threads=3) as ctx:
        assert ndd.EvalContext.current() is ctx and ctx.num_threads == 3
    if not torch.cuda.is_available():
        assert ndd.EvalContext.current().device_id is None and ndd.ThreadPool(2).device_id is None
    if not torch.cuda.is_available():
        with pytest.raises(RuntimeError, match="CUDA"):
            ndd.Stream()


def test_batch_torch_shares_dense_memory():
    b = ndd.batch(np.ones((2, 2)))
    b.torch()[0, 0] = 42  # DALI 2.4: a batch made from one array is one dense tensor
    assert np.asarray(ndd.as_tensor(b)).tolist() == [[42, 1], [1, 1]]
    assert b.torch(copy=True).data_ptr() != b.torch().data_ptr()
    with pytest.raises(ValueError, match="dense"):  # DALI 2.4: ValueError (torch_dali said RuntimeError)
        ndd.batch([[1, 2, 3], [4, 5]]).torch()


def test_thread_count_follows_the_global_setting():
    ctx = ndd.EvalContext()
    try:
        ndd.set_num_threads(5)
        assert ctx.num_threads == 5 and ndd.get_num_threads() == 5
    finally:
        ndd.set_num_threads(None)
    assert ndd.EvalContext(num_threads=3).num_threads == 3


def test_streams_without_cuda():
    # DALI 2.4's API: stream(stream=None) is None, Stream(stream=None) a ValueError; with no CUDA
    # device a new stream cannot be made, and no stream is set anywhere
    assert ndd.stream(stream=None) is None
    with pytest.raises(ValueError):
        ndd.Stream(stream=None)
    ndd.set_default_stream(None)
    ndd.set_current_stream(None)
    with ndd.EvalContext(cuda_stream=None) as ctx:
        assert ctx.op_stream() is None
    if not torch.cuda.is_available():
        assert ndd.get_default_stream() is None and ndd.get_current_stream() is None
        with pytest.raises(RuntimeError, match="CUDA"):
            ndd.stream()
        with pytest.raises(RuntimeError, match="CUDA"):
            ndd.EvalContext(cuda_stream=12345)
    assert (ndd.tensor([1, 2]) + 1).torch().tolist() == [2, 3]


def test_missing_parts_say_so():
    with pytest.raises(AttributeError):
        ndd.no_such_part


def test_layouts_errors_and_per_frame_arguments():
    # DALI 2.4: data without a layout get the layout a pipeline would give (resize: HWC, blur: none)
    plain = np.zeros((8, 8, 3), dtype=np.uint8)
    assert ndd.resize(plain, size=[4, 4]).layout == "HWC"
    assert ndd.gaussian_blur(plain, sigma=1.0).layout is None
    with pytest.raises(TypeError, match="bogus"):
        ndd.flip(plain, bogus=1)
    with pytest.raises(ValueError):
        ndd.as_tensor(ndd.batch([[1, 2], [3]]))
    # an argument whose layout starts with "F" is per frame (as ndd.per_frame marks it)
    seq = ndd.as_batch([ndd.zeros(shape=(4, 3, 10, 12), dtype=ndd.uint8)] * 2, layout="FCHW")
    sigma = ndd.tensor([[1, 1], [2, 2], [3, 3], [4, 4]], dtype=ndd.float32, layout="F*")
    out = ndd.gaussian_blur(seq, sigma=ndd.per_frame(ndd.as_batch([sigma] * 2)))
    assert out.shape == [(4, 3, 10, 12)] * 2 and out.layout == "FCHW"


def test_arithmetic_checks_the_operands_layouts():
    """DALI 2.4: `Tensor(HW) + Tensor(AB)` and `Batch(HW) * Batch(AB)` raise (RuntimeError), as
    the pipeline's arithmetic; a suffix (`W`) or no layout goes with HW."""
    import torch_dali.experimental.dynamic as ndd_
    a = ndd_.tensor(np.ones((2, 2), np.float32), layout="HW")
    with pytest.raises(RuntimeError, match="suffix"):
        (a + ndd_.tensor(np.ones((2, 2), np.float32), layout="AB")).evaluate()
    assert (a + ndd_.tensor(np.ones((2,), np.float32), layout="W")).layout == "HW"
    assert (a + ndd_.tensor(np.ones((2, 2), np.float32))).layout == "HW"
    ba = ndd_.as_batch([np.ones((2, 2), np.float32)] * 2, layout="HW")
    with pytest.raises(RuntimeError, match="suffix"):
        (ba * ndd_.as_batch([np.ones((2, 2), np.float32)] * 2, layout="AB")).evaluate()


def test_padding_a_batch_into_one_tensor():
    # DALI 2.4's values: zeros up to each dimension's largest extent; the layout gains "N"
    ragged = ndd.batch([np.uint8([1, 2]), np.uint8([1, 2, 3])])
    assert np.asarray(ndd.as_tensor(ragged, pad=True)).tolist() == [[1, 2, 0], [1, 2, 3]]
    assert np.asarray(ndd.tensor(ragged, pad=True)).tolist() == [[1, 2, 0], [1, 2, 3]]
    assert ragged.torch(pad=True).tolist() == [[1, 2, 0], [1, 2, 3]]
    with pytest.raises(ValueError):
        ndd.as_tensor(ragged)
    two_d = ndd.batch([np.int32([[1, 2], [3, 4]]), np.int32([[5], [6], [7]])])
    padded = ndd.as_tensor(two_d, pad=True)
    assert np.asarray(padded).tolist() == [[[1, 2], [3, 4], [0, 0]], [[5, 0], [6, 0], [7, 0]]]
    assert padded.dtype == ndd.int32
    hw = ndd.batch([np.float32([[1], [2]]), np.float32([[3]])], layout="HW")
    out = ndd.as_tensor(hw, pad=True)
    assert np.asarray(out).tolist() == [[[1.0], [2.0]], [[3.0], [0.0]]] and out.layout == "NHW"
    dense = ndd.batch([np.float32([[1], [2]]), np.float32([[3], [4]])], layout="HW")
    assert ndd.as_tensor(dense).layout == "NHW" and ndd.tensor(dense).layout == "NHW"
    assert dense.torch(pad=True).tolist() == [[[1.0], [2.0]], [[3.0], [4.0]]]
    assert np.asarray(ndd.as_tensor(np.int32([1, 2]), pad=True)).tolist() == [1, 2]


def test_imread_reads_paths_as_io_file_read(tmp_path):
    # DALI 2.4 (measured, CPU): imread is io.file.read then decoders.image, so a path may be given
    # as a Tensor of its bytes (uint8 or int8) or a Batch of them; a missing file is a RuntimeError
    from PIL import Image

    img = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
    path = tmp_path / "a.png"
    Image.fromarray(img).save(path)
    as_bytes = [ndd.tensor(np.frombuffer(str(path).encode(), dt).copy()) for dt in (np.uint8, np.int8)]
    for p in [str(path), path] + as_bytes:
        np.testing.assert_array_equal(np.asarray(ndd.imread(p)), img)
    out = ndd.imread(ndd.batch([as_bytes[1], as_bytes[1]]))
    assert isinstance(out, ndd.Batch) and out.batch_size == 2
    with pytest.raises(RuntimeError):
        ndd.imread(str(tmp_path / "missing.png"))
    with pytest.raises(ValueError):
        ndd.imread(str(path), device="mixed")


def test_reader_arguments_given_as_tensors(tmp_path):
    # DALI 2.4 takes ndd Tensors for a reader's arguments (a 0-D one as a scalar); they were refused
    # here. The windows below are what DALI 2.4 read from these files (measured).
    arrs = [(np.arange(40, dtype=np.int16) * (i + 1)).reshape(20, 2) for i in range(2)]
    files = []
    for i, a in enumerate(arrs):
        np.save(tmp_path / f"a{i}.npy", a)
        files.append(str(tmp_path / f"a{i}.npy"))
    cases = [(dict(roi_start=ndd.tensor(3), roi_shape=[10], roi_axes=[0]), np.s_[3:13]),
             (dict(rel_roi_start=[0.25], rel_roi_end=ndd.tensor([0.75]), roi_axes=[0]), np.s_[5:15]),
             (dict(roi_start=ndd.tensor([3, 1]), roi_end=ndd.tensor(np.int64([5, 2]))), np.s_[3:5, 1:2])]
    for kw, window in cases:
        (b,) = next(iter(ndd.readers.Numpy(files=files, **kw).next_epoch(batch_size=2)))
        for t, a in zip(b.tensors, arrs):
            assert np.array_equal(np.asarray(t), a[window]), kw
