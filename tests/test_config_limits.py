"""One reader and one set of limits for every way a config comes in (load, configs.check,
`torch-dali validate`): each hostile file is refused quickly, naming the file and the line.

The files run in a child process with a timeout and a memory cap (tests/_config_child.py). The
5-second bound is a hang guard with a wide margin for a loaded machine, not a speed claim."""
from __future__ import annotations

import os
import re

import pytest

from _config_child import finished, run_configs

HEADER = "torch_dali_pipeline: 1\npipeline: {batch_size: 2, num_threads: 1, device_id: null, seed: 1}\n"
UNIFORM = "ops:\n- name: u\n  op: random.uniform\noutputs: [u]\n"
RESIZE = ("ops:\n- name: u\n  op: random.uniform\n  args: {{shape: [4, 4, 3]}}\n- name: r\n  op: {}\n"
          "  args: {}\n  inputs: [u]\noutputs: [r]\n")
N = 20_000  # levels of nesting: 40 KB of text
BOMB = ("ops:\n- &a [x, x, x, x, x, x, x, x, x]\n- &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        + "".join(f"- &{c} [{', '.join(['*' + p] * 9)}]\n" for p, c in zip("bcdefgh", "cdefghi"))
        + "outputs: [*i]\n")
# name: (file text or a maker, what the refusal says, the line it names or None)
CASES = {
    "too_big": (lambda p: _sparse(p, 100 * 2**20), r"104857600 bytes is more than a pipeline file may hold", None),
    "aliases": (HEADER + BOMB, r"YAML aliases \(\*a\) are not allowed", 5),
    "deep_flow": (HEADER + "ops: " + "[" * N + "]" * N + "\n", "nested too deeply", 3),
    "deep_block": (HEADER + "ops:\n" + "- " * N + "x\n", "nested too deeply", 4),
    "deep_mapping": (HEADER + "ops: " + "{a: " * N + "1" + "}" * N + "\n", "nested too deeply", 3),
    "many_values": (HEADER + "ops: [" + "0, " * 150_000 + "0]\n", "more than 100000 values", 3),
    "not_utf8": (lambda p: p.write_bytes(HEADER.encode() + b"ops:\n- name: \xff\xfe\n"), "not UTF-8 text", 4),
    "fifo": (lambda p: os.mkfifo(p), "not a regular file", None),
    # sizes that decide the memory a pipeline takes before it reads anything
    "huge_batch": (HEADER.replace("batch_size: 2", "batch_size: 1000000000") + UNIFORM, r"`batch_size` 1000000000 is "
                   "more than a file may ask for", 2),
    "many_threads": (HEADER.replace("num_threads: 1", "num_threads: 100000") + UNIFORM, "`num_threads` 100000 is "
                     "more than a file may ask for", 2),
    "deep_queue": (HEADER.replace("seed: 1}", "seed: 1, prefetch_queue_depth: 1000000}") + UNIFORM,
                   "`prefetch_queue_depth` 1000000 is more than", 2),
    "huge_shape": (HEADER + UNIFORM.replace("op: random.uniform", "op: random.uniform\n  args: {shape: [100000, 100000]}"),
                   r"makes samples of 10000000000 values", 6),
    # output sizes other than `shape`: a resize, a crop with padding, one_hot's classes
    "huge_resize": (HEADER + RESIZE.format("resize", "{resize_x: 100000, resize_y: 100000}"),
                    r"`resize_x` 100000.0, `resize_y` 100000.0 asks for samples of 10000000000 values", 9),
    "huge_crop": (HEADER + RESIZE.format("crop", "{crop: [100000, 100000], out_of_bounds_policy: pad}"),
                  r"`crop` \[100000.0, 100000.0\] asks for samples of 10000000000 values", 9),
    "huge_one_hot": (HEADER + RESIZE.format("one_hot", "{num_classes: 1000000000}"),
                     r"`num_classes` 1000000000 asks for samples of 1000000000 values", 9),
    # loaded before: pad 30 GB, resize 30 GB, mel_filter_bank 206 GB (allocated, or the OOM killer)
    "huge_pad_align": (HEADER + RESIZE.format("pad", "{align: [100000, 100000], axes: [0, 1]}"),
                       r"`align` \[100000, 100000\] asks for samples of 10000000000 values", 9),
    "huge_resize_longer": (HEADER + RESIZE.format("resize", "{resize_longer: 100000}"),
                           r"`resize_longer` 100000.0 asks for samples of 10000000000 values", 9),
    "huge_nfilter": (HEADER + RESIZE.format("mel_filter_bank", "{nfilter: 1000000000}"),
                     r"`nfilter` 1000000000 asks for samples of 1000000000 values", 9),
    # a TFRecord feature's shape: an example without it is filled with its default (np.full: 74.5 GiB)
    "huge_tfrecord_feature": (HEADER + "ops:\n- name: t\n  op: readers.tfrecord\n  args:\n    path: /x.tfrecord\n"
                              "    index_path: /x.idx\n    features:\n      a: {type: int64, shape: [100000, 100000], "
                              "fixed_length: true, partial_shape: null, default_value: -1}\noutputs: [t]\n",
                              r"feature 'a': `shape` \[100000, 100000\] makes samples of 10000000000 values", 9),
    # numbers: int() of 4300+ digits raised ValueError (no line); YAML 1.1's base-60 ints of 4 MiB
    # took minutes to construct (quadratic); an op seed past int64 failed at run time
    "long_int": (HEADER + "ops:\n- {name: u, op: random.uniform, seed: " + "9" * 5000 + "}\noutputs: [u]\n",
                 "a number of 5000 characters is too long", 4),
    "base60": (HEADER + "ops:\n- {name: u, op: random.uniform, seed: 1" + ":59" * 1_300_000 + "}\noutputs: [u]\n",
               "a number of 3900001 characters is too long", 4),
    "huge_seed": (HEADER + "ops:\n- name: u\n  op: random.uniform\n  seed: 100000000000000000000\noutputs: [u]\n",
                  "`seed` 100000000000000000000 does not fit int64", 4),
}


def _sparse(path, size: int) -> None:
    with open(path, "wb") as f:
        f.truncate(size)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp("limits")
    cases = []
    for name, (content, _, _) in CASES.items():
        path = folder / f"{name}.yaml"
        if callable(content):
            content(path)
        else:
            path.write_text(content, encoding="utf-8")
        cases.append({"name": name, "path": str(path), "ways": ["load", "check", "validate"]})
    return {"folder": folder, **run_configs(cases)}


@pytest.mark.parametrize("name", list(CASES))
def test_each_limit_refuses_quickly_with_file_and_line(results, name):
    _, says, line = CASES[name]
    r = finished(results, name)
    path = str(results["folder"] / f"{name}.yaml")
    where = f"{path} line {line}: " if line else f"{path}: "
    load, (problem,), validate = r["load"], r["check"]["problems"], r["validate"]
    assert load.get("type") == "SerializationError", load
    for message in (load["error"], problem, validate["stderr"]):
        assert where in message and re.search(says, message), message
    assert validate["rc"] == 2 and "OK" not in validate["stdout"], validate
    for way in ("load", "check", "validate"):
        assert r[way]["seconds"] < 5, (way, r[way]["seconds"])
