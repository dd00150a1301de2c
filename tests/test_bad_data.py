"""Bad data: every corpus item (tests/corruption.py) with on_error="raise" and "skip"; nothing lost,
nothing hung. A hang fails the run: faulthandler dumps the stacks and exits after 60 s. Items that
crashed or hung the process before their fix run in a child process (`Case.isolate`)."""
from __future__ import annotations

import faulthandler
import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch

from torch_dali import fn, pipeline_def
from torch_dali.errors import GraphError, PipelineError
from torch_dali.skips import skipped

try:
    from tests import _bad_data_table as T
    from tests.corruption import GOOD, Case, build, image
except ImportError:
    import _bad_data_table as T  # type: ignore[no-redef]
    from corruption import GOOD, Case, build, image  # type: ignore[no-redef]


@pytest.fixture(autouse=True)
def _no_hang():
    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


def _skip_batches(case: Case) -> int:
    return math.ceil((len(case.sources) + 2) / T.BATCH)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict[str, Case]:
    cases = build(tmp_path_factory.mktemp("corpus"))
    # the isolated items' runs for test_raise and test_skip, in one child process
    T.prefetch([(c, "raise", {}) for c in cases] +
               [(c, "skip", {"batches": _skip_batches(c)}) for c in cases])
    return {c.name: c for c in cases}


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> list[tuple[str, str, str]]:
    return T.rows(str(tmp_path_factory.mktemp("table")))


NAMES = [c.name for c in build(Path(__import__("tempfile").mkdtemp()))]


def _expected_label(case: Case, source: str) -> float:
    if case.reader == "mxnet":
        return float(source.rsplit(" ", 1)[1])
    m = re.search(r"/g(\d)\.jpg$", source)
    return float(m.group(1)) if "file_list" in case.reader_kw and m else 0.0


@pytest.mark.parametrize("name", NAMES)
def test_raise(corpus, name):
    case = corpus[name]
    out = T.run_case(case, "raise")
    out.error.encode("utf-8")  # printable whatever the file names hold
    if not case.bad:
        assert out.ok, out.error
        assert out.sources == (case.sources * 2)[: len(out.sources)]
        item = case.sources[2]
        assert out.shapes[out.sources.index(item)] == case.decoded_shapes[item]
        return
    assert not out.ok and out.at_build == case.at_build
    for part in case.bad:
        assert part in out.error, out.error
    assert case.reason in out.error, out.error
    if not case.at_build:
        assert out.error.startswith(case.found_by or ("ImageDecoder", "MXNetReader"))  # names the op


@pytest.mark.parametrize("name", NAMES)
def test_skip(corpus, name):
    case = corpus[name]
    n = len(case.sources)
    out = T.run_case(case, "skip", batches=_skip_batches(case))
    assert out.ok, out.error
    assert all(b == T.BATCH for b in out.batch_sizes)  # refilled: batches stay full
    assert out.sources[:n] == case.sources  # every good sample once, in order
    assert out.sources[n:] == case.sources[: len(out.sources) - n]  # the epoch ended
    assert out.epoch == 1
    assert out.labels == [_expected_label(case, s) for s in out.sources]  # labels follow data
    assert all(len(s) == 3 for s in out.shapes)
    if not case.bad:
        assert out.skips == []
        return
    assert len(out.skips) == 1, out.skips
    skip = out.skips[0]
    for part in case.bad:
        assert part in skip.source + ": " + skip.reason
    assert case.reason in skip.reason
    assert skip.op == (case.found_by or (
        "ImageDecoder" if not case.at_build and case.reader == "file" else
        "FileReader" if case.reader == "file" else "MXNetReader"))


@pytest.mark.parametrize("name", ["truncated JPEG", "JPEG declaring 60000x60000 pixels",
                                  "RecordIO bad magic number"])
def test_skip_mixed_decoder_and_prefetch(corpus, name):
    case = corpus[name]
    ref = T.run_case(case, "skip", batches=3)
    out = T.run_case(case, "skip", device="mixed", batches=3, exec_async=True)
    assert out.ok and out.sums == ref.sums and out.skips == ref.skips


def _twenty(tmp_path: Path) -> tuple[str, list[str], list[str]]:
    cls = tmp_path / "mixed" / "cls"
    cls.mkdir(parents=True)
    bad = {3: image(1)[:200], 9: b"not an image at all", 15: b""}
    good, bads = [], []
    for k in range(20):
        p = cls / f"{k:02d}.jpg"
        p.write_bytes(bad.get(k, image(k)))
        (bads if k in bad else good).append(str(p))
    return str(tmp_path / "mixed"), good, bads


@pytest.mark.parametrize("shuffle", [False, True])
def test_three_bad_among_twenty(tmp_path, shuffle):
    root, good, bads = _twenty(tmp_path)

    def run(seed: int) -> tuple[list[str], list[float]]:
        @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=seed, exec_async=False,
                      exec_pipelined=False)
        def p():
            data, _ = fn.readers.file(file_root=root, name="R", random_shuffle=shuffle, on_error="skip")
            return (fn.decoders.image(data, on_error="skip"),)
        pipe = p()
        reader = next(op for _, op in pipe.executor.plan.readers())
        sources, sums = [], []
        for _ in range(9):  # 36 samples: two epochs of 17, and 2 more
            (imgs,) = pipe.run()
            assert len(imgs) == 4
            sources += reader.last_sources
            sums += [float(t.float().sum()) for t in imgs]
        assert sorted(s.source for s in skipped(pipe)) == bads
        assert reader.epoch == 2
        pipe.shutdown()
        return sources, sums

    sources, sums = run(3)
    assert sorted(sources[:17]) == good and sorted(sources[17:34]) == good  # each once per epoch
    assert (sources[:17] == good) != shuffle
    assert run(3) == (sources, sums)  # same seed -> same batches


def test_pad_last_batch_pads_with_last_good(tmp_path):
    root, good, _ = _twenty(tmp_path)

    @pipeline_def(batch_size=4, num_threads=1, device_id=None, seed=1, exec_async=False,
                  exec_pipelined=False)
    def p():
        data, _ = fn.readers.file(file_root=root, name="R", pad_last_batch=True, on_error="skip")
        return (fn.decoders.image(data, on_error="skip"),)
    pipe = p()
    reader = next(op for _, op in pipe.executor.plan.readers())
    got = []
    for _ in range(6):
        pipe.run()
        got.append(list(reader.last_sources))
    assert [s for b in got[:4] for s in b] == good[:16]
    assert got[4] == [good[16]] * 4  # epoch 0's last batch, padded with its last good sample
    assert got[5] == good[:4]  # epoch 1 starts on a fresh batch
    pipe.shutdown()


@pytest.mark.parametrize("random_crop", [False, True])
def test_skip_gives_the_same_pixels_as_raise(corpus, random_crop):
    case = corpus["CMYK JPEG"]
    outs = []
    for on_error in ("raise", "skip"):
        pipe = T.make_pipe(case, on_error, random_crop=random_crop)
        outs.append([[t.clone() for t in pipe.run()[0]] for _ in range(3)])
        pipe.shutdown()
    for a, b in zip(*outs):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_max_pixels_argument(tmp_path):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "x.jpg").write_bytes(image(0))

    def first(limit: int):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)
        def p():
            data, _ = fn.readers.file(file_root=str(tmp_path))
            return (fn.decoders.image(data, max_pixels=limit),)
        pipe = p()
        try:
            return pipe.run()[0].at(0)
        finally:
            pipe.shutdown()

    with pytest.raises(PipelineError, match=r"x\.jpg declares 32x24 pixels; more than the limit "
                                            r"`max_pixels` \(767\)"):
        first(767)
    assert first(768).shape == (24, 32, 3)


def test_everything_bad_ends_with_an_error_not_a_hang(tmp_path):
    (tmp_path / "c").mkdir()
    for k in range(5):
        (tmp_path / "c" / f"{k}.jpg").write_bytes(b"junk")

    @pipeline_def(batch_size=2, num_threads=2, device_id=None, exec_async=True)
    def p():
        data, _ = fn.readers.file(file_root=str(tmp_path), on_error="skip")
        return (fn.decoders.image(data, on_error="skip"),)
    pipe = p()
    with pytest.raises(PipelineError, match="no good sample is left"):
        pipe.run()
    assert len(skipped(pipe)) == 5
    pipe.shutdown()


def test_decoder_skip_needs_a_reader_feeding_it(corpus):
    case = corpus["CMYK JPEG"]

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def p():
        _, labels = fn.readers.file(**case.reader_kw)
        return (fn.decoders.image(labels, on_error="skip"),)
    with pytest.raises(GraphError, match="straight from a reader's first output"):
        p().build()


def test_on_error_is_checked_and_serialized(corpus):
    from torch_dali.errors import ArgumentError
    case = corpus["truncated JPEG"]
    with pytest.raises(ArgumentError, match="on_error"):
        T.make_pipe(case, "ignore").build()
    pipe = T.make_pipe(case, "skip")
    text = pipe.serialize()
    assert text.count("on_error: skip") == 2
    from torch_dali.pipeline import Pipeline
    again = Pipeline.deserialize(text, batch_size=3, num_threads=1, device_id=None)
    again.build()
    assert len(again.run()[0]) == 3 and len(skipped(again)) == 1
    again.shutdown()
    pipe.shutdown()


def test_readme_table_is_current(table):
    readme = Path(__file__).resolve().parent.parent / "README.md"
    text = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if T.MARK_OPEN not in text:
        pytest.skip("README.md has no bad-data table yet (python -m tests._bad_data_table prints it)")
    current = text.split(T.MARK_OPEN, 1)[1].split(T.MARK_CLOSE, 1)[0].strip()
    assert current == T.markdown(table).strip(), "README's bad-data table is stale: paste " \
        "`python -m tests._bad_data_table` between the markers"


def test_table_rows_match_expectations(table):
    rows = {r[0]: r for r in table}
    assert set(rows) == set(NAMES)
    for name, raised, skip in rows.values():
        assert (raised.startswith("decodes")) == (skip == "decodes"), (name, raised, skip)
        assert "ERROR" not in skip and "SHORT" not in skip and "DIED" not in raised + skip
    assert np.all([r[2].endswith("batches stay full") for r in rows.values() if r[2] != "decodes"])


def test_skip_keeps_checked_images_for_the_staged_decoder(tmp_path, monkeypatch):
    """With on_error="skip" the reader's check decodes each sample once and the decoder finishes
    that image. With the stages on their own threads the reader is a batch ahead of the decoder;
    what it keeps must survive that (it was once cleared early: every image decoded twice)."""
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)
    from torch_dali.ops.decoders import image as I
    from torch_dali.sample_data import make_image_folder
    files = [p for p, _ in make_image_folder(tmp_path, images_per_class=4, seed=2, mean_hw=(24, 32))]
    stats = {"kept": 0, "again": 0}
    orig = I.ImageDecoder.decode_one

    def counted(self, ctx, data):
        stats["kept" if self._kept(data) is not None else "again"] += 1
        return orig(self, ctx, data)
    monkeypatch.setattr(I.ImageDecoder, "decode_one", counted)

    @pipeline_def(batch_size=4, num_threads=2, device_id=None, seed=1, exec_pipelined=True)
    def p():
        jpegs, labels = fn.readers.file(files=files, random_shuffle=True, seed=3, name="R")
        return fn.decoders.image(jpegs, device="mixed", on_error="skip"), labels
    pipe = p()
    pipe.build()
    assert pipe.executor.staged
    for _ in range(20):
        pipe.run()
    pipe.shutdown()
    assert stats["again"] == 0 and stats["kept"] >= 80, stats
