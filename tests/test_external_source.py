"""fn.external_source (iterables, generators, callables, feed_input, cycle modes) and from_dataset."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from PIL import Image

import torch_dali
from torch_dali import fn, pipeline_def, types
from torch_dali.errors import ArgumentTypeError, PipelineError, SerializationError
from torch_dali.ops.external_source import BatchInfo, SampleInfo
from torch_dali.sample_data import encode_jpeg


def es_pipe(source=None, batch_size=4, exec_async=True, **kw):
    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=None, seed=3, exec_async=exec_async)
    def p():
        return fn.external_source(source=source, name="es", **kw)
    return p()


def values(pipe, n):
    out = []
    for _ in range(n):
        try:
            outs = pipe.run()
        except StopIteration:
            out.append("STOP")
            continue
        out.append([o.as_tensor().flatten().tolist() for o in outs] if len(outs) > 1
                   else outs[0].as_tensor().flatten().tolist())
    return out


BATCHES = [np.full((2, 1), i, np.int32) for i in range(3)]


# -- sources -------------------------------------------------------------------------------------

@pytest.mark.parametrize("exec_async", [True, False])
def test_list_of_batches_sets_batch_size(exec_async):
    data = [[np.array([1, 2], np.int64)], [np.array([3, 4]), np.array([5, 6]), np.array([7, 8])]]
    pipe = es_pipe(data, exec_async=exec_async)
    (a,) = pipe.run()
    assert len(a) == 1 and a.at(0).tolist() == [1, 2]
    (b,) = pipe.run()
    assert len(b) == 3 and b.as_tensor().tolist() == [[3, 4], [5, 6], [7, 8]]
    with pytest.raises(StopIteration):
        pipe.run()


def test_generator_function_and_object():
    def gen():
        for i in range(2):
            yield torch.full((3, 2), i, dtype=torch.float32)
    assert values(es_pipe(gen), 3) == [[0.0] * 6, [1.0] * 6, "STOP"]
    assert values(es_pipe(gen()), 2) == [[0.0] * 6, [1.0] * 6]
    with pytest.raises(ArgumentTypeError, match="generator function"):
        es_pipe(gen(), cycle="raise").build()


def test_callables_get_iteration_or_batch_info():
    assert values(es_pipe(lambda: [np.array([7])] * 2), 2) == [[7, 7], [7, 7]]
    assert values(es_pipe(lambda i: [np.array([i])] * 2), 2) == [[0, 0], [1, 1]]
    seen = []

    def info(bi):
        seen.append(bi)
        return [np.array([bi.iteration, bi.epoch_idx])]
    es_pipe(info, batch_info=True, exec_async=False).run()
    assert seen == [BatchInfo(0, 0)]


@pytest.mark.parametrize("parallel", [False, True])
def test_per_sample_mode_sample_info_and_epochs(parallel):
    def sample(si: SampleInfo):
        if si.idx_in_epoch >= 6:
            raise StopIteration
        return np.array([si.idx_in_epoch, si.idx_in_batch, si.epoch_idx], np.int32)
    pipe = es_pipe(sample, batch=False, parallel=parallel)
    assert values(pipe, 2) == [[0, 0, 0, 1, 1, 0, 2, 2, 0, 3, 3, 0], "STOP"]  # partial batch dropped
    pipe.reset()
    assert values(pipe, 1) == [[0, 0, 1, 1, 1, 1, 2, 2, 1, 3, 3, 1]]
    it = es_pipe([np.array([i]) for i in range(6)], batch=False)
    assert values(it, 2) == [[0, 1, 2, 3], "STOP"]


def test_per_output_layout_none_leaves_one_unset():
    # DALI's test_debayer feeds layout=["FHW", None]; None there is "no layout", as for one output
    pipe = es_pipe(lambda: ([np.zeros((2, 4, 4), np.uint8)], [np.zeros(2, np.int32)]), num_outputs=2,
                   layout=["FHW", None], batch_size=1)
    v, b = pipe.run()
    assert v.layout() == "FHW" and b.layout() == ""
    with pytest.raises(ArgumentTypeError):
        es_pipe(lambda: ([np.zeros(2)], [np.zeros(2)]), num_outputs=2, layout=["X", 3], batch_size=1)


def test_multiple_outputs_batch_and_sample_mode():
    pipe = es_pipe(lambda: ([np.zeros(2, np.float32)] * 3, np.arange(3)), num_outputs=2,
                   layout=["X", ""])
    x, y = pipe.run()
    assert len(x) == 3 and x.layout() == "X" and y.as_tensor().tolist() == [0, 1, 2]
    pipe = es_pipe(lambda si: (np.array([si.idx_in_batch]), np.array([-si.idx_in_batch])),
                   batch=False, num_outputs=2)
    assert values(pipe, 1) == [[[0, 1, 2, 3], [0, -1, -2, -3]]]


# -- cycle and reset (DALI 2.4's behaviour) ---------------------------------------------------------

@pytest.mark.parametrize("cycle, first, after_reset", [
    (None, [[0, 0], [1, 1], [2, 2], "STOP"], ["STOP", "STOP"]),
    (False, [[0, 0], [1, 1], [2, 2], "STOP"], ["STOP", "STOP"]),
    ("raise", [[0, 0], [1, 1], [2, 2], "STOP"], [[0, 0], [1, 1]]),
    ("quiet", [[0, 0], [1, 1], [2, 2], [0, 0]], [[1, 1], [2, 2]]),
    (True, [[0, 0], [1, 1], [2, 2], [0, 0]], [[1, 1], [2, 2]]),
])
@pytest.mark.parametrize("exec_async", [True, False])
def test_cycle_modes_and_reset(cycle, first, after_reset, exec_async):
    pipe = es_pipe(BATCHES, cycle=cycle, exec_async=exec_async)
    assert values(pipe, 4) == first
    pipe.reset()
    assert values(pipe, 2) == after_reset


def test_generator_function_restarts_with_raise():
    def gen():
        yield [np.array([1])]
        yield [np.array([2])]
    pipe = es_pipe(gen, cycle="raise")
    assert values(pipe, 3) == [[1], [2], "STOP"]
    pipe.reset()
    assert values(pipe, 3) == [[1], [2], "STOP"]


# -- feed_input ----------------------------------------------------------------------------------

def test_feed_input_in_iter_setup_by_node():
    class Fed(torch_dali.Pipeline):
        def __init__(self):
            super().__init__(batch_size=4, num_threads=1, device_id=None)
            self.k = 0

        def define_graph(self):
            self.es = fn.external_source(name="in")
            return self.es

        def iter_setup(self):
            self.feed_input(self.es, np.full((2, 2), self.k, np.uint8), layout="A")
            self.k += 1

    pipe = Fed()
    pipe.build()  # as in DALI: define_graph runs at build, before iter_setup
    for k in range(3):
        (out,) = pipe.run()
        assert out.as_tensor().tolist() == [[k, k], [k, k]] and out.layout() == "A"



def test_feed_input_order_and_errors():
    pipe = es_pipe(None)
    pipe.feed_input("es", [torch.tensor([1, 2]), torch.tensor([3])])
    pipe.feed_input("es", [np.array([4])])  # fed ahead: used in order
    (a,) = pipe.run()
    assert [t.tolist() for t in a] == [[1, 2], [3]]
    (b,) = pipe.run()
    assert b.at(0).tolist() == [4]
    with pytest.raises(PipelineError, match="no data was fed"):
        pipe.run()
    with pytest.raises(ValueError, match="no external source named 'nope'"):
        pipe.feed_input("nope", [np.zeros(1)])
    with pytest.raises(ValueError, match="feed_input is only for"):
        es_pipe(BATCHES).feed_input("es", BATCHES[0])


# -- data types -----------------------------------------------------------------------------------

def test_numpy_torch_bytes_and_scalars_zero_copy():
    arr = np.arange(6, dtype=np.float32).reshape(3, 2)
    ten = torch.arange(4, dtype=torch.int16)
    # a batch's samples share an element type and rank (DALI refuses others): one batch per kind,
    # each with a second sample of another shape, so the batch stays a list of the samples given
    pairs = [(arr, arr[:1]), (ten, ten[:3]), (b"\x01\x02", b"\x01"), (5, 6), (2.5, 3.5), (np.int8(3), np.int8(4)),
             (arr[::-1], arr[:1])]

    def source(pair):
        return lambda: list(pair)  # no parameter: a batch source (one would get the iteration)
    got = [list(es_pipe(source(p), batch_size=2, exec_async=False).run()[0])[0] for p in pairs]
    assert got[0].data_ptr() == torch.from_numpy(arr).data_ptr()  # shared, not copied
    assert got[1].data_ptr() == ten.data_ptr()
    assert got[2].dtype == torch.uint8 and got[2].tolist() == [1, 2]
    assert (got[3].dtype, got[3].shape, got[3].item()) == (torch.int64, (), 5)
    assert got[4].dtype == torch.float64 and got[5].dtype == torch.int8
    assert got[6].tolist() == arr[::-1].tolist()
    dense = es_pipe(lambda: np.ones((5, 2, 2), np.uint8), batch_size=5, layout="HW").run()[0]
    assert len(dense) == 5 and dense.layout() == "HW" and dense.as_tensor().shape == (5, 2, 2)


def test_dtype_ndim_and_bad_sources_report_the_op():
    with pytest.raises(PipelineError, match=r"ExternalSource 'es'.*the data are float .*the `dtype` argument is int32"):
        es_pipe(lambda: [np.zeros(2, np.float32)], dtype=types.INT32).run()
    with pytest.raises(PipelineError, match="the data have 1 dimensions.*the `ndim` argument is 2"):
        es_pipe(lambda: [np.zeros(2, np.float32)], ndim=2).run()
    with pytest.raises(PipelineError, match="ExternalSource 'es'.*got int"):
        es_pipe(lambda: 7).run()
    with pytest.raises(PipelineError, match="num_outputs=2.*tuple of 2.*got tuple of 1"):
        es_pipe(lambda: ([np.zeros(1)],), num_outputs=2).run()
    with pytest.raises(PipelineError, match="cannot make a tensor out of dict"):
        es_pipe(lambda: [{"a": 1}]).run()
    with pytest.raises(ValueError, match="`source` must be an iterable"):  # at definition
        es_pipe(5).build()
    with pytest.raises(ValueError, match="`cycle`"):
        es_pipe(lambda: [np.zeros(1)], cycle="raise").build()
    with pytest.raises(ValueError, match="cycle"):
        es_pipe(BATCHES, cycle="sometimes").build()


def test_legacy_class_and_serialize_refusal():
    from torch_dali import ops

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return ops.ExternalSource(source=BATCHES, cycle="quiet")()
    pipe = p()
    assert pipe.run()[0].as_tensor().flatten().tolist() == [0, 0]
    with pytest.raises(SerializationError, match="ExternalSource .* argument `source`"):
        pipe.serialize()


# -- from_dataset ---------------------------------------------------------------------------------

class JpegDataset(torch.utils.data.Dataset):
    """Ten small JPEGs whose flat colour encodes the index; label = index."""

    def __init__(self, n=10):
        self.items = [encode_jpeg(Image.new("RGB", (8 + i % 3, 6), (20 * i, 0, 0))) for i in range(n)]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i], i


@pipeline_def
def decode_pipe(ds, shuffle=True):
    jpegs, labels = torch_dali.from_dataset(ds, random_shuffle=shuffle, name="Reader")
    images = fn.decoders.image(jpegs, device="cpu")
    return fn.resize(images, resize_x=4, resize_y=4), labels


def loader(ds, rank=0, world_size=1, **kw):
    return torch_dali.DataLoader(decode_pipe, batch_size=3, ds=ds, device="cpu", rank=rank,
                                 world_size=world_size, seed=7, num_threads=2, **kw)


def test_from_dataset_decodes_and_labels_are_int64():
    ds = JpegDataset()
    pipe = decode_pipe(ds, shuffle=False, batch_size=4, num_threads=2, device_id=None, seed=1)
    images, labels = pipe.run()
    assert images.as_tensor().shape == (4, 4, 4, 3)
    assert labels.as_tensor().tolist() == [[0], [1], [2], [3]] and labels.as_tensor().dtype == torch.int64
    red = images.as_tensor()[:, 2, 2, 0].tolist()
    assert all(abs(r - 20 * i) < 8 for i, r in enumerate(red))
    assert pipe.epoch_size("Reader") == 10
    with pytest.raises(SerializationError, match="argument `dataset`.*JpegDataset"):
        pipe.serialize()


def test_from_dataset_ranks_cover_and_shuffle_per_epoch():
    ds = JpegDataset()
    l0, l1 = loader(ds, 0, 2), loader(ds, 1, 2)
    assert len(l0.dataset) == len(l1.dataset) == 10 and len(l0) == 2  # the data set, as torch: all ranks
    epochs = []
    for _ in range(2):
        labels = [torch.cat([b[1] for b in lo]).tolist() for lo in (l0, l1)]
        assert all(len(x) == 5 for x in labels)
        assert sorted(labels[0] + labels[1]) == list(range(10))  # the two ranks cover the dataset
        epochs.append(labels[0])
    assert epochs[0] != epochs[1]  # a fresh permutation each epoch
    images, labels = next(iter(l1))
    assert images.shape == (3, 4, 4, 3) and labels.dtype == torch.int64


def test_from_dataset_state_dict_resume():
    ds = JpegDataset()
    ref = loader(ds)
    full = [b[1].tolist() for b in ref]
    lo = loader(ds)
    it = iter(lo)
    first = next(it)[1].tolist()
    state = lo.state_dict()
    resumed = loader(ds)
    resumed.load_state_dict(state)
    rest = [b[1].tolist() for b in resumed]
    assert [first] + rest == full
    for lo_ in (ref, lo, resumed):
        lo_.shutdown()


def test_from_dataset_fields_and_errors():
    class Arrays(torch.utils.data.Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 3:
                raise KeyError("broken item")
            return torch.full((2,), i), np.float32(i) * 0.5, float(i)

    @pipeline_def(batch_size=3, num_threads=1, device_id=None, seed=1)
    def p():
        return torch_dali.from_dataset(Arrays())
    pipe = p()
    a, b, c = pipe.run()
    assert a.as_tensor().tolist() == [[0, 0], [1, 1], [2, 2]]
    assert b.as_tensor().shape == (3, 1) and c.as_tensor().dtype == torch.float32
    with pytest.raises(PipelineError, match=r"Arrays\[3\] raised KeyError"):
        pipe.run()

    with pytest.raises(ArgumentTypeError, match="map-style"):
        torch_dali.from_dataset(iter([1, 2]))


def test_batch_larger_than_batch_size_is_refused():
    with pytest.raises(PipelineError, match="more than the pipeline's batch_size=4"):
        es_pipe(lambda: [np.zeros(2)] * 5).run()


def _gen_source():
    yield [np.zeros(2, np.float32)] * 2


def test_source_in_yaml_function_yes_iterable_no():
    text = es_pipe(_gen_source, batch_size=2).serialize()
    assert "source: test_external_source:_gen_source" in text
    with pytest.raises(SerializationError, match="cannot be written to YAML"):
        es_pipe([[np.zeros(2)]]).serialize()


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_repeat_last_data_is_fixed_when_the_iteration_is_scheduled(device):
    """As DALI (its test_repeat_last_queue): with prefetch_queue_depth=2 the first run() schedules
    two iterations and each later run() one more, and a repeat_last source's data is what was fed
    when its iteration was scheduled, so data fed now shows one run later."""
    @pipeline_def(batch_size=1, num_threads=1, device_id=None, prefetch_queue_depth=2)
    def pipe():
        return (fn.external_source(name="a", repeat_last=True, device=device),
                fn.external_source(name="b", repeat_last=True, device=device))

    p = pipe()
    p.build()

    def run():
        return [int(np.asarray(o.as_cpu().at(0) if hasattr(o, "as_cpu") else o.at(0))[0]) for o in p.run()]

    def feed(name, v):
        p.feed_input(name, [np.array([v], np.int32)])

    feed("a", 1)
    feed("b", 1)
    assert run() == [1, 1] and run() == [1, 1]
    feed("a", 11)
    assert run() == [1, 1]  # scheduled before the feed
    feed("b", 3)
    assert run() == [11, 1]
    feed("a", 3)
    assert run() == [11, 3]
    assert run() == [3, 3]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_a_short_fed_batch_sets_the_batch_size_of_input_less_ops(device):
    """As DALI: an iteration's batch size is the fed batch's, also for ops without inputs that run
    before a GPU external source would (random draws in the CPU stage)."""
    @pipeline_def(batch_size=4, num_threads=2, device_id=None)
    def pipe():
        return fn.external_source(name="es", device=device), fn.random.uniform(range=(0, 1))

    p = pipe()
    p.build()
    for n in (4, 3, 1, 4):
        p.feed_input("es", [np.array([i], np.int32) for i in range(n)])
        es, u = p.run()
        assert (len(es), len(u)) == (n, n)
