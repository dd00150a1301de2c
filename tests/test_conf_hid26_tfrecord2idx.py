"""tfrecord2idx (torch_dali.io.tfrecord_index): the index DALI's own `tfrecord2idx` script writes
for the same file ("offset size" per record, framing included; DALI 2.4's script gave these lines
for records of 3, 0 and 300 payload bytes), read back by readers.tfrecord."""
from __future__ import annotations

import numpy as np

from tests.reference import readers_formats as F
from torch_dali import fn, pipeline_def
from torch_dali import tfrecord as tfrec
from torch_dali.io import tfrecord_index as T


def test_index_lines_and_reader(tmp_path):
    rec = str(tmp_path / "train")
    payloads = [F.encode_example({"x": ("int64", [k])}) for k in (3, 4, 5)]
    spans = F.write_tfrecord(rec, payloads)
    assert T.main([rec, str(tmp_path / "a.idx")]) == 0
    assert (tmp_path / "a.idx").read_text() == "".join(f"{o} {n}\n" for o, n in spans)

    @pipeline_def(batch_size=3, num_threads=1, device_id=None)
    def p():
        return fn.readers.tfrecord(path=rec, index_path=str(tmp_path / "a.idx"),
                                   features={"x": tfrec.FixedLenFeature([1], tfrec.int64, -1)})["x"]

    pipe = p()
    pipe.build()
    np.testing.assert_array_equal(pipe.run()[0].as_array().ravel(), [3, 4, 5])


def test_dali_script_offsets(tmp_path):
    rec = str(tmp_path / "r")
    F.write_tfrecord(rec, [b"abc", b"", bytes(300)])
    assert [f"{o} {n}" for o, n in T.scan(rec)] == ["0 19", "19 16", "35 316"]


def test_bad_files(tmp_path, capsys):
    rec = tmp_path / "r"
    F.write_tfrecord(str(rec), [b"abcdef"])
    rec.write_bytes(rec.read_bytes()[:-2])  # the last CRC cut short
    assert T.main([str(rec), str(tmp_path / "i")]) == 1
    assert "offset 0" in capsys.readouterr().err
    assert T.main([str(rec)]) == 2


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    """`tfrecord2idx fifo out.idx` waited in open() for a writer for ever (DALI's script too);
    now exit status 1 naming it, at once. Run as a child process with a timeout."""
    import os
    import subprocess
    import sys
    fifo = tmp_path / "x.tfrecord"
    os.mkfifo(fifo)
    r = subprocess.run([sys.executable, "-m", "torch_dali.io.tfrecord_index", str(fifo), str(tmp_path / "x.idx")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and str(fifo) in r.stderr and "not a regular file" in r.stderr, r
