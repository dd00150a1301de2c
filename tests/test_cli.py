"""The `torch-dali` command, called in-process (fast), plus the installed script once."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from PIL import Image

from torch_dali.cli import main
from torch_dali.configs import CONFIG_DIR
from torch_dali.sample_data import make_sample_dataset

SMALL = ["--batch-size", "4", "--set", "num_threads=2", "--set", "prefetch_queue_depth=1"]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, str]:
    return make_sample_dataset(tmp_path_factory.mktemp("cli_data"), images_per_class=4)


@pytest.mark.parametrize("command", ["run", "validate", "show", "bench", "demo"])
def test_help_for_each_subcommand(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"torch-dali {command}" in out
    if command != "demo":
        assert "--set NODE.ARG=VALUE" in out and "imagenet_train" in out


def test_usage_errors_exit_2(capsys):
    assert main([]) == 2
    assert main(["run"]) == 2
    assert main(["run", "imagenet_train", "--batches", "0"]) == 2
    assert "--batches must be >= 1" in capsys.readouterr().err


def test_run_shows_images_per_second(data, capsys):
    assert main(["run", "imagenet_train", "--data", data["images"], "--batches", "3", *SMALL]) == 0
    captured = capsys.readouterr()
    assert "\rbatch 3/3" in captured.err and "images/s" in captured.err
    assert "3 batches, 12 images" in captured.out


def test_run_recordio_with_overrides_and_saved_config(data, tmp_path, capsys):
    saved = tmp_path / "resolved.yaml"
    assert main(["run", "recordio_train", "--data", data["rec"], "--batches", "2", *SMALL,
                 "--set", "Reader.random_shuffle=true", "--set", "Resize.resize_shorter=300",
                 "--save-config", str(saved)]) == 0
    doc = yaml.safe_load(saved.read_text())
    reader = next(op for op in doc["ops"] if op["name"] == "Reader")
    assert reader["args"] == {"random_shuffle": True, "path": [data["rec"]], "index_path": [data["idx"]]}
    assert doc["pipeline"]["batch_size"] == 4
    # the saved file reruns as is
    assert main(["run", str(saved), "--batches", "1"]) == 0


def test_saved_config_shows_an_override_equal_to_the_default(data, tmp_path):
    saved = tmp_path / "resolved.yaml"
    assert main(["run", "imagenet_train", "--data", data["images"], "--batches", "1", *SMALL,
                 "--set", "Reader.random_shuffle=false", "--save-config", str(saved)]) == 0
    reader = next(op for op in yaml.safe_load(saved.read_text())["ops"] if op["name"] == "Reader")
    assert reader["args"] == {"random_shuffle": False, "file_root": data["images"]}
    again = tmp_path / "again.yaml"
    assert main(["run", str(saved), "--batches", "1", "--save-config", str(again)]) == 0
    assert again.read_text() == saved.read_text()


def test_run_without_data_says_how_to_give_it(capsys):
    assert main(["run", "imagenet_train"]) == 2
    err = capsys.readouterr().err
    assert "/path/to/imagenet/train does not exist" in err and "--data PATH" in err


def test_bad_override_is_a_usage_error(data, capsys):
    assert main(["run", "imagenet_train", "--data", data["images"], "--set", "Reader.random_shuffle=maybe"]) == 2
    assert "`random_shuffle` must be a boolean" in capsys.readouterr().err
    assert main(["run", "imagenet_train", "--data", data["images"], "--set", "Nope.x=1"]) == 2
    assert "no op named 'Nope'" in capsys.readouterr().err


def test_runtime_failure_exits_1(data, capsys):
    assert main(["run", "imagenet_val", "--data", data["images"], "--batches", "1", *SMALL,
                 "--set", "Normalize.crop=[224, -1]"]) == 1
    err = capsys.readouterr().err
    assert "failed: PipelineError" in err and "Normalize" in err


def test_validate_good_config(capsys):
    assert main(["validate", str(CONFIG_DIR / "recordio_train.yaml")]) == 0
    out = capsys.readouterr().out
    assert "OK" in out and "resize_shorter=<ShorterSide>" in out


def _broken(tmp_path: Path, old: str, new: str) -> Path:
    text = (CONFIG_DIR / "imagenet_train.yaml").read_text()
    assert old in text
    path = tmp_path / "broken.yaml"
    path.write_text(text.replace(old, new, 1))
    return path


def _line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if needle in line)


def test_validate_unknown_op(tmp_path, capsys):
    path = _broken(tmp_path, "op: random_resized_crop", "op: random_resized_crap")
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"line {_line_of(path, 'random_resized_crap')}: op 'RandomResizedCrop': unknown op" in err
    assert "did you mean 'random_resized_crop'" in err


def test_validate_bad_arg_and_more(tmp_path, capsys):
    path = _broken(tmp_path, "size: [224, 224]", "size: [224, 224]\n    bogus: 1")
    path.write_text(path.read_text().replace("random_shuffle: true", "random_shuffle: sometimes"))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"line {_line_of(path, 'random_shuffle')}: FileReader 'Reader': `random_shuffle` must be a boolean" in err
    assert f"line {_line_of(path, 'bogus')}: RandomResizedCrop 'RandomResizedCrop': unknown argument `bogus`" in err
    assert "2 problems" in err


def test_show_writes_a_png(data, tmp_path, capsys):
    out = tmp_path / "sub" / "grid.png"
    assert main(["show", "imagenet_val", "--data", data["images"], "--out", str(out), *SMALL]) == 0
    with Image.open(out) as im:
        assert im.format == "PNG" and im.size == (4 * 226 + 2, 228)
    assert "de-normalized with Normalize's mean/std" in capsys.readouterr().out


def test_bench_names_the_slowest_op(data, capsys):
    assert main(["bench", "torchvision_augment", "--data", data["images"], "--batches", "2", *SMALL]) == 0
    out = capsys.readouterr().out
    assert "images/s" in out and "ms/batch" in out
    for name in ("Reader", "Decoder", "RandomResizedCrop", "ColorJitter", "Flip", "Normalize"):
        assert f"\n  {name} " in out
    assert out.count("<- slowest") == 1 and "slowest stage: " in out


def test_demo_still_works(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--batch-size", "4", "--batches", "1",
                 "--images-per-class", "1"]) == 0
    out = capsys.readouterr().out
    assert "reloaded copy gives identical batches: True" in out
    assert (tmp_path / "batch.png").is_file() and (tmp_path / "pipeline.yaml").is_file()


def test_installed_script_help():
    script = Path(sys.executable).parent / "torch-dali"
    if not script.exists():
        pytest.skip("the torch-dali script is not installed in this environment (pip install -e .)")
    res = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0
    for command in ("run", "validate", "show", "bench", "demo"):
        assert command in res.stdout


def test_allow_module_lets_a_config_import_a_function(tmp_path, capsys):
    path = tmp_path / "fn.yaml"
    text = (CONFIG_DIR / "torchvision_augment.yaml").read_text()
    path.write_text(text.replace("torch_dali.augment:color_jitter", "copy:copy"))
    assert main(["validate", str(path)]) == 2
    assert "'copy:copy' is not allowed in this load" in capsys.readouterr().err
    assert main(["validate", str(path), "--allow-module", "copy"]) == 0
    assert "function=copy:copy" in capsys.readouterr().out
    assert main(["validate", str(path), "--allow-function", "copy:deepcopy"]) == 2
    assert main(["validate", str(path), "--allow-function", "copy:copy"]) == 0
    assert "function=copy:copy" in capsys.readouterr().out
