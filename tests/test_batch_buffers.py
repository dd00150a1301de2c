"""The executor's dense CPU batches reuse memory (io/host_memory.BatchBuffers) only once nothing
refers to it: a batch the consumer still holds, in any form, keeps its values."""
from __future__ import annotations

import gc

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def, types
from torch_dali.io.host_memory import BatchBuffers

MB = 1 << 20


def test_a_dropped_batch_gives_its_memory_to_the_next() -> None:
    pool = BatchBuffers()
    a = pool.empty((4, 3, 256, 256), torch.float32)
    ptr = a.data_ptr()
    del a
    b = pool.empty((4, 3, 256, 256), torch.float32)
    assert b.data_ptr() == ptr
    assert b.shape == (4, 3, 256, 256) and b.dtype == torch.float32 and b.is_contiguous()


@pytest.mark.parametrize("keep", ["tensor", "sample", "slice", "numpy", "reshaped", "storage"])
def test_memory_in_use_is_not_handed_out(keep: str) -> None:
    pool = BatchBuffers()
    a = pool.empty((4, 1024, 1024), torch.uint8)
    a.fill_(7)
    held = {"tensor": lambda t: t, "sample": lambda t: t[2], "slice": lambda t: t[1:3, 5:9],
            "numpy": lambda t: t.numpy(), "reshaped": lambda t: t.reshape(-1).view(torch.int32),
            "storage": lambda t: t.untyped_storage()}[keep](a)
    del a
    gc.collect()
    b = pool.empty((4, 1024, 1024), torch.uint8)
    b.fill_(9)
    if keep == "storage":
        assert bytes(held[:4]) == b"\x07" * 4
    else:
        assert (torch.as_tensor(held).view(torch.uint8) == 7).all()
    del held, b
    c = pool.empty((4, 1024, 1024), torch.uint8)  # both free again: one of them is reused
    assert len(pool._blocks) == 2 and c.data_ptr() in {blk.ctypes.data for blk in pool._blocks}


def test_a_consumer_holding_every_batch_does_not_grow_the_pool() -> None:
    pool = BatchBuffers(keep=4)
    held = [pool.empty((2 * MB,), torch.uint8) for _ in range(20)]
    for i, t in enumerate(held):
        t.fill_(i)
    assert pool.held_bytes() <= 4 * 4 * MB
    assert [int(t[0]) for t in held] == list(range(20))  # every batch its own memory


def test_sizes_close_to_a_block_share_it_and_small_ones_are_plain() -> None:
    pool = BatchBuffers()
    a = pool.empty((3 * MB,), torch.uint8)
    ptr = a.data_ptr()
    del a
    b = pool.empty((3 * MB - 4096,), torch.uint8)
    assert b.data_ptr() == ptr
    small = pool.empty((100,), torch.float32)
    assert small.shape == (100,) and pool.held_bytes() == 4 * MB  # one block of whole 2 MiB pages


def test_blocks_are_not_shared_across_threads_in_use() -> None:
    import threading
    pool = BatchBuffers()
    out: list[torch.Tensor] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(20):
            t = pool.empty((MB,), torch.uint8)
            with lock:
                out.append(t)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({t.data_ptr() for t in out}) == len(out)


def _cmn_pipe(imgs: list[np.ndarray]):
    @pipeline_def(batch_size=len(imgs), num_threads=2, device_id=None, seed=3, prefetch_queue_depth=1)
    def pipe():
        x = fn.external_source(source=lambda: imgs, layout="HWC")
        return fn.crop_mirror_normalize(x, crop=(192, 192), mirror=fn.random.coin_flip(), dtype=types.FLOAT,
                                        mean=[10.0, 20.0, 30.0], std=[2.0, 3.0, 4.0])
    p = pipe()
    p.build()
    return p


def test_a_held_pipeline_output_keeps_its_values_while_later_batches_are_made() -> None:
    rng = np.random.default_rng(0)
    imgs = [rng.integers(0, 255, (200 + 7 * i, 210 + 3 * i, 3), dtype=np.uint8) for i in range(8)]
    p = _cmn_pipe(imgs)
    first = p.run()[0]
    dense = first.as_tensor().clone()
    sample = first.at(5)  # numpy, as DALI's TensorListCPU.at
    sample_copy = np.array(sample)
    seen = []
    for _ in range(6):
        out = p.run()[0]
        seen.append(out.as_tensor().data_ptr())
        del out
    assert torch.equal(first.as_tensor(), dense)
    np.testing.assert_array_equal(sample, sample_copy)
    assert len(set(seen)) < len(seen)  # dropped batches' memory is reused
    assert first.as_tensor().data_ptr() not in seen


def test_batches_whose_sample_shapes_change_from_batch_to_batch() -> None:
    """The executor makes a dense batch from the last batch's sample shape before the samples
    run: a batch of other shapes (uniform or not) still comes out right, dense where it can."""
    rng = np.random.default_rng(1)
    plans = [[(64, 64)] * 4, [(64, 64)] * 4, [(32, 48)] * 4, [(64, 64), (20, 20), (64, 64), (64, 64)],
             [(64, 64)] * 4, [(64, 64)] * 4, [(64, 64)] * 2 + [(64, 65)] * 2, [(50, 50)] * 4]
    batches = [[rng.integers(0, 255, (*hw, 3), dtype=np.uint8) for hw in plan] for plan in plans]
    feed = iter(batches)

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, prefetch_queue_depth=1)
    def pipe():
        x = fn.external_source(source=lambda: next(feed), layout="HWC")
        return fn.crop_mirror_normalize(x, dtype=types.FLOAT, mean=[10.0, 20.0, 30.0], std=[2.0, 3.0, 4.0],
                                        output_layout="HWC")
    p = pipe()
    p.build()
    for k, imgs in enumerate(batches):
        out = p.run()[0]
        for i, img in enumerate(imgs):
            want = (img.astype(np.float32) - np.float32([10, 20, 30])) * (1 / np.float32([2, 3, 4]))
            np.testing.assert_allclose(np.asarray(out.at(i)), want, rtol=1e-6, err_msg=f"batch {k} sample {i}")
        assert out.is_dense_tensor() == (len({im.shape for im in imgs}) == 1), k
