"""file_list and .idx lines are parsed strictly (ASCII digits, labels that fit the int32 output),
errors name the file and line; file_list entries stay inside their folder unless
allow_outside_root=True."""
from __future__ import annotations

import os

import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError
from torch_dali.io.recordio import read_index, write_recordio
from torch_dali.skips import skipped

try:
    from tests.corruption import image
except ImportError:
    from corruption import image  # type: ignore[no-redef]


def _folder(tmp_path, lines: list[str]) -> str:
    (tmp_path / "data" / "sub").mkdir(parents=True)
    for k in range(2):
        (tmp_path / "data" / f"g{k}.jpg").write_bytes(image(k))
    (tmp_path / "outside.jpg").write_bytes(image(5))
    lst = tmp_path / "data" / "list.txt"
    lst.write_text("\n".join(["g0.jpg 0", "g1.jpg 1"] + lines) + "\n", encoding="utf-8")
    return str(lst)


def _labels(file_list: str, **kw) -> tuple[list[int], list]:
    @pipeline_def(batch_size=4, num_threads=1, device_id=None, exec_async=False, exec_pipelined=False)
    def p():
        _, labels = fn.readers.file(file_list=file_list, name="R", **kw)
        return (labels,)
    pipe = p()
    try:
        (labels,) = pipe.run()
        return [int(t[0]) for t in labels], skipped(pipe)
    finally:
        pipe.shutdown()


@pytest.mark.parametrize("label,why", [
    ("²", "the label must be a non-negative integer, got '²'"),  # str.isdigit() said yes
    ("٣", "the label must be a non-negative integer, got '٣'"),  # Arabic-Indic 3: int() takes it
    ("-1", "non-negative integer, got '-1'"), ("+1", "non-negative integer, got '+1'"),
    ("1.0", "non-negative integer, got '1.0'"), ("0x1", "non-negative integer, got '0x1'"),
    ("3000000000", "the label 3000000000 does not fit the int32 label output (at most 2147483647)"),
    ("2147483648", "does not fit the int32 label output"),
])
def test_bad_labels_name_the_file_and_line(tmp_path, label, why):
    lst = _folder(tmp_path, [f"g0.jpg {label}"])
    with pytest.raises(DataError) as e:
        _labels(lst)
    assert f"FileReader: file_list {lst}, line 3" in str(e.value) and why in str(e.value)
    labels, skips = _labels(lst, on_error="skip")
    assert labels == [0, 1, 0, 1] and [(s.source, why in s.reason) for s in skips] == [(f"{lst}, line 3", True)]


def test_largest_label_and_leading_zeros(tmp_path):
    lst = _folder(tmp_path, ["g0.jpg 2147483647", "g1.jpg 007"])
    assert _labels(lst)[0] == [0, 1, 2147483647, 7]


@pytest.mark.parametrize("entry", ["../outside.jpg", "sub/../../outside.jpg", "{tmp}/outside.jpg",
                                   "{tmp}/data/../outside.jpg"])
def test_entries_outside_the_folder_are_refused(tmp_path, entry):
    entry = entry.format(tmp=tmp_path)
    lst = _folder(tmp_path, [f"{entry} 1"])
    with pytest.raises(DataError, match=r"line 3 .*is outside the file_list's folder .*allow_outside_root"):
        _labels(lst)
    assert _labels(lst, on_error="skip")[0] == [0, 1, 0, 1]
    assert _labels(lst, allow_outside_root=True)[0] == [0, 1, 1, 0]


def test_entries_inside_the_folder_still_read(tmp_path):
    lst = _folder(tmp_path, ["sub/../g1.jpg 4", "./g0.jpg 5"])
    os.symlink(tmp_path / "outside.jpg", tmp_path / "data" / "link.jpg")  # the folder owner's link
    with open(lst, "a") as f:
        f.write("link.jpg 6\n")
    assert _labels(lst)[0] == [0, 1, 4, 5]


def test_file_root_is_the_folder_when_given(tmp_path):
    lst = _folder(tmp_path, ["../outside.jpg 3"])
    with pytest.raises(DataError, match="'../outside.jpg' is outside file_root"):
        _labels(lst, file_root=str(tmp_path / "data"))
    (tmp_path / "top.txt").write_text("data/g1.jpg 3\noutside.jpg 4\n")
    assert _labels(str(tmp_path / "top.txt"), file_root=str(tmp_path))[0] == [3, 4, 3, 4]


def test_labels_argument_must_fit_int32(tmp_path):
    f = tmp_path / "a.jpg"
    f.write_bytes(image(0))

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def p():
        _, labels = fn.readers.file(files=[str(f), str(f)], labels=[1, 3000000000], name="R")
        return (labels,)
    # refused where the argument is given (DALI 2.4 holds `labels` as int32 and refuses it at the call)
    with pytest.raises(ArgumentError, match=r"`labels` is 3000000000, outside \[-2147483648, 2147483647\]"):
        p().build()


@pytest.mark.parametrize("offset", ["²", "٣", "-4", "0x10"])
def test_idx_offsets_are_ascii_digits(tmp_path, offset):
    rec, idx = tmp_path / "x.rec", tmp_path / "x.idx"
    write_recordio(rec, idx, [(1.0, b"abc")])
    idx.write_text(f"0\t0\n1\t{offset}\n", encoding="utf-8")
    with pytest.raises(DataError, match=rf"x\.idx, line 2: expected 'key<TAB>offset', got '1\\t{offset}'"):
        read_index(idx)
    bad = []
    assert read_index(idx, on_bad=lambda m, no, why: bad.append(no)) == [("0", 0)] and bad == [2]
