"""The shipped YAML configs, overrides from Python, config checking, and torch_dali.visualize."""
from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import torch

from torch_dali import configs, visualize
from torch_dali.errors import ArgumentError, ArgumentTypeError, GraphError, SerializationError
from torch_dali.sample_data import make_sample_dataset

NAMES = ["imagenet_train", "imagenet_val", "recordio_train", "torchvision_augment"]
FAST = {"num_threads": 2, "prefetch_queue_depth": 1}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, str]:
    return make_sample_dataset(tmp_path_factory.mktemp("configs_data"), images_per_class=4)


def data_for(name: str, data: dict[str, str]) -> str:
    return str(Path(data["rec"]).parent) if name.startswith("recordio") else data["images"]


def load(name: str, data: dict[str, str], **kw):
    overrides = {**FAST, **kw.pop("overrides", {})}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the CPU fallback of gpu/mixed ops
        return configs.load(name, data=data_for(name, data), batch_size=kw.pop("batch_size", 4),
                            overrides=overrides, **kw)


def first_batches(pipe, n: int = 2):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            return [pipe.run() for _ in range(n)]
        finally:
            pipe.shutdown()


def test_the_shipped_configs_are_there():
    assert configs.available() == NAMES
    for name in NAMES:
        assert configs.find(name) == configs.CONFIG_DIR / f"{name}.yaml"
        assert configs.find(f"{name}.yaml") == configs.find(name)
    with pytest.raises(SerializationError, match="shipped configs: imagenet_train"):
        configs.find("imagenet_tran")


@pytest.mark.parametrize("name", NAMES)
def test_config_validates_and_matches_its_python_definition(name):
    assert configs.check(name) == []
    text = configs.find(name).read_text()
    assert "/path/to/" in text  # data paths are placeholders
    assert configs.load(name).serialize() == configs.shipped_pipeline(name).serialize()


@pytest.mark.parametrize("name", NAMES)
def test_config_round_trips_unchanged(name, tmp_path):
    first = configs.load(name).serialize()
    (tmp_path / "again.yaml").write_text(first)
    assert configs.load(tmp_path / "again.yaml").serialize() == first


@pytest.mark.parametrize("name", NAMES)
def test_config_runs_on_sample_data(name, data):
    batches = first_batches(load(name, data))
    for images, labels in batches:
        x = images.as_tensor()
        assert x.shape == (4, 3, 224, 224) and x.dtype == torch.float32
        assert len(labels) == 4
        assert torch.isfinite(x).all()


def test_same_config_same_batches(data):
    a = first_batches(load("torchvision_augment", data), 1)[0][0].as_tensor()
    b = first_batches(load("torchvision_augment", data), 1)[0][0].as_tensor()
    assert torch.equal(a, b)


# -- overrides ------------------------------------------------------------------------------------

def test_overrides_from_python(data):
    pipe = load("imagenet_train", data, batch_size=3,
                overrides={"Reader.random_shuffle": False, "seed": 5, "crop_mirror_normalize.output_layout": "HWC"})
    assert pipe.batch_size == 3 and pipe.seed == 5
    reader = configs.find_node(pipe, "Reader")
    assert reader.args["random_shuffle"] is False and reader.args["file_root"] == data["images"]
    assert "random_shuffle: false" in pipe.serialize()  # set, though equal to the default: written
    images, labels = first_batches(pipe, 1)[0]
    assert images.as_tensor().shape == (3, 224, 224, 3)
    assert labels.as_tensor().flatten().tolist() == [0, 0, 0]  # unshuffled: the first class


def test_a_constant_replaces_a_per_sample_argument(data):
    pipe = load("recordio_train", data, overrides={"Resize.resize_shorter": 256})
    text = pipe.serialize()
    assert "ShorterSide" not in text and "resize_shorter: 256" in text
    assert first_batches(pipe, 1)[0][0].as_tensor().shape == (4, 3, 224, 224)


def test_data_for_recordio_takes_a_rec_file_or_a_folder(data, tmp_path):
    rec = configs.load("recordio_train", data=data["rec"])
    folder = configs.load("recordio_train", data=str(Path(data["rec"]).parent))
    for pipe in (rec, folder):
        node = configs.find_node(pipe, "Reader")
        assert node.args["path"] == [data["rec"]] and node.args["index_path"] == [data["idx"]]
    (tmp_path / "lonely.rec").write_bytes(b"")
    with pytest.raises(ArgumentError, match="no index beside"):
        configs.load("recordio_train", data=str(tmp_path / "lonely.rec"))
    with pytest.raises(ArgumentError, match="not a folder"):
        configs.load("imagenet_train", data=str(tmp_path / "missing"))


def test_bad_overrides_are_clear():
    with pytest.raises(ArgumentTypeError, match="`random_shuffle` must be a boolean, got 'maybe'"):
        configs.load("imagenet_train", overrides={"Reader.random_shuffle": "maybe"})
    with pytest.raises(ArgumentError, match="`size` must be > 0"):
        configs.load("imagenet_train", overrides={"RandomResizedCrop.size": [224, 0]})
    with pytest.raises(ArgumentError, match="did you mean `random_shuffle`"):
        configs.load("imagenet_train", overrides={"Reader.random_shufle": True})
    with pytest.raises(GraphError, match="did you mean 'Reader'"):
        configs.load("imagenet_train", overrides={"Reder.random_shuffle": True})
    with pytest.raises(ArgumentError, match="unknown pipeline setting"):
        configs.load("imagenet_train", overrides={"batch": 3})
    with pytest.raises(SerializationError, match="'os:getcwd' is not allowed in this load"):
        configs.load("torchvision_augment", overrides={"ColorJitter.function": "os:getcwd"})


def test_parse_set_reads_yaml_values():
    assert configs.parse_set("Reader.random_shuffle=false") == ("Reader.random_shuffle", False)
    assert configs.parse_set("Normalize.crop=[200, 200]") == ("Normalize.crop", [200, 200])
    assert configs.parse_set("Reader.file_root=/a/b") == ("Reader.file_root", "/a/b")
    with pytest.raises(ArgumentError, match="KEY=VALUE"):
        configs.parse_set("Reader.random_shuffle")


# -- checking -------------------------------------------------------------------------------------

BROKEN = """\
torch_dali_pipeline: 1
pipeline: {batch_size: 4, batch_sise: 3}
ops:
- name: Reader
  op: readers.file
  args:
    file_root: /x
    random_shufle: true
  inputs: []
- name: Dec
  op: decoders.imag
  inputs: [Reader]
- name: Crop
  op: random_resized_crop
  args:
    size: [224, -3]
  inputs: [Dec]
- name: Norm
  op: crop_mirror_normalize
  inputs: [Crop]
  arg_inputs: {mirror: Nope}
outputs: [Norm, 'Reader:1']
"""


def test_check_reports_every_problem_with_its_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    problems = configs.check(path)
    lines = [p.split(" line ")[1].split(":")[0] for p in problems]
    assert lines == ["2", "8", "11", "16", "21"], problems
    assert "did you mean `batch_size`" in problems[0]
    assert "did you mean 'decoders.image'" in problems[2]
    with pytest.raises(SerializationError):  # the loader refuses it too
        configs.load(path)


def test_loading_and_checking_are_one_validator(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(BROKEN)
    problems = configs.check(path)
    with pytest.raises(SerializationError) as e:
        configs.load(path)
    assert str(e.value).splitlines() == problems  # every problem, the same words, the same lines
    path.write_text(configs.find("imagenet_val").read_text().replace("seed: 12", "seed: 12\n  sed: 1"))
    (problem,) = configs.check(path)
    assert "unknown pipeline setting `sed` (did you mean `seed`?)" in problem
    with pytest.raises(SerializationError, match="unknown pipeline setting `sed`"):
        configs.load(path)


def test_check_reports_yaml_syntax_errors(tmp_path):
    path = tmp_path / "syntax.yaml"
    path.write_text("torch_dali_pipeline: 1\nops:\n- name: [unclosed\n")
    (problem,) = configs.check(path)
    assert "not valid YAML" in problem and " line " in problem


# -- visualize and augment ------------------------------------------------------------------------

def test_describe_and_dot():
    pipe = configs.load("recordio_train")
    text = visualize.describe(pipe)
    for name in ("Reader", "Decoder", "ShorterSide", "Resize", "Normalize"):
        assert name in text
    assert "resize_shorter=<ShorterSide>" in text and "crop=[224, 224]" in text
    assert "interp_type" not in text  # the default is not shown
    dot = visualize.to_dot(pipe)
    assert dot.startswith("digraph") and '"Decoder" -> "Resize";' in dot
    assert '"ShorterSide" -> "Resize" [style=dashed, label="resize_shorter"];' in dot


def test_show_images_accepts_tensorlists_and_tensors(data):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images, labels = first_batches(load("imagenet_val", data), 1)[0]
    ax = visualize.show_images(images, labels, mean=configs.IMAGENET_MEAN, std=configs.IMAGENET_STD, columns=2)
    assert len(ax.texts) == 4
    nhwc = torch.randint(0, 256, (3, 20, 30, 3), dtype=torch.uint8)
    assert visualize.to_nchw(nhwc).shape == (3, 3, 20, 30)
    visualize.show_images(nhwc, [0, 1, 2], names=["a", "b", "c"])
    visualize.show_images(torch.rand(2, 3, 16, 16))
    assert visualize.to_uint8(torch.ones(1, 3, 2, 2)).max() == 255
    plt.close("all")


def test_color_jitter_keeps_shape_and_is_seeded():
    from torch_dali.augment import color_jitter, random_grayscale, trivial_augment

    img = torch.randint(0, 256, (40, 50, 3), dtype=torch.uint8)
    torch.manual_seed(1)
    a = color_jitter(img)
    torch.manual_seed(1)
    assert torch.equal(a, color_jitter(img)) and a.shape == img.shape and a.dtype == torch.uint8
    for fn in (trivial_augment, random_grayscale):
        assert fn(img).shape == img.shape
    with pytest.raises(ValueError, match="HWC"):
        color_jitter(img.permute(2, 0, 1))
