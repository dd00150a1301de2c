"""More of DALI_extra's small sets, for test files beyond the shared 70: db/webdataset/sample-tar's
single.tar (one sample, one 'txt'), single_junk.tar (the same with a folder, a link and a FIFO
member: not regular files, so readers and `tarfile` extraction skip them), wide.tar (one sample of
1000 components named '0'..'999') empty.tar (no members), for reader/test_webdataset_corner, and cross.tar (20 samples of
'a.a' and 'b.a' components), for reader/test_webdataset_big;
db/webdataset/legacy_index_formats (a 16-sample MNIST-like data.tar with a v1.1 and a v1.2 index,
the index versions DALI 2.4 reads), for reader/test_webdataset_legacy_index_files; beside each
db/audio/wav/*.wav (misc.py's 16-bit mono PCM) its samples as int16 .npy, the reference
decoder/test_audio compares the decoded file with; where `soundfile` is installed, the same audio as
db/audio/flac/*.flac and db/audio/ogg/*.ogg (Vorbis), each with its int16 .npy as libsndfile
decodes it, for that test's FLAC and OGG cases."""
from __future__ import annotations

import io
import tarfile
from pathlib import Path

import numpy as np

from . import wds


def _members(path: Path, members: list[tarfile.TarInfo | tuple[str, bytes]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT) as tar:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                m.mtime = 1600000000
                tar.addfile(m)
            else:
                info = tarfile.TarInfo(m[0])
                info.size, info.mtime, info.mode = len(m[1]), 1600000000, 0o644
                tar.addfile(info, io.BytesIO(m[1]))


def _special(name: str, kind: bytes, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o755
    return info


def _index(samples: list[list[tuple[str, int, int, str]]], version: str) -> str:
    """An index in `wds2idx`'s layout: a head line, then one line per sample of
    'ext offset size' (v1.1) or 'ext offset size name' (v1.2) groups."""
    lines = [f"{version} {len(samples)}"]
    for comps in samples:
        lines.append(" ".join(f"{e} {o} {s}" + (f" {n}" if version == "v1.2" else "") for e, o, s, n in comps))
    return "\n".join(lines) + "\n"


def _offsets(path: Path) -> list[list[tuple[str, int, int, str]]]:
    out: dict[str, list[tuple[str, int, int, str]]] = {}
    with tarfile.open(path) as tar:
        for m in tar:
            key, ext = m.name.split(".", 1)
            out.setdefault(key, []).append((ext, m.offset_data, m.size, m.name))
    return list(out.values())


def make(root: Path) -> None:
    st = root / "db" / "webdataset" / "sample-tar"
    text = b"a single stand-in sample\n"
    _members(st / "single.tar", [("sample.txt", text)])
    _members(st / "single_junk.tar", [_special("junk_dir", tarfile.DIRTYPE), ("sample.txt", text),
                                       _special("junk_link", tarfile.SYMTYPE, "sample.txt"),
                                       _special("junk_fifo", tarfile.FIFOTYPE)])
    _members(st / "wide.tar", [(f"sample.{i}", f"component {i}".encode()) for i in range(1000)])
    _members(st / "empty.tar", [])
    # 20 samples with two-dot extensions ('a.a', 'b.a'), in key order, for reader/test_webdataset_big
    _members(st / "cross.tar", [(f"{k}.{e}", f"{e} of {k} ".encode() * (1 + k % 5))
                                for k in range(20) for e in ("a.a", "b.a")])

    legacy = root / "db" / "webdataset" / "legacy_index_formats"
    samples = wds._mnist(np.random.default_rng(707), 0)[:16]
    _members(legacy / "data.tar", [m for k, j, c in samples for m in ((f"{k}.jpg", j), (f"{k}.cls", c))])
    comps = _offsets(legacy / "data.tar")
    for version in ("v1.1", "v1.2"):
        (legacy / f"{version}.idx").write_text(_index(comps, version))

    for w in sorted((root / "db" / "audio" / "wav").glob("*.wav")):
        raw = w.read_bytes()
        assert raw[36:40] == b"data", w  # misc.py's plain 44-byte header
        np.save(w.with_suffix(".npy"), np.frombuffer(raw[44:], "<i2"))
    _flac_ogg(root / "db" / "audio")


def _flac_ogg(audio: Path) -> None:
    try:
        import soundfile as sf  # type: ignore[import-not-found]
    except ImportError:  # the WAV cases still run; FLAC / OGG ones count as needing DALI_extra
        return
    for fmt, subtype in (("flac", "PCM_16"), ("ogg", "VORBIS")):
        (audio / fmt).mkdir(parents=True, exist_ok=True)
        for w in sorted((audio / "wav").glob("*.wav")):
            out = audio / fmt / w.with_suffix(f".{fmt}").name
            samples, rate = sf.read(w, dtype="int16")
            sf.write(out, samples, rate, format=fmt.upper(), subtype=subtype)
            np.save(out.with_suffix(".npy"), sf.read(out, dtype="int16")[0])  # Vorbis is lossy: as decoded
