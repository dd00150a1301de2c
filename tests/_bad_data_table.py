"""Runs the bad-data corpus through real pipelines; the README's table is made from these results.

`python -m tests._bad_data_table` prints the markdown table that goes in README.md between
`<!-- bad-data-table -->` and `<!-- /bad-data-table -->` (tests/test_bad_data.py checks it is current).
Items that could crash or hang a process if a fix regressed (`Case.isolate`) run in a child process
(`tests._isolate`): a crash is then an outcome ("DIED: ..."), not the end of the test run.
"""
from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import stat
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any

from torch_dali import fn, pipeline_def
from torch_dali.errors import DataError, PipelineError
from torch_dali.skips import Skip, skipped

try:
    from tests._isolate import Died, run_isolated
    from tests.corruption import Case, build
except ImportError:  # pytest puts tests/ itself on sys.path
    from _isolate import Died, run_isolated  # type: ignore[no-redef]
    from corruption import Case, build  # type: ignore[no-redef]

BATCH = 3
MARK_OPEN, MARK_CLOSE = "<!-- bad-data-table -->", "<!-- /bad-data-table -->"


@dataclass
class Outcome:
    """What one run of a case gave: an error, or the samples read."""

    error: str = ""
    at_build: bool = False
    sources: list[str] = field(default_factory=list)  # every sample read (exec_async=False only)
    sums: list[float] = field(default_factory=list)  # pixel sums of the decoded images
    shapes: list[tuple[int, ...]] = field(default_factory=list)
    labels: list[float] = field(default_factory=list)
    batch_sizes: list[int] = field(default_factory=list)
    skips: list[Skip] = field(default_factory=list)
    epoch: int = 0  # the reader's epoch after the run

    @property
    def ok(self) -> bool:
        return not self.error


def make_pipe(case: Case, on_error: str, device: str = "cpu", batch_size: int = BATCH,
              exec_async: bool = False, random_crop: bool = False, seed: int = 7,
              device_id: int | None = None):
    reader = fn.readers.file if case.reader == "file" else fn.readers.mxnet
    decoder = fn.decoders.image_random_crop if random_crop else fn.decoders.image

    @pipeline_def(batch_size=batch_size, num_threads=2, device_id=device_id, seed=seed,
                  exec_async=exec_async, exec_pipelined=exec_async)
    def pipe():
        data, labels = reader(name="R", on_error=on_error, **case.reader_kw)
        return decoder(data, device=device, on_error=on_error), labels

    return pipe()


def _undo_damage(case: Case) -> None:
    if case.damage:
        path = case.damage[1]
        if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
            os.unlink(path)
        shutil.copyfile(path + ".orig", path)


def _do_damage(case: Case) -> None:
    if not case.damage:
        return
    kind, path = case.damage[:2]
    if kind == "fifo":
        os.unlink(path)
        os.mkfifo(path)
    elif kind == "shrink":
        os.truncate(path, case.damage[2])
    else:
        raise ValueError(f"unknown damage {kind!r}")


_OUTCOMES: dict[str, Outcome] = {}  # isolated cases' outcomes, by request
_IN_CHILD = False


def _request(case: Case, on_error: str, device: str, batches: int | None, kw: dict[str, Any]) -> str:
    return json.dumps([dataclasses.asdict(case), on_error, device, batches, kw], sort_keys=True)


def _child_run(request: str) -> dict[str, Any]:
    """The child's side of an isolated case: runs it here, returns the Outcome as JSON."""
    global _IN_CHILD
    _IN_CHILD = True
    fields, on_error, device, batches, kw = json.loads(request)
    fields["bad"] = tuple(fields["bad"])
    fields["damage"] = tuple(fields["damage"])
    fields["decoded_shapes"] = {k: tuple(v) for k, v in fields["decoded_shapes"].items()}
    return dataclasses.asdict(run_case(Case(**fields), on_error, device, batches, **kw))


def prefetch(requests: list[tuple[Case, str, dict[str, Any]]]) -> None:
    """Runs the isolated cases among (case, on_error, run_case keywords) in one child process, so
    the run_case calls that follow find their outcomes (one child start for them all)."""
    todo = []
    for case, on_error, kw in requests:
        if case.isolate and not _IN_CHILD:
            kw = dict(kw)
            key = _request(case, on_error, kw.pop("device", "cpu"), kw.pop("batches", None), kw)
            if key not in _OUTCOMES and key not in todo:
                todo.append(key)
    if not todo:
        return
    for key, got in zip(todo, run_isolated("tests._bad_data_table:_child_run", todo, timeout=60)):
        if isinstance(got, Died):
            _OUTCOMES[key] = Outcome(error=f"DIED: {got.reason}")
        else:
            got["shapes"] = [tuple(x) for x in got["shapes"]]
            got["skips"] = [Skip(*x) for x in got["skips"]]
            _OUTCOMES[key] = Outcome(**got)


def run_case(case: Case, on_error: str, device: str = "cpu", batches: int | None = None,
             **kw) -> Outcome:
    """Builds and runs `case` for `batches` batches (default: just past one epoch of good ones);
    an isolated case in a child process (see `prefetch`)."""
    if case.isolate and not _IN_CHILD:
        key = _request(case, on_error, device, batches, kw)
        if key not in _OUTCOMES:
            prefetch([(case, on_error, dict(kw, device=device, batches=batches))])
        return _OUTCOMES[key]
    n = len(case.sources)
    batches = math.ceil(n / BATCH) if batches is None else batches
    out = Outcome()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mixed without CUDA runs on the CPU
        _undo_damage(case)
        pipe = make_pipe(case, on_error, device, **kw)
        try:
            try:
                pipe.build()
            except DataError as e:
                out.error, out.at_build = str(e), True
                return out
            _do_damage(case)
            plan = pipe.executor.plan
            reader = next(op for node, op in plan.readers() if node.name == "R")
            for _ in range(batches):
                try:
                    images, labels = pipe.run()
                except PipelineError as e:
                    out.error = str(e)
                    break
                out.batch_sizes.append(len(images))
                out.sources += list(reader.last_sources)
                out.shapes += [tuple(t.shape) for t in images]
                out.sums += [float(t.double().sum()) for t in images]
                out.labels += [float(t.reshape(-1)[0]) for t in labels]
            out.skips = skipped(pipe)
            out.epoch = reader.epoch
        finally:
            pipe.shutdown()
    return out


def _tail(message: str, case: Case) -> str:
    """What is wrong, from a message: the text after the last name of the bad item."""
    end = 0
    for part in case.bad:
        k = message.rfind(part)
        if k >= 0:
            end = max(end, k + len(part))
    text = message[end:].lstrip(" :#")
    text = text.split("; the file")[0]  # RecordIO's hint
    return text if len(text) <= 90 else text[:87] + "..."


def rows(root: str) -> list[tuple[str, str, str]]:
    """(case, on_error="raise" result, on_error="skip" result) for every corpus item."""
    table = []
    cases = build(root)
    prefetch([(c, mode, {}) for c in cases for mode in ("raise", "skip")])
    for case in cases:
        r, s = run_case(case, "raise"), run_case(case, "skip")
        if r.ok:
            shape = "x".join(map(str, case.decoded_shapes.get(case.sources[2], ())))
            raised = f"decodes ({shape})"
        else:
            raised = f"{'DataError at build' if r.at_build else 'PipelineError'}: {_tail(r.error, case)}"
        if s.ok and s.skips:
            sk = s.skips[0]
            full = all(b == BATCH for b in s.batch_sizes)
            skip = f"left out by {sk.op}: {_tail(sk.source + ': ' + sk.reason, case)}" + \
                   ("; batches stay full" if full else "; BATCH SHORT")
        elif s.ok:
            skip = "decodes"
        else:
            skip = f"ERROR: {_tail(s.error, case)}"
        table.append((case.name, raised, skip))
    return table


def markdown(table: list[tuple[str, str, str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("`", "'")
    lines = ["| Bad data | `on_error=\"raise\"` (default) | `on_error=\"skip\"` |", "| --- | --- | --- |"]
    lines += [f"| {cell(a)} | {cell(b)} | {cell(c)} |" for a, b, c in table]
    return "\n".join(lines)


def generate() -> str:
    with tempfile.TemporaryDirectory() as root:
        return markdown(rows(root))


if __name__ == "__main__":
    print(generate())
