"""YAML: readable, round-trips bit for bit, refuses what it cannot trust, points at the bad line."""
from __future__ import annotations

import numpy as np
import pytest
import torch
import yaml

from torch_dali import fn, types
from torch_dali.errors import SerializationError
from torch_dali.pipeline import Pipeline, pipeline_def


@pipeline_def(batch_size=3, num_threads=2, device_id=None, seed=21)
def _pipe():
    images, labels = fn._test_images(name="Source")
    return fn.cast(images, dtype=types.FLOAT), labels


def _double(x):
    return x * 2


def test_serialize_before_build_is_readable_yaml(tmp_path):
    pipe = _pipe()
    text = pipe.serialize()
    doc = yaml.safe_load(text)
    assert doc["torch_dali_pipeline"] == 1
    assert doc["pipeline"]["batch_size"] == 3 and doc["pipeline"]["seed"] == 21
    ops = {o["name"]: o for o in doc["ops"]}
    assert ops["Source"]["op"] == "_test_images"
    cast = [o for o in doc["ops"] if o["op"] == "cast"][0]
    assert cast["args"] == {"dtype": "FLOAT"} and cast["inputs"] == ["Source"]
    assert all(isinstance(o["seed"], int) for o in doc["ops"])
    assert doc["outputs"] == [cast["name"], "Source:1"]
    path = tmp_path / "p.yaml"
    assert pipe.serialize(filename=str(path)) == path.read_text()


def test_round_trip_gives_identical_batches(tmp_path):
    pipe = _pipe()
    text = pipe.serialize()
    pipe.build()
    copies = [Pipeline.deserialize(serialized_pipeline=text),
              Pipeline.deserialize(filename=_write(tmp_path, text))]
    third = Pipeline(batch_size=3, num_threads=1, device_id=None, seed=99)  # seeds come from the YAML
    third.deserialize_and_build(text)
    copies.append(third)
    for c in copies[:2]:
        c.build()
    for _ in range(2):
        ref = pipe.run()
        for c in copies:
            out = c.run()
            for k in range(3):
                np.testing.assert_array_equal(out[0].at(k), ref[0].at(k))
                np.testing.assert_array_equal(out[1].at(k), ref[1].at(k))
    # load -> serialize -> load is a fixed point
    assert Pipeline.deserialize(serialized_pipeline=text).serialize() == text


def test_overrides_change_pipeline_parameters():
    text = _pipe().serialize()
    p = Pipeline.deserialize(serialized_pipeline=text, batch_size=5)
    p.build()
    assert len(p.run()[0]) == 5


def _write(tmp_path, text):
    path = tmp_path / "pipe.yaml"
    path.write_text(text)
    return str(path)


def test_unknown_op_names_line_and_suggests():
    text = _pipe().serialize().replace("op: cast", "op: castt")
    line = [i for i, l in enumerate(text.splitlines(), 1) if "op: castt" in l][0]
    with pytest.raises(SerializationError, match=rf"line {line}: op '__Cast_1': unknown op 'castt' \(did you mean 'cast'\?\)"):
        Pipeline.deserialize(serialized_pipeline=text)


def test_bad_argument_names_line():
    text = _pipe().serialize().replace("dtype: FLOAT", "dtype: FLAOT")
    with pytest.raises(SerializationError, match=r"line \d+: Cast '__Cast_1': `dtype` must be a data type"):
        Pipeline.deserialize(serialized_pipeline=text)
    text = _pipe().serialize().replace("dtype: FLOAT", "dtype: FLOAT\n    colour: red")
    with pytest.raises(SerializationError, match="unknown argument `colour`"):
        Pipeline.deserialize(serialized_pipeline=text)


def test_a_key_given_twice_is_refused_with_both_lines():
    text = _pipe().serialize().replace("dtype: FLOAT", "dtype: FLOAT\n    dtype: UINT8")
    line = text.splitlines().index("    dtype: UINT8") + 1
    with pytest.raises(SerializationError, match=rf"line {line}: .*'dtype' appears twice .*line {line - 1}"):
        Pipeline.deserialize(serialized_pipeline=text)


@pytest.mark.parametrize("text,match", [
    ("a: [1, 2", "not valid YAML"),
    ("torch_dali_pipeline: 7\nops: [{}]", "version 7 is not supported"),
    ("just: data", "not a torch_dali pipeline"),
    ("torch_dali_pipeline: 1\nops: []", "non-empty list"),
    ("!!python/object/apply:os.system ['echo hi']", "tag !!python/object/apply:os.system is not allowed"),
])
def test_malformed_documents_are_refused(text, match):
    with pytest.raises(SerializationError, match=match):
        Pipeline.deserialize(serialized_pipeline=text)


def test_functions_are_written_by_import_path_and_checked_on_load():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p(f):
        images, _ = fn._test_images(fixed_size=True)
        return images, fn.torch_python_function(images, function=f)

    text = p(_double).serialize()
    assert "function: test_serialization:_double" in text
    with pytest.raises(SerializationError, match="allow_modules"):
        Pipeline.deserialize(serialized_pipeline=text)
    loaded = Pipeline.deserialize(serialized_pipeline=text, allow_modules=["test_serialization"])
    loaded.build()
    images, doubled = (o.as_tensor() for o in loaded.run())
    assert images.dtype == doubled.dtype == torch.uint8 and images.max() > 127  # some values wrap
    assert torch.equal(doubled, images * 2)  # the loaded function is the one that ran
    empty = Pipeline(batch_size=2, num_threads=1, device_id=None)
    with pytest.raises(SerializationError, match="is not allowed in this load"):
        empty.deserialize_and_build(text)
    empty.deserialize_and_build(text, allow_functions=["test_serialization:_double"])
    assert torch.equal(empty.run()[1].as_tensor(), doubled)

    with pytest.raises(SerializationError, match="lambda"):
        p(lambda x: x).serialize()

    def closure(x):
        return x

    with pytest.raises(SerializationError, match="closure"):
        p(closure).serialize()


def test_a_c_function_loads_only_when_allowed_by_name():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        images, _ = fn._test_images(fixed_size=True)
        return images, fn.torch_python_function(images, function=torch.bitwise_not)

    text = p().serialize()
    assert "function: torch:bitwise_not" in text
    with pytest.raises(SerializationError, match="'torch:bitwise_not' is not allowed in this load"):
        Pipeline.deserialize(serialized_pipeline=text)
    with pytest.raises(SerializationError, match="is a builtin_function_or_method, not a Python function"):
        Pipeline.deserialize(serialized_pipeline=text, allow_modules=["torch"])
    loaded = Pipeline.deserialize(serialized_pipeline=text, allow_functions=["torch:bitwise_not"])
    loaded.build()
    images, inverted = (o.as_tensor() for o in loaded.run())
    assert torch.equal(inverted, 255 - images)
    with pytest.raises(TypeError, match="`allow_modules` must be a list of strings"):
        Pipeline.deserialize(serialized_pipeline=text, allow_modules="torch")
    with pytest.raises(SerializationError, match="no attribute chain"):
        Pipeline.deserialize(serialized_pipeline=text, allow_functions=["torch:nn.functional.relu"])


def test_a_dataset_is_never_written_to_or_read_from_yaml():
    from torch_dali import from_dataset

    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1)
    def p():
        return from_dataset([(1,), (2,)], name="Reader")

    with pytest.raises(SerializationError, match="argument `dataset`: a list cannot be written to YAML"):
        p().serialize()


def test_arguments_set_to_their_default_are_written_and_others_are_not():
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=3)
    def p():
        images, _ = fn._test_images(name="Source")
        return fn.resize(images, resize_x=8, resize_y=8, interp_type=types.INTERP_LINEAR, name="Resize")

    text = p().serialize()
    resize = next(o for o in yaml.safe_load(text)["ops"] if o["name"] == "Resize")
    assert resize["args"] == {"resize_x": 8.0, "resize_y": 8.0, "interp_type": "INTERP_LINEAR"}
    assert Pipeline.deserialize(serialized_pipeline=text).serialize() == text
