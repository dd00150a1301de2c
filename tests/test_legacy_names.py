"""DALI's deprecated op names (`fn.file_reader`, `fn.image_decoder`, `fn.uniform`,
`ops.experimental.decoders.Image`, ...) run the current op and warn that they are deprecated;
every such name DALI 2.4 has for an op we have exists (DALI's schema snapshot)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import torch

from torch_dali import fn, ops, pipeline_def
from torch_dali.ops import lookup
from torch_dali.ops.legacy import CLASSES, FN
from torch_dali.sample_data import make_image_folder

SNAPSHOT = Path(__file__).resolve().parents[1] / "conformance" / "dali_schemas.json"


def _resolve(root, path):
    for part in path.split("."):
        root = getattr(root, part, None)
        if root is None:
            return None
    return root


def test_every_public_legacy_name_of_our_ops_exists():
    snap = json.loads(SNAPSHOT.read_text())
    missing = []
    for key, entry in snap["ops"].items():
        try:
            lookup(key)
        except KeyError:
            continue  # an op we do not have
        for name in entry["legacy"]:
            if name.startswith("hidden.") or ".hidden." in name:
                continue  # DALI's internals
            space = ops if name.rsplit(".", 1)[-1][:1].isupper() else fn
            if _resolve(space, name) is None:
                missing.append(name)
    assert missing == []


def test_old_names_run_the_current_op_and_warn_at_each_call(tmp_path):
    files = [str(p) for p, _ in make_image_folder(tmp_path, images_per_class=1, seed=2, mean_hw=(24, 32))][:4]

    def run(reader, decoder, draw):
        @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
        def p():
            jpegs, labels = reader(files=files, labels=[0, 1, 2, 3])
            return decoder(jpegs), labels, draw(range=(0, 1))
        pipe = p()
        pipe.build()
        return [t.clone() for o in pipe.run() for t in o]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = run(fn.file_reader, fn.image_decoder, fn.uniform)
        run(fn.file_reader, fn.image_decoder, fn.uniform)
    new = run(fn.readers.file, fn.decoders.image, fn.random.uniform)
    assert all(torch.equal(a, b) for a, b in zip(old, new))
    dep = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert sorted(dep) == sorted(2 * ["fn.file_reader is deprecated in DALI; use fn.readers.file",  # DALI: each call
                                      "fn.image_decoder is deprecated in DALI; use fn.decoders.image",
                                      "fn.uniform is deprecated in DALI; use fn.random.uniform"])


@pytest.mark.parametrize("old,new", sorted(CLASSES.items()))
def test_namespaced_old_class_names_are_the_current_ops(old, new):
    cls = _resolve(ops, old)
    assert cls is not None and cls.__name__ == old.rsplit(".", 1)[-1]
    assert lookup(new).name == new


@pytest.mark.parametrize("old,new", sorted(FN.items()))
def test_old_functional_names_point_at_the_current_ops(old, new):
    f = _resolve(fn, old)
    assert f is not None and f.__wrapped__.__qualname__ == _resolve(fn, new).__qualname__ == new


# (call, DeprecationWarnings it gives) as measured with DALI 2.4: a warning at each call made through a
# deprecated name, when the op is called (not when its class is made); none through current names,
# nor from DataNode.shape() (which adds a `shapes` node, an op DALI deprecates under that name)
def _calls(x):
    return [
        (lambda: [fn.mxnet_reader(path="a", index_path="b") for _ in range(2)], 2),
        (lambda: ops.MXNetReader(path="a", index_path="b"), 0),
        (lambda: ops.MXNetReader(path="a", index_path="b")(), 1),
        (lambda: ops.readers.MXNet(path="a", index_path="b")(), 0),
        (lambda: ops.PythonFunction(function=lambda a: a)(x), 0),
        (lambda: fn.experimental.tensor_resize(x, sizes=[1]), 1),
        (lambda: ops.experimental.TensorResize(sizes=[1])(x), 1),
        (lambda: fn.tensor_resize(x, sizes=[1]), 0),
        (lambda: x.shape(), 0),
        (lambda: fn.shapes(x), 1),
        (lambda: ops.Shapes()(x), 1),
        (lambda: fn.readers.sequence(file_root="/tmp", sequence_length=2), 1),
        (lambda: fn.sequence_reader(file_root="/tmp", sequence_length=2), 1),
        (lambda: ops.SequenceReader(file_root="/tmp", sequence_length=2)(), 1),
        (lambda: ops.Uniform()(), 1),
        (lambda: ops.CoinFlip()(), 1),
        (lambda: ops.NormalDistribution()(), 1),
        (lambda: ops.experimental.decoders.Image()(x), 1),
        (lambda: fn.experimental.equalize(x), 1),
        (lambda: ops.FastResizeCropMirror(crop=(1, 1), resize_shorter=2)(x), 1),
        (lambda: fn.fast_resize_crop_mirror(x, crop=(1, 1), resize_shorter=2), 1),
        (lambda: ops.PeekImageShape()(x), 0),
    ]


def test_deprecated_names_warn_at_each_call_as_dali_does():
    from torch_dali import Pipeline
    got, want = [], []
    with Pipeline(batch_size=1, num_threads=1, device_id=None):
        x = fn.external_source(name="x", layout="HWC")
        for k, (call, n) in enumerate(_calls(x)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("ignore")  # DALI shows its warning whatever the filters say
                call()
            got.append((k, sum(issubclass(w.category, DeprecationWarning) for w in caught)))
            want.append((k, n))
            assert all(w.filename == __file__ for w in caught)  # pointed at the caller's line
    assert got == want
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ops.experimental.TensorResize(sizes=[1])  # made, not called: no warning yet
    assert caught == []


def test_optical_flow_says_why_it_is_missing():
    """DALI's optical_flow needs NVIDIA's optical-flow hardware: the name says so, and stays absent."""
    from torch_dali import fn, ops
    for space, name in ((fn, "optical_flow"), (ops, "OpticalFlow")):
        assert not hasattr(space, name)
        with pytest.raises(AttributeError, match="not provided by torch_dali"):
            getattr(space, name)
    with pytest.raises(AttributeError, match="has no attribute 'no_such_op'"):
        fn.no_such_op  # noqa: B018


def test_an_ops_class_name_is_worked_out_once() -> None:
    # ops name themselves in per-sample checks (bb_flip: 16 a batch, ~2 us each when rebuilt)
    from torch_dali.ops import _registry as R
    s = R._SCHEMAS["crop_mirror_normalize"]
    assert s.class_name == s.display_name() == "CropMirrorNormalize"
    assert s.class_name is s.class_name
