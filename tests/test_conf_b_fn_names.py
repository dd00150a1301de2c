"""`fn._to_snake_case`: DALI's rule from op class names to functional names."""
from __future__ import annotations

import pytest

from torch_dali import fn


@pytest.mark.parametrize("name,snake", [
    ("Test", "test"), ("OneTwo", "one_two"), ("TestXYZ", "test_xyz"), ("testXX", "test_xx"),
    ("OneXYZTwo", "one_xyz_two"), ("MFCC", "mfcc"), ("RandomBBoxCrop", "random_bbox_crop"),
    ("STFT_CPU", "stft_cpu"), ("DOUBLE__UNDERSCORE", "double__underscore"), ("XYZ1abc", "xyz1abc"),
    ("Caffe2Reader", "caffe2_reader"), ("COCOReader", "coco_reader"), ("MXNetReader", "mxnet_reader"),
    ("DLTensorPythonFunction", "dl_tensor_python_function"), ("TFRecordReader", "tfrecord_reader"),
    ("_LEADing", "_lea_ding"), ("_L_Eading", "_l_eading"), ("TRAILING__", "trailing__"),
])
def test_to_snake_case(name, snake):
    assert fn._to_snake_case(name) == snake


def test_snake_case_of_dali_class_names():
    """Where DALI's class name is not the CamelCase of the functional name (`BBoxPaste`,
    `MXNet`), the rule still gives the functional name."""
    from torch_dali.ops._registry import all_schemas
    own = {"arithmetic", "readers.dataset"}  # torch_dali's own class names, not DALI's rule
    for schema in all_schemas():
        if schema.class_name_override and schema.name not in own:
            assert fn._to_snake_case(schema.class_name) == schema.name.split(".")[-1], schema.name


def test_schema_names_give_back_the_function_path():
    """Every public function of `fn` (namespaces and DALI's old names included) carries DALI's
    `_schema_name`, from which `ops._op_name` rebuilds where the function is."""
    import inspect
    import sys

    from torch_dali import ops

    seen = 0

    def walk(module, path):
        nonlocal seen
        for name in dir(module):
            if name.startswith("_"):
                continue
            member = getattr(module, name)
            if inspect.isfunction(member):
                assert ops._op_name(member._schema_name) == ".".join([*path, name]), (path, name)
                seen += 1
            elif inspect.ismodule(member) and sys.modules.get(f"{module.__name__}.{name}") is member:
                walk(member, [*path, name])

    walk(fn, [])
    assert seen > 100
    assert fn.readers.file._schema_name == "readers__File"
    assert fn.file_reader._schema_name == "FileReader" and fn.random_bbox_crop._schema_name == "RandomBBoxCrop"
    assert ops._op_name("experimental__readers__Video", "ops") == "experimental.readers.Video"


def test_pytorch_plugin_fn_is_an_importable_module():
    import importlib

    from torch_dali.plugin import pytorch

    mod = importlib.import_module("torch_dali.plugin.pytorch.fn")
    assert mod is pytorch.fn and mod.torch_python_function.__name__ == "torch_python_function"
    assert mod.torch_python_function._schema_name == "TorchPythonFunction"
