"""YAML is data: random documents and hostile constructs give our own clear errors, nothing else."""
from __future__ import annotations

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_dali import fn, pipeline_def, types
from torch_dali.errors import TorchDaliError
from torch_dali.pipeline import Pipeline


@pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
def _pipe():
    images, labels = fn._test_images(name="Source")
    return fn.cast(images, dtype=types.FLOAT), labels


VALID = yaml.safe_load(_pipe().serialize())

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**40, 2**40), st.floats(allow_nan=True),
                    st.text(max_size=12))
values = st.recursive(scalars, lambda c: st.one_of(st.lists(c, max_size=4),
                                                   st.dictionaries(st.text(max_size=8), c, max_size=4)),
                      max_leaves=12)


def _load(text: str) -> None:
    try:
        Pipeline.deserialize(serialized_pipeline=text).build()
    except TorchDaliError:
        pass  # our own clear error: fine


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_random_text_never_crashes(text):
    _load(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["pipeline", "ops", "outputs", "torch_dali_pipeline"]), values)
def test_mutated_top_level_keys(key, value):
    doc = dict(VALID)
    doc[key] = value
    _load(yaml.safe_dump(doc))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 1), st.sampled_from(["name", "op", "device", "seed", "args", "inputs", "arg_inputs"]), values)
def test_mutated_op_fields(index, field, value):
    doc = yaml.safe_load(yaml.safe_dump(VALID))
    doc["ops"][index][field] = value
    _load(yaml.safe_dump(doc))


def test_python_tags_and_aliases_are_refused():
    from torch_dali.errors import SerializationError
    with pytest.raises(SerializationError, match="tag !!python/object/apply:os.system is not allowed"):
        Pipeline.deserialize(serialized_pipeline="!!python/object/apply:os.system ['true']")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n" \
           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    with pytest.raises(SerializationError, match="line 3: YAML aliases"):
        Pipeline.deserialize(serialized_pipeline="torch_dali_pipeline: 1\n" + bomb)
    with pytest.raises(SerializationError, match="not UTF-8"):
        Pipeline.deserialize(serialized_pipeline=b"\xff\xfe garbage")
