"""A pipeline made without a seed serializes without one (as DALI 2.4: two such pipelines give the
same serialization, core/test_pipeline.py's test_equal_serialized_pipelines_without_explicit_seed,
and each load draws anew, measured: two loads of one file gave different values); seeds given to
ops are kept, and a seeded pipeline's file still reruns bit for bit. A DataLoader over such a file
then gives each rank its own draws, as it does for the pipeline itself (before: every rank drew
alike, the file's op seeds counting as given); over a seeded file too, whose op seeds that the
pipeline derives load as derived (the same values)."""
from __future__ import annotations

import numpy as np
import pytest
import yaml

import torch_dali
from torch_dali import fn, pipeline_def
from torch_dali.pipeline import Pipeline
from torch_dali.sample_data import make_image_folder


def _random_pipe(**kw):
    with Pipeline(batch_size=4, device_id=None, num_threads=1, **kw) as p:
        p.set_outputs(fn.random.uniform() * fn.random.uniform() - 100, fn.random.uniform(seed=77))
    p.build()
    return p


def _first(p):
    return [np.asarray(o.as_tensor()).ravel().tolist() for o in p.run()]


def test_unseeded_pipelines_serialize_alike_and_loads_draw_anew():
    a, b = _random_pipe().serialize(), _random_pipe().serialize()
    assert a == b
    doc = yaml.safe_load(a)
    assert doc["pipeline"]["seed"] == -1
    assert [op.get("seed") for op in doc["ops"] if op["op"] == "random.uniform"] == [None, None, 77]
    loads = [Pipeline.deserialize(a) for _ in range(2)]
    for p in loads:
        p.build()
        assert not p.seed_given
    free, fixed = zip(*(_first(p) for p in loads))
    assert free[0] != free[1] and fixed[0] == fixed[1]


def test_seeded_pipeline_file_reruns_bit_for_bit():
    p = _random_pipe(seed=12)
    text = p.serialize()
    assert yaml.safe_load(text)["pipeline"]["seed"] == 12
    q = Pipeline.deserialize(text)
    q.build()
    assert _first(q) == _first(p)


def test_unseeded_file_into_an_unseeded_pipeline_stays_unseeded():
    q = Pipeline(batch_size=4, num_threads=1, device_id=None)
    q.deserialize_and_build(_random_pipe().serialize())
    assert not q.seed_given and q.seed != -1


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("imgs")
    make_image_folder(root, images_per_class=1, seed=1, mean_hw=(16, 16))
    return sorted(str(f) for f in root.rglob("*.*") if f.is_file())[:8]


def test_loader_over_an_unseeded_file_gives_ranks_their_own_draws(files, tmp_path):
    @pipeline_def(batch_size=4, num_threads=1, device_id=None)
    def p():
        _, labels = fn.readers.file(files=files, labels=list(range(len(files))), name="R")
        return fn.random.uniform(range=(0, 1)), fn.random.uniform(range=(0, 1), seed=77), labels
    pipe = p()
    pipe.build()
    path = tmp_path / "p.yaml"
    path.write_text(pipe.serialize())

    def first(rank):
        dl = torch_dali.DataLoader(str(path), batch_size=4, rank=rank, world_size=2, device="cpu", num_threads=1)
        free, fixed, _ = next(iter(dl))
        return free.view(-1).tolist(), fixed.view(-1).tolist()
    (free0, fixed0), (free1, fixed1) = first(0), first(1)
    assert free0 != free1  # was equal: every op seed in the file counted as given
    assert fixed0 == fixed1


def test_loader_over_a_seeded_file_draws_as_over_the_pipeline(files, tmp_path):
    """A seeded file's op seeds that are the ones the pipeline derives load as derived (same
    values), so the loader folds the rank in as it does for the pipeline itself; before, every
    rank drew alike over the file."""
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=5)
    def p():
        _, labels = fn.readers.file(files=files, labels=list(range(len(files))), name="R")
        return fn.random.uniform(range=(0, 1)), fn.random.uniform(range=(0, 1), seed=77), labels
    pipe = p()
    pipe.build()
    path = tmp_path / "p.yaml"
    path.write_text(pipe.serialize())

    def first(src, rank, world):
        dl = torch_dali.DataLoader(src, batch_size=4, rank=rank, world_size=world, device="cpu", num_threads=1)
        return [t.view(-1).tolist() for t in next(iter(dl))[:2]]
    for rank, world in ((0, 2), (1, 2), (0, 1)):
        assert first(str(path), rank, world) == first(p, rank, world)
    assert first(str(path), 0, 2)[0] != first(str(path), 1, 2)[0]
    loaded = Pipeline.deserialize(pipe.serialize())
    assert [n.seed_given for n in loaded.graph.nodes if n.op == "random.uniform"] == [False, True]
