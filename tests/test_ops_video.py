"""decoders.video and the video readers beyond DALI's tables (tests/test_ref_video.py): codecs DALI's
CPU backend refuses, YCbCr, the legacy readers, resize, argument errors, the missing-PyAV error and
untrusted files (truncated, garbage) in a child process."""
from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest

av = pytest.importorskip("av")

try:  # run by pytest (tests/ on the path) or as the child of tests._isolate (the root on the path)
    from reference import video_cases as C  # noqa: E402
except ImportError:
    from tests.reference import video_cases as C  # type: ignore[no-redef]  # noqa: E402

from torch_dali import fn, pipeline_def, types  # noqa: E402
from torch_dali.errors import DataError  # noqa: E402


def _decode(data: bytes, **kw) -> np.ndarray:
    arr = np.frombuffer(data, np.uint8)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.video(fn.external_source(source=lambda: [arr], batch=True), **kw)

    p = pipe()
    p.build()
    return np.array(p.run()[0].at(0))


@pytest.mark.parametrize("codec,fmt,pix", [("libx264", "mp4", "yuv420p"), ("mpeg4", "avi", "yuv420p")])
def test_codecs_dali_cpu_refuses_are_decoded(codec, fmt, pix):
    """DALI 2.4's CPU backend refuses H.264 and MPEG-4 (its GPU backend decodes them): here they decode,
    each nearest to the frame encoded at its place."""
    data = C.encode(codec, fmt, 6, 48, 32, pix)
    out = _decode(data)
    assert out.shape == (6, 32, 48, 3) and out.dtype == np.uint8
    pats = [C.pattern(j, 48, 32).astype(int) for j in range(6)]
    nearest = [int(np.argmin([np.abs(out[i].astype(int) - q).mean() for q in pats])) for i in range(6)]
    assert nearest == list(range(6))  # each frame is the one encoded there (lossy, so not exact)


def test_ycbcr_matches_rgb():
    """image_type=YCbCr: the same frames as planar 4:4:4 YCbCr (BT.601), interleaved."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
    files = C.load_files()
    import tempfile
    from pathlib import Path
    with tempfile.TemporaryDirectory() as tmp:
        paths = C.write_tree(Path(tmp))

        def run(it):
            @pipeline_def(batch_size=1, num_threads=1, device_id=None)
            def pipe():
                return fn.experimental.readers.video(filenames=[paths["a/vp8.webm"]], sequence_length=3, image_type=it)
            p = pipe()
            p.build()
            return np.array(p.run()[0].at(0)).astype(np.float64)
        rgb, ycc = run(types.RGB), run(types.YCbCr)
    assert files and rgb.shape == ycc.shape
    y, cb, cr = ycc[..., 0] - 16, ycc[..., 1] - 128, ycc[..., 2] - 128
    r = 1.164 * y + 1.596 * cr
    g = 1.164 * y - 0.392 * cb - 0.813 * cr
    b = 1.164 * y + 2.017 * cb
    back = np.clip(np.stack([r, g, b], -1), 0, 255)
    assert np.abs(back - rgb).mean() < 1.5


def test_image_type_refused():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.experimental.readers.video(filenames=["x.webm"], sequence_length=1, image_type=types.BGR)
    with pytest.raises(RuntimeError, match="image_type"):
        pipe().build()


def test_frames_with_range_refused():
    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.video(fn.external_source(source=lambda: [np.zeros(4, np.uint8)], batch=True),
                                 frames=[1], start_frame=1)
    with pytest.raises(RuntimeError, match="frames"):
        pipe().build()


def test_skips_unreadable_file_when_listing(tmp_path):
    """A file FFmpeg cannot open is left out with a warning, as DALI does; the others are read."""
    paths = C.write_tree(tmp_path)
    (tmp_path / "a" / "zz_garbage.webm").write_bytes(b"not a video" * 10)

    @pipeline_def(batch_size=2, num_threads=1, device_id=None)
    def pipe():
        return fn.experimental.readers.video(file_root=str(tmp_path), sequence_length=3, name="R")
    with pytest.warns(RuntimeWarning, match="zz_garbage"):
        p = pipe()
        p.build()
    assert p.epoch_size("R") == 9 and paths
    assert np.array(p.run()[0].at(0)).shape == (3, 24, 40, 3)  # a/mjpeg.avi, first by name


def test_legacy_reader(tmp_path):
    """readers.video: step defaults to sequence_length, pad_sequences pads with zero frames
    (frame numbers -1), labels=[] numbers the files, dtype=FLOAT with normalized divides by 255;
    device='gpu' without CUDA runs on the CPU."""
    paths = C.write_tree(tmp_path)
    names = [paths["a/vp8.webm"], paths["a/mjpeg.avi"]]

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe(**kw):
        return tuple(fn.readers.video(device="gpu", filenames=names, labels=[], sequence_length=3, stride=2,
                                      name="R", **kw))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = pipe(pad_sequences=True, enable_frame_num="sequence")
        p.build()
        q = pipe(dtype=types.FLOAT, normalized=True)
        q.build()
    got = [[np.array(t.at(0)) for t in p.run()] for _ in range(p.epoch_size("R"))]
    assert [g[1].tolist() for g in got] == [[0], [0], [1]]
    assert [g[2].tolist() for g in got] == [[0, 2, 4], [3, 5, -1], [0, 2, 4]]
    assert not got[1][0][2].any() and got[1][0][:2].any(axis=(1, 2, 3)).all()
    f = [np.array(t.at(0)) for t in q.run()]
    assert f[0].dtype == np.float32 and 0 <= f[0].min() and f[0].max() <= 1.0
    np.testing.assert_allclose(f[0] * 255, got[0][0].astype(np.float32), atol=1e-3)


def test_video_resize(tmp_path):
    """readers.video_resize resizes every frame as fn.resize does."""
    paths = C.write_tree(tmp_path)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        seq = fn.readers.video(device="gpu", filenames=[paths["a/vp8.webm"]], sequence_length=2)
        res = fn.readers.video_resize(device="gpu", filenames=[paths["a/vp8.webm"]], sequence_length=2,
                                      resize_x=20, resize_y=10)
        return seq, res, fn.resize(seq, resize_x=20, resize_y=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = pipe()
        p.build()
    seq, res, ref = (np.array(t.at(0)) for t in p.run())
    assert seq.shape == (2, 32, 48, 3) and res.shape == (2, 10, 20, 3)
    np.testing.assert_array_equal(res, ref)


def test_missing_pyav_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "av", None)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.decoders.video(fn.external_source(source=lambda: [np.zeros(4, np.uint8)], batch=True))
    with pytest.raises(RuntimeError, match=r"pip install torch_dali\[video\]"):
        pipe().build()


# -- untrusted files, in a child process (a crash or a hang fails the test, not pytest) -------------

def _child_decode(req: dict) -> dict:
    """Decodes the named damaged video with decoders.video; what happened, as JSON."""
    good = C.load_files()["a/vp8.webm"] if req["kind"] != "mjpeg" else C.load_files()["a/mjpeg.avi"]
    data = {"truncated": good[: len(good) * 2 // 3], "garbage": bytes(range(256)) * 40,
            "header_only": good[:64], "mjpeg": good[: len(good) // 2], "empty": b""}[req["kind"]]
    try:
        _decode(data if data else b"\x00")
    except Exception as e:  # noqa: BLE001 - reported to the test
        cause = e.__cause__ or e.__context__
        return {"error": type(e).__name__, "runtime": isinstance(e, RuntimeError),
                "data_error": isinstance(e, DataError) or isinstance(cause, DataError) or "VideoDataError" in str(e),
                "msg": str(e)}
    return {"ok": True}


def test_damaged_videos_in_child_process():
    try:
        from tests._isolate import Died, run_isolated
    except ImportError:
        from _isolate import Died, run_isolated  # type: ignore[no-redef]
    kinds = ["truncated", "garbage", "header_only", "mjpeg", "empty"]
    results = run_isolated("tests.test_ops_video:_child_decode", [{"kind": k} for k in kinds], timeout=60)
    for kind, r in zip(kinds, results):
        assert not isinstance(r, Died), (kind, r)
        # a truncated file may still hold whole frames (decoded), else a DataError naming the sample
        assert r.get("ok") or (r["runtime"] and r["data_error"] and "sample 0" in r["msg"]), (kind, r)
    assert any("error" in r for r in results)


def test_file_list_that_is_not_utf8_names_its_line(tmp_path):
    lst = tmp_path / "list.txt"
    lst.write_bytes(b"a.webm 0\nb\xff.webm 1\n")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.experimental.readers.video(file_list=str(lst), sequence_length=2))
    with pytest.raises(DataError, match="list.txt line 2: the file_list is not UTF-8"):
        p = pipe()
        p.build()
        p.run()


@pytest.mark.parametrize("start,end", [("nan", "5"), ("0", "inf"), ("1e999", "2"), ("0", "1e300"),
                                       ("-1e39", "0")])
def test_file_list_numbers_must_be_finite(tmp_path, start, end):
    """A file_list line whose start or end is not a finite number is a DataError naming the line
    (it was an OverflowError / ValueError from deep inside the frame planning)."""
    paths = C.write_tree(tmp_path)
    lst = tmp_path / "list.txt"
    lst.write_text(f"{paths['a/vp8.webm']} 0 {start} {end}\n")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.experimental.readers.video(file_list=str(lst), sequence_length=2,
                                                   file_list_format="frames"))
    with pytest.raises(DataError, match="line 1"):
        p = pipe()
        p.build()
        p.run()


@pytest.mark.parametrize("label", ["-1", "2147483648", "99999999999999999999"])
def test_file_list_label_outside_int32_names_its_line(tmp_path, label):
    """A label past int32 was a bare ValueError ("Overflow when unpacking long long") or RuntimeError
    when the batch was made, naming neither file nor line; a negative one was output, where DALI 2.4
    refuses it ("Label value should be >= 0"). 2**31 - 1 is read (DALI 2.4 saturates larger ones)."""
    paths = C.write_tree(tmp_path)
    lst = tmp_path / "list.txt"

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.experimental.readers.video(file_list=str(lst), sequence_length=2))
    lst.write_text(f"{paths['a/vp8.webm']} {label}\n")
    with pytest.raises(DataError, match=r"list\.txt line 1: the label must be in \[0, 2\*\*31 - 1\]"):
        p = pipe()
        p.build()
        p.run()
    lst.write_text(f"{paths['a/vp8.webm']} 2147483647\n")
    p = pipe()
    assert p.run()[1].at(0).tolist() == [2147483647]


def test_file_list_names_are_files_never_ffmpeg_protocols(tmp_path, monkeypatch):
    """A relative file_list entry went to FFmpeg as written, and FFmpeg picks a protocol from a
    name's prefix: "subfile,,start,0,end,64,,:v.webm" (a local file of that name, so it passed the
    regular-file check) opened the first 64 bytes of v.webm instead; "http://h/x.webm" with
    folders "http:" and "h" made an HTTP request. Paths now reach FFmpeg absolute: always files."""
    import shutil
    paths = C.write_tree(tmp_path)
    name = "subfile,,start,0,end,64,,:v.webm"
    shutil.copy(paths["a/vp8.webm"], tmp_path / name)
    shutil.copy(paths["a/vp8.webm"], tmp_path / "v.webm")
    (tmp_path / "list.txt").write_text(f"{name} 0\n")
    monkeypatch.chdir(tmp_path)  # the list's folder, "", is the working folder

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.experimental.readers.video(file_list="list.txt", sequence_length=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a file left out ("not a video file FFmpeg can open") fails
        frames = pipe().run()[0].at(0)
    assert frames.shape[0] == 2 and frames.shape[-1] == 3


@pytest.mark.parametrize("op", ["experimental.readers.video", "readers.video"])
@pytest.mark.parametrize("form", ["absolute", "dotdot"])
def test_file_list_entries_stay_inside_its_folder(tmp_path, op, form):
    """A file_list is data: an entry naming a file outside the list's folder (an absolute path or
    `..`) was read (DALI 2.4 reads them too), so a hostile list could pull any file of the machine
    into tensors. It is refused naming the line, as readers.file's file_list, unless
    allow_outside_root=True, which reads the same video."""
    paths = C.write_tree(tmp_path / "videos")
    (tmp_path / "lists").mkdir()
    lst = tmp_path / "lists" / "list.txt"
    lst.write_text(f"{paths['a/vp8.webm'] if form == 'absolute' else '../videos/a/vp8.webm'} 3\n")
    reader = fn.experimental.readers.video if op.startswith("exp") else fn.readers.video
    device = "cpu" if op.startswith("exp") else "gpu"

    def run(**kw):
        @pipeline_def(batch_size=1, num_threads=1, device_id=None)  # "gpu" without CUDA: the CPU
        def pipe():
            return tuple(reader(file_list=str(lst), sequence_length=2, device=device, **kw))
        p = pipe()
        p.build()
        return p.run()
    with pytest.raises(DataError, match="list.txt line 1: .*outside the file_list's folder"):
        run()
    out = run(allow_outside_root=True)
    assert tuple(out[0].at(0).shape[:1]) == (2,) and np.array(out[1].at(0)).tolist() == [3]


@pytest.mark.parametrize("entry", ["absolute", "dotdot", "file_url", "sibling"])
def test_playlist_naming_other_files_is_refused(tmp_path, entry):
    """An HLS playlist (.m3u8) among the videos made FFmpeg read the segment files it names, as the
    playlist's frames: any media file of the machine (an absolute path, `../`, file://), past
    file_list's confinement to its folder (DALI 2.4's FFmpeg follows them too). Only a video's own
    file is opened now: the playlist is left out with a warning naming it, whatever it names."""
    secret = tmp_path / "secret"
    data = tmp_path / "data"
    secret.mkdir()
    data.mkdir()
    segment = C.encode("mpeg4", "mpegts", 8, 64, 48, "yuv420p")  # 4 frames of 48x32: too short to probe
    (secret / "s.ts").write_bytes(segment)
    (data / "s.ts").write_bytes(segment)
    name = {"absolute": str(secret / "s.ts"), "dotdot": "../secret/s.ts", "file_url": f"file://{secret}/s.ts",
            "sibling": "s.ts"}[entry]
    playlist = data / "evil.m3u8"
    playlist.write_text(f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\n{name}\n#EXT-X-ENDLIST\n")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.experimental.readers.video(filenames=[str(playlist), str(data / "s.ts")], sequence_length=2,
                                             name="R")
    with pytest.warns(RuntimeWarning, match="evil.m3u8: the file refers to another file"):
        p = pipe()
        p.build()
    assert p.epoch_size("R") == 4  # s.ts's 8 frames; none of the playlist's
    from torch_dali.io.video import Video, VideoDataError
    with pytest.raises(VideoDataError, match="refers to another file"):
        Video(str(playlist), "evil.m3u8").index()


def test_a_file_named_by_many_list_lines_is_opened_once(tmp_path, monkeypatch):
    """Each file_list line made its own Video, opening and demuxing the file again and keeping its
    own frame index: a list repeating one line 1,000 times over a 3,000-frame file took 12.5 s and
    1.25 GB to list (4-5 s and 0.8 GB now, the sequences themselves). Lines naming one file share it;
    one that failed is not opened again."""
    from torch_dali.io import video as V
    paths = C.write_tree(tmp_path)
    (tmp_path / "bad.webm").write_bytes(b"not a video" * 10)
    (tmp_path / "list.txt").write_text("a/vp8.webm 0\nbad.webm 1\n" * 50)
    opens = []
    real = V.Video._open
    monkeypatch.setattr(V.Video, "_open", lambda self: (opens.append(self.where), real(self))[1])

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return tuple(fn.experimental.readers.video(file_list=str(tmp_path / "list.txt"), sequence_length=3,
                                                   name="R"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # bad.webm: left out, once per line
        p = pipe()
        p.build()
    assert p.epoch_size("R") == 50 * 2 and paths  # a/vp8.webm: 2 sequences of 3 frames per line
    assert sorted(set(opens)) == sorted(opens) and len(opens) == 2  # listing: each file once


@pytest.mark.parametrize("kw,fails", [
    ({"sequence_length": 2, "fill_value": [1, 2]}, True),  # pad_mode "constant" by default
    ({"frames": [0, 1], "fill_value": []}, True),
    ({"sequence_length": 2, "fill_value": [1, 2, 3, 4], "pad_mode": "constant"}, True),
    ({"sequence_length": 2, "fill_value": [1, 2], "pad_mode": "edge"}, False),
    ({"sequence_length": 2, "fill_value": [1, 2], "pad_mode": "none"}, False)])
def test_fill_value_count_checked_when_nothing_is_padded(kw, fails):
    # DALI 2.4 (measured): with pad_mode="constant" a `fill_value` of neither 1 nor 3 values fails
    # every sample at run, padded or not; other pad modes never read it
    data = C.load_files()["a/vp8.webm"]
    if fails:
        with pytest.raises((RuntimeError, DataError), match="fill_value"):
            _decode(data, **kw)
    else:
        assert _decode(data, **kw).shape[0] == 2


@pytest.mark.parametrize("pad_mode,fails", [("constant", True), ("none", False)])
def test_reader_fill_value_count_checked_when_nothing_is_padded(tmp_path, pad_mode, fails):
    paths = C.write_tree(tmp_path)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.experimental.readers.video(filenames=[paths["a/vp8.webm"]], sequence_length=2,
                                             pad_mode=pad_mode, fill_value=[1, 2])
    p = pipe()
    p.build()
    if fails:
        with pytest.raises((RuntimeError, DataError), match="fill_value"):
            p.run()
    else:
        assert np.array(p.run()[0].at(0)).shape[0] == 2


# experimental.readers.video file_list ranges of b/vp9.webm (12 frames, pts 40 ms apart, time base
# 1/1000), as DALI 2.4 reads them (measured): (start end, arguments, (first frame, last frame,
# sequences of 1) or None: the range is empty, the file left out and the reader has no data)
FILE_LIST_RANGES = [
    ('0.1 0.3', {}, (2, 7, 6)),
    ('0.12 0.2', {}, (2, 4, 3)),
    ('0.12 0.2', {'file_list_rounding': 'all_up'}, (3, 4, 2)),
    ('0.12 0.2', {'file_list_rounding': 'all_down'}, (2, 4, 3)),
    ('0.12 0.2', {'file_list_include_end': False}, (2, 4, 3)),
    ('0.5', {}, None),
    ('0.1 2.0', {}, None),
    ('1 4', {'file_list_format': 'frames'}, (1, 3, 3)),
    ('0.5 4.5', {'file_list_format': 'frames'}, (0, 4, 5)),
    ('0.5 4.5', {'file_list_format': 'frames', 'file_list_rounding': 'all_down'}, (0, 3, 4)),
    ('-3 -1', {'file_list_format': 'frames'}, (9, 10, 2)),
    ('-3 0', {'file_list_format': 'frames'}, None),
]


@pytest.mark.parametrize("rng,kw,want", FILE_LIST_RANGES)
def test_file_list_ranges_as_dali(tmp_path, rng, kw, want):
    # times are float32 truncated to time-base ticks (0.12 s is tick 119: rounding down gives frame
    # 2), the end is exclusive (file_list_include_end only clamps it), an end of 0 or past the video
    # is frame 0 (an empty range)
    paths = C.write_tree(tmp_path)
    lst = tmp_path / "list.txt"
    lst.write_text(f"b/vp9.webm 0 {rng}\n")

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return fn.experimental.readers.video(file_list=str(lst), sequence_length=1, enable_frame_num=True,
                                             name="R", **kw)[2]
    assert paths
    p = pipe()
    if want is None:
        with pytest.warns(RuntimeWarning, match="no frames"), pytest.raises((RuntimeError, DataError)):
            p.build()
        return
    p.build()
    n = p.epoch_size("R")
    got = [int(np.asarray(p.run()[0][0])[0]) for _ in range(n)]
    assert (got[0], got[-1], n) == want
