"""readers.webdataset beyond the DALI tables: tars written by the `webdataset` package (read back as
its own WebDataset reads them), the shuffle buffer (a bounded read-ahead), split_by_file (webdataset's
split_by_node), fsspec URLs, corrupt tars and indexes."""
from __future__ import annotations

import io
import tarfile

import numpy as np
import pytest

from torch_dali import fn, pipeline_def
from torch_dali.errors import ArgumentError, DataError
from tests.reference import readers_formats as W


def _pipe(bs=2, seed=5, **kw):
    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, seed=seed)
    def p():
        out = fn.readers.webdataset(name="R", **kw)
        # as DALI: one `ext` group gives one node, several give a list
        return tuple(out) if isinstance(out, (list, tuple)) else out
    pipe = p()
    pipe.build()
    return pipe


def _keys(pipe, batches):
    """The `cls` output (the sample's number) of each sample read."""
    out = []
    for _ in range(batches):
        tl = pipe.run()[0]
        out += [int(bytes(np.asarray(tl.at(i))).decode()) for i in range(len(tl))]
    return out


def _shards(tmp_path, sizes):
    paths, n = [], 0
    for k, size in enumerate(sizes):
        members = []
        for i in range(size):
            members += [(f"s{n:04d}.cls", str(n).encode()), (f"s{n:04d}.bin", bytes([n % 256]) * (n % 7 + 1))]
            n += 1
        p = str(tmp_path / f"shard{k}.tar")
        W.write_tar(p, members)
        paths.append(p)
    return paths


def test_files_written_by_the_webdataset_package(tmp_path):
    wds = pytest.importorskip("webdataset")
    url = str(tmp_path / "w.tar")
    rng = np.random.default_rng(2)
    with wds.TarWriter(url) as tw:
        for i in range(7):
            sample = {"__key__": f"k{i:03d}", "cls": str(i).encode(), "npy": rng.integers(0, 9, 4 + i).astype(np.int16).tobytes()}
            if i != 3:
                sample["jpg"] = bytes(rng.integers(0, 255, 5 + i, dtype=np.uint8))
            tw.write(sample)
    theirs = list(wds.WebDataset(url, shardshuffle=False))
    W.wds_index(url, str(tmp_path / "w.idx"))
    for index in (None, [str(tmp_path / "w.idx")]):
        pipe = _pipe(bs=7, paths=[url], index_paths=index, ext=["cls", "jpg", "npy"])
        cls, jpg, npy = pipe.run()
        for i, s in enumerate(theirs):
            assert bytes(np.asarray(cls.at(i))) == s["cls"]
            assert bytes(np.asarray(jpg.at(i))) == s.get("jpg", b"")
            assert bytes(np.asarray(npy.at(i))) == s["npy"]


def test_shuffle_buffer_is_a_bounded_read_ahead(tmp_path):
    paths = _shards(tmp_path, [40, 25, 35])
    fill = 16
    pipe = _pipe(bs=10, paths=paths, ext=["cls"], random_shuffle=True, initial_fill=fill)
    reader = pipe.reader("R")
    seen, most = [], 0
    for _ in range(20):  # two epochs
        tl = pipe.run()[0]
        seen += [int(bytes(np.asarray(tl.at(i))).decode()) for i in range(len(tl))]
        most = max(most, len(reader._buf))
    e0, e1 = seen[:100], seen[100:]
    assert sorted(e0) == list(range(100)) and sorted(e1) == list(range(100))
    assert e0 != list(range(100)) and e0 != e1  # shuffled, and differently per epoch
    # the p-th sample out was read at most `fill` samples ahead: the stream never runs further
    # ahead than the buffer (samples may linger in it, as in any shuffle buffer)
    assert all(i <= p + fill - 1 for p, i in enumerate(e0))
    assert max(i - p for p, i in enumerate(e0)) > fill // 2  # and it does use the buffer
    assert 0 < most <= fill + 2 * 10
    again = _pipe(bs=10, paths=paths, ext=["cls"], random_shuffle=True, initial_fill=fill)
    assert _keys(again, 10) == e0  # same seed, same order


def test_split_by_file_is_split_by_node(tmp_path):
    wds = pytest.importorskip("webdataset")
    paths = _shards(tmp_path, [3, 5, 2, 4, 6])
    counts = [3, 5, 2, 4, 6]
    starts = np.cumsum([0] + counts)
    for world in (2, 3):
        lengths = set()
        for rank in range(world):
            mine = list(wds.shardlists.split_by_node.__wrapped__(paths, rank, world)) \
                if hasattr(wds.shardlists.split_by_node, "__wrapped__") else paths[rank::world]
            want = [i for p in mine for i in range(starts[paths.index(p)], starts[paths.index(p) + 1])]
            pipe = _pipe(bs=1, paths=paths, ext=["cls"], num_shards=world, shard_id=rank,
                         split_by_file=True, stick_to_shard=True)
            assert _keys(pipe, len(want)) == want
            padded = _pipe(bs=1, paths=paths, ext=["cls"], num_shards=world, shard_id=rank,
                           split_by_file=True, pad_last_batch=True)
            order = padded.reader("R").epoch_order(0)
            lengths.add(len(order))
            assert set(order) == set(want)
        assert lengths == {max(sum(counts[k] for k in range(r, 5, world)) for r in range(world))}


def test_fsspec_memory_urls(tmp_path):
    fsspec = pytest.importorskip("fsspec")
    paths = _shards(tmp_path, [4, 3])
    fs = fsspec.filesystem("memory")
    urls = []
    for k, p in enumerate(paths):
        fs.pipe(f"/wds/shard{k}.tar", open(p, "rb").read())
        urls.append(f"memory://wds/shard{k}.tar")
    local = _pipe(bs=7, paths=paths, ext=["cls", "bin"]).run()
    remote = _pipe(bs=7, paths=urls, ext=["cls", "bin"]).run()
    for a, b in zip(local, remote):
        for i in range(7):
            np.testing.assert_array_equal(np.asarray(a.at(i)), np.asarray(b.at(i)))


def test_corrupt_tars_and_indexes(tmp_path):
    bad = tmp_path / "bad.tar"
    bad.write_bytes(b"\x00garbage" * 200)
    with pytest.raises(DataError, match="bad.tar"):
        _pipe(paths=[str(bad)], ext=["cls"])
    forged = io.BytesIO()  # a pax header claiming 1 GiB of records
    info = tarfile.TarInfo("s.cls")
    info.size = 1
    with tarfile.open(fileobj=forged, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info.pax_headers = {"comment": "x"}
        tf.addfile(info, io.BytesIO(b"1"))
    raw = bytearray(forged.getvalue())
    size_field = raw[124:136]
    raw[124:136] = b"%011o\x00" % (1 << 30)
    assert raw[124:136] != size_field
    raw[148:156] = b"        "
    raw[148:156] = b"%06o\x00 " % sum(raw[:512])
    (tmp_path / "pax.tar").write_bytes(bytes(raw))
    with pytest.raises(DataError, match="pax.tar"):
        _pipe(paths=[str(tmp_path / "pax.tar")], ext=["cls"])
    good = _shards(tmp_path, [2])[0]
    idx = tmp_path / "i.idx"
    idx.write_text("v1.2 1\ncls 512000 1 s.cls\n")
    with pytest.raises(DataError, match="outside the tar"):
        _pipe(paths=[good], index_paths=[str(idx)], ext=["cls"])
    idx.write_text("v9 1\n")
    with pytest.raises(DataError, match="unsupported index version"):
        _pipe(paths=[good], index_paths=[str(idx)], ext=["cls"])
    idx.write_text("v1.2 1\ncls 100 1 s.cls\n")
    with pytest.raises(DataError, match="multiple of the tar block"):
        _pipe(paths=[good], index_paths=[str(idx)], ext=["cls"])


def test_argument_errors(tmp_path):
    paths = _shards(tmp_path, [2])
    with pytest.raises(ArgumentError, match="missing_component_behavior"):
        _pipe(paths=paths, ext=["cls"], missing_component_behavior="sometimes")
    with pytest.raises(ArgumentError, match="dtypes"):
        _pipe(paths=paths, ext=["cls", "bin"], dtypes=["UINT8"])
    with pytest.raises(ArgumentError, match="num_shards"):
        _pipe(paths=paths, ext=["cls"], num_shards=2, split_by_file=True)
    with pytest.raises(DataError, match="no component for \\['nope'\\]"):
        _pipe(paths=paths, ext=["cls", "nope"], missing_component_behavior="error")
    with pytest.raises(DataError, match="not a multiple"):
        _pipe(paths=paths, ext=["bin"], dtypes=["INT32"])


def test_truncated_tars(tmp_path):
    """A tar cut anywhere (inside a header, inside a member, between them): the samples wholly
    inside it, or a DataError naming the file; with an index made before the cut, a DataError
    for the components now past the end."""
    full = _shards(tmp_path, [6])[0]
    raw = open(full, "rb").read()
    W.wds_index(full, str(tmp_path / "full.idx"))
    with tarfile.open(full) as tf:
        data_end = max(m.offset_data + m.size for m in tf)
    for n in sorted({1, 100, 511, 512, 700, 1024, 1536, 2000, len(raw) // 2, len(raw) - 1024, len(raw) - 1}):
        cut = tmp_path / f"cut{n}.tar"  # a new file each time: no pipeline reads one being rewritten
        cut.write_bytes(raw[:n])
        try:
            pipe = _pipe(bs=1, paths=[str(cut)], ext=["cls", "bin"])
        except DataError as e:
            assert f"cut{n}.tar" in str(e)
        else:
            assert int(bytes(np.asarray(pipe.run()[0].at(0))).decode()) == 0
            pipe.shutdown()
        indexed = dict(paths=[str(cut)], index_paths=[str(tmp_path / "full.idx")], ext=["cls", "bin"])
        if n < data_end:
            with pytest.raises(DataError, match=f"outside the tar .*cut{n}.tar"):
                _pipe(bs=1, **indexed)
        else:  # only the end-of-archive blocks were cut
            _pipe(bs=1, **indexed).shutdown()


def _member(name: str, data: bytes, typ: bytes = b"0", size_field: bytes | None = None) -> bytes:
    h = bytearray(512)
    h[:len(name)] = name.encode()
    h[100:124] = b"0000644\x000000000\x000000000\x00"
    h[124:136] = size_field if size_field is not None else b"%011o\x00" % len(data)
    h[136:148], h[156:157], h[257:265] = b"00000000000\x00", typ, b"ustar\x0000"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\x00 " % sum(h)
    return bytes(h) + data + b"\x00" * (-len(data) % 512)


def test_gnu_sparse_member_cut_short_is_named():
    """A GNU sparse member whose extension block is cut by the end of the file: tarfile's IndexError
    came out of the listing naming no file (found by the tar fuzz target's forged headers)."""
    from torch_dali.io.tarindex import scan_tar
    h = bytearray(_member("a.cls", b"", typ=b"S"))
    h[482] = 1  # "isextended": a block of sparse entries follows
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\x00 " % sum(h[:512])
    with pytest.raises(DataError, match=r"f\.tar: not a readable tar file \(IndexError"):
        scan_tar(io.BytesIO(bytes(h) + b"\x00" * 100), "f.tar")


@pytest.mark.parametrize("raw, says", [
    # a pax record length past ssize_t: tarfile's OverflowError came out of the listing naming no
    # file; the record is now refused before tarfile reads it (check_pax)
    (_member("././@PaxHeader", b"99999999999999999999 size=1\n", typ=b"x") + _member("a.cls", b"1"),
     "pax record at byte 0 of its header is malformed"),
    # a base-256 size field of -1: listed, then "invalid range (-1 bytes at 512)" at run time
    (_member("a.cls", b"1", size_field=b"\xff" * 12), "member 'a.cls' has a negative size"),
    # tarfile recurses once per pax / GNU long-name header: 3,000 in a row were a RecursionError
    (_member("././@LongLink", b"x" * 10 + b"\x00", typ=b"L") * 3000 + _member("a.cls", b"1"),
     "a member has hundreds of extended"),
    (_member("././@PaxHeader", b"10 a=bcde\n", typ=b"x") * 3000 + _member("a.cls", b"1"),
     "a member has hundreds of extended"),
])
def test_forged_tar_headers_are_named_at_listing(tmp_path, raw, says):
    (tmp_path / "f.tar").write_bytes(raw + b"\x00" * 1024)
    with pytest.raises(DataError, match=f"f.tar.*{says}"):
        _pipe(paths=[str(tmp_path / "f.tar")], ext=["cls"])



def scan_forged(kind: str) -> str:
    """Child side of the test below: scan_tar's verdict on a member of typeflag `kind` whose
    base-256 size is -512, under a 16 GiB address-space cap."""
    import resource
    from torch_dali.io.tarindex import scan_tar
    resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))
    size = b"\xff" + ((-512) % (1 << 88)).to_bytes(11, "big")
    raw = _member("a.cls", b"1") + _member("b.bin", b"", typ=kind.encode(), size_field=size) + b"\x00" * 1024
    try:
        return repr(scan_tar(io.BytesIO(raw), "f.tar"))
    except DataError as e:
        return str(e)


def test_negative_size_of_any_member_type_ends_the_scan():
    """tarfile moves past a member of an unknown type by its size: -512 took it back to the same
    header for ever, listing that member again and again until memory ran out (41 s to a 4 GiB cap
    here; a 2 KiB tar). Only regular members' sizes were checked. DALI 2.4 reads such a tar (its
    first sample); here every member's negative size is a DataError naming the tar."""
    try:
        from tests._isolate import Died, run_isolated
    except ImportError:
        from _isolate import Died, run_isolated  # type: ignore[no-redef]
    kinds = ["Z", "5", "0", "S"]
    for kind, got in zip(kinds, run_isolated("tests.test_readers_webdataset:scan_forged", kinds, timeout=20)):
        assert not isinstance(got, Died), (kind, got)
        if kind == "S":  # GNU sparse: tarfile moves back by the size field, then reports the real size (0)
            assert got == "f.tar: member 'b.bin' leads back to byte 1024 (a negative size field); the tar " \
                "is corrupt or forged", got
        else:
            assert got == "f.tar: member 'b.bin' has a negative size (-512)", (kind, got)


@pytest.mark.parametrize("pax, says", [
    (b"1" * 30000, "a pax header holds a run of 30000 digits"),
    (b"1 hdrcharset=" * 2300, "a pax header names its charset more than once"),
    (b"2 " * 15000 + b"a=b\n", "a pax record at byte 0 of its header is malformed"),
])
def test_pax_headers_tarfile_parses_in_quadratic_time_are_refused(pax, says):
    """Python 3.11.7's tarfile (CVE-2024-6232) took 3.2, 0.6 and 0.7 s for these 30 KB pax headers
    and grows with the square of their size: the 1 MiB a header may have (MAX_HEADER_READ) is about
    half an hour, and the third kept one 30 KB keyword per record (gigabytes at 1 MiB)."""
    import time
    from torch_dali.io.tarindex import scan_tar
    raw = _member("././@PaxHeader", pax, typ=b"x") + _member("a.cls", b"1") + b"\x00" * 1024
    t0 = time.perf_counter()
    with pytest.raises(DataError, match=f"p.tar: {says}"):
        scan_tar(io.BytesIO(raw), "p.tar")
    assert time.perf_counter() - t0 < 0.5


def test_pax_tars_are_listed_as_tarfile_lists_them():
    """Valid pax headers pass the check: long and non-ASCII names, float mtimes, comments."""
    from torch_dali.io.tarindex import scan_tar
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for i in range(20):
            for ext in ("jpg", "cls"):
                info = tarfile.TarInfo("d" * 150 + f"/ünï_{i:03d}.{ext}")
                info.size, info.mtime, info.pax_headers = 2, 1700000000.123456, {"comment": "x" * 300}
                tf.addfile(info, io.BytesIO(b"%02d" % i))
    raw = buf.getvalue()
    with tarfile.open(fileobj=io.BytesIO(raw)) as tf:
        want = [(m.name, m.offset_data, m.size) for m in tf]
    got = scan_tar(io.BytesIO(raw), "v.tar")
    assert len(got) == 20 and [(c.name, c.offset, c.size) for s in got for c in s] == want

def test_index_sample_count_read_as_a_stream_integer():
    # DALI 2.4 reads the header's count as a C++ stream reads an integer: "+2x" is 2 (measured)
    from torch_dali.io.tarindex import parse_index
    body = "cls 512 1\ncls 1536 1\ncls 2560 1\n"
    for head, n in (("v1.1 2", 2), ("v1.1 +2x", 2), ("v1.1 3abc extra", 3)):
        assert len(parse_index(f"{head}\n{body}", "i.idx")) == n
    for head in ("v1.1 -2", "v1.1 x2", "v1.1 0", "v1.1"):
        with pytest.raises(DataError, match="sample count"):
            parse_index(f"{head}\n{body}", "i.idx")


def test_index_numbers_are_ascii_digits():
    # str.isdigit() takes '²' (and int() then raised ValueError out of the reader's listing); found by
    # the wds_index fuzz target. Digits of other scripts are not numbers to a C++ stream either.
    from torch_dali.io.tarindex import parse_index
    for bad in ("v1.1 1\ncls 5\u00b212 1\n", "v1.1 1\ncls 512 1\u00b2\n", "v1.1 1\ncls 512 \u0663\n",
                "v1.1 \u0663\ncls 512 1\n"):
        with pytest.raises(DataError):
            parse_index(bad, "i.idx")


def test_index_numbers_of_thousands_of_digits():
    # int() of 4300+ digits raised ValueError out of the reader's listing (no file, no line)
    from torch_dali.io.tarindex import parse_index
    for bad, says in (("v1.1 " + "9" * 5000 + "\ncls 512 1\n", "sample count"),
                      ("v1.1 1\ncls " + "5" * 5000 + " 1\n", "fit 64 bits"),
                      ("v1.1 1\ncls 512 " + "1" * 5000 + "\n", "fit 64 bits")):
        with pytest.raises(DataError, match=says):
            parse_index(bad, "i.idx")
    zeros = "0" * 5000
    assert parse_index(f"v1.1 {zeros}1\ncls {zeros}512 {zeros}3\n", "i.idx")[0][0][1:3] == (512, 3)


def test_each_output_carries_its_components_source_info(tmp_path):
    # DALI 2.4 (measured): every output's sample names its own component, "tar:offset:name"; a
    # missing component names nothing; get_property gives the same
    p = str(tmp_path / "t.tar")
    W.write_tar(p, [("a.bin", b"xy"), ("a.cls", b"0"), ("b.cls", b"1")])

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        data, cls = fn.readers.webdataset(paths=[p], ext=["bin", "cls"])
        return data, cls, fn.get_property(cls, key="source_info")

    q = pipe()
    q.build()
    data, cls, prop = q.run()
    assert [data[i].source_info() for i in range(2)] == [f"{p}:512:a.bin", ""]
    assert [cls[i].source_info() for i in range(2)] == [f"{p}:1536:a.cls", f"{p}:2560:b.cls"]
    assert [bytes(np.asarray(prop[i])).decode() for i in range(2)] == [f"{p}:1536:a.cls", f"{p}:2560:b.cls"]


def test_build_time_dataset_errors_are_runtime_errors_as_in_dali(tmp_path):
    """DALI 2.4 refuses a malformed index, a component whose size does not fit its dtype, or a
    missing file with a RuntimeError when the pipeline is built; code written for DALI catches
    that. torch_dali's refusal stays a DataError too."""
    good = _shards(tmp_path, [2])[0]
    idx = tmp_path / "i.idx"
    for text in ("", "v0.1", "v1.1", "v1.1 -1", "v1.1 1\n", "v1.1 1\ncls", "v1.1 1\ncls 1 0"):
        idx.write_text(text)
        with pytest.raises(RuntimeError) as e:
            _pipe(paths=[good], index_paths=[str(idx)], ext=["cls"])
        assert isinstance(e.value, DataError), text
    with pytest.raises(RuntimeError, match="not a multiple"):
        _pipe(paths=[good], ext=["bin"], dtypes=["INT32"])
    with pytest.raises(RuntimeError, match="none.tar"):
        _pipe(paths=[str(tmp_path / "none.tar")], ext=["cls"])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def files():
        return tuple(fn.readers.file(files=[str(tmp_path / "none.jpg")]))
    with pytest.raises(RuntimeError) as e:
        files().build()
    assert isinstance(e.value, DataError)
