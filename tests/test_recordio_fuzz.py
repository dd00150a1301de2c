"""Random RecordIO bytes and random .idx text: only our own DataError, never a crash or a hang."""
from __future__ import annotations

import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torch_dali import fn, pipeline_def
from torch_dali.errors import TorchDaliError
from torch_dali.io.recordio import encode_record, iter_records, pack, unpack

VALID = b"".join(encode_record(pack(float(i), bytes([i]) * (5 + i))) for i in range(4))


def _read_all(rec: bytes, idx: str) -> None:
    with tempfile.TemporaryDirectory() as d:
        rp, ip = os.path.join(d, "x.rec"), os.path.join(d, "x.idx")
        with open(rp, "wb") as f:
            f.write(rec)
        with open(ip, "w") as f:
            f.write(idx)
        try:
            for _, record in iter_records(rp):
                unpack(record)
        except TorchDaliError:
            pass
        try:
            @pipeline_def(batch_size=2, num_threads=1, device_id=None, seed=1, exec_async=False)
            def p():
                return fn.readers.mxnet(path=[rp], index_path=[ip])
            pipe = p()
            for _ in range(3):
                pipe.run()
        except TorchDaliError:
            pass


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200), st.text(max_size=60))
def test_random_bytes_and_index(rec, idx):
    _read_all(rec, idx)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(VALID) - 1), st.binary(min_size=1, max_size=8), st.booleans())
def test_mutated_valid_file(pos, patch, truncate):
    data = VALID[:pos] if truncate else VALID[:pos] + patch + VALID[pos + len(patch):]
    offsets = "".join(f"{k}\t{o}\n" for k, o in enumerate(range(0, len(VALID), 16)))
    _read_all(data, offsets)
