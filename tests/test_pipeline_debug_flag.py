"""pipeline_def(debug=True): DALI's debug mode flag is accepted (decorator or call); the body runs
op by op each iteration and gives what the ordinary pipeline gives (random ops included: each op is
seeded as the traced graph seeds it); `.get()` gives a batch in debug mode and is refused, with a
clear error, on a traced graph's nodes."""
import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import GraphError


def _source():
    return [np.arange(8, dtype=np.float32).reshape(4, 2) + i for i in range(3)]


@pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=5)
def body(data):
    x = fn.external_source(data, batch=True)
    return x * 2, fn.random.coin_flip()


def _outs(pipe, n=3):
    pipe.build()
    return [[torch.as_tensor(np.asarray(t)).clone() for t in o] for _ in range(n) for o in pipe.run()]


@pytest.mark.parametrize("where", ["call", "decorator"])
def test_debug_outputs_match_standard(where):
    if where == "call":
        dbg = body(_source(), debug=True)
    else:
        dbg = pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=5, debug=True)(
            body.__wrapped__)(_source())
    ref = _outs(body(_source()))
    got = _outs(dbg)
    assert len(got) == len(ref) == 6
    for a, b in zip(got, ref):
        for x, y in zip(a, b):
            assert torch.equal(x, y)


def test_function_naming_debug_receives_it():
    seen = []

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def named(debug=False):
        seen.append(debug)
        return fn.random.coin_flip()

    pipe = named(debug=True)
    pipe.build()
    pipe.run()  # a debug pipeline calls its definition at each run
    assert seen and all(d is True for d in seen)


def test_get_gives_data_in_debug_mode_only():
    got = []

    def body():
        x = fn.random.coin_flip()
        got.append(x.get())
        return x

    with pytest.raises(GraphError, match="get"):
        pipeline_def(batch_size=2, num_threads=1, device_id=None)(body)()
    pipe = pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3, debug=True)(body)()
    pipe.build()
    (out,) = pipe.run()
    assert len(got) == 1 and [int(np.asarray(t)) for t in got[0]] == [int(np.asarray(t)) for t in out]


def test_feed_input_feeds_a_debug_pipelines_external_source():
    """As DALI: feed_input before run() gives the named external source its batch in debug mode
    too (it raised an AttributeError: there is no executor to queue it in)."""
    import numpy as np
    import pytest
    from torch_dali import fn, pipeline_def
    from torch_dali.errors import ArgumentError

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        return fn.external_source(name="input") * 2, fn.external_source(name="b", layout="HW")
    pipe = p(debug=True)
    pipe.build()
    for i in range(2):
        pipe.feed_input("input", np.arange(6, dtype=np.float32).reshape(2, 3) + i)
        pipe.feed_input("b", [np.full((2, 2), i, np.int32)] * 2)
        a, b = pipe.run()
        assert np.asarray(a.at(1)).tolist() == [2.0 * (3 + i), 2.0 * (4 + i), 2.0 * (5 + i)]
        assert b.layout() == "HW" and np.asarray(b.at(0)).tolist() == [[i, i], [i, i]]
    with pytest.raises(ArgumentError, match="feed_input"):
        pipe.run()
