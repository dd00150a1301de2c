"""One side of conformance/epochs.py: runs a list of cases under `nvidia.dali` (real DALI, or
torch_dali through the shim with --shim) and prints one JSON result per case, in order.

Usage: python -m conformance.epochs_worker [--shim] DATA_ROOT < cases.json > results.jsonl
"""
from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

warnings.simplefilter("ignore")


def _digits(a: np.ndarray) -> int:
    return int(bytes(np.asarray(a, dtype=np.uint8).reshape(-1)[:8]).decode())


def _first(a: np.ndarray) -> int:
    return int(round(float(np.asarray(a).reshape(-1)[0])))


def _coco_id(a: np.ndarray) -> int:
    return _first(a) - 1


# format -> (build the reader's id output, read the id of one sample)
def reader_builders(d: Path) -> dict[str, Any]:
    from nvidia.dali import fn
    import nvidia.dali.tfrecord as tfrec

    def file_root(a):
        return fn.readers.file(file_root=str(d / "files"), name="Reader", **a)[0]

    def file_list(a):
        return fn.readers.file(file_root=str(d), file_list=str(d / "list.txt"), name="Reader", **a)[1]

    def file_list_nolabel(a):
        return fn.readers.file(file_root=str(d), file_list=str(d / "list_nolabel.txt"),
                               name="Reader", **a)[0]

    def files(a):
        names = sorted(str(p) for p in (d / "files").rglob("*.jpg"))
        return fn.readers.file(files=names, name="Reader", **a)[0]

    def tfrecord(a):
        return fn.readers.tfrecord(path=str(d / "data.tfrecord"), index_path=str(d / "data.idx"),
                                   features={"id": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                                   name="Reader", **a)["id"]

    def tfrecord_multi(a):
        return fn.readers.tfrecord(path=[str(d / f"data{k}.tfrecord") for k in range(3)],
                                   index_path=[str(d / f"data{k}.idx") for k in range(3)],
                                   features={"id": tfrec.FixedLenFeature([1], tfrec.int64, -1)},
                                   name="Reader", **a)["id"]

    def mxnet_multi(a):
        return fn.readers.mxnet(path=[str(d / f"data{k}.rec") for k in range(3)],
                                index_path=str(d / "data_multi.ridx"), name="Reader", **a)[1]

    def webdataset_multi(a):
        return fn.readers.webdataset(paths=[str(d / f"data{k}.tar") for k in range(3)],
                                     index_paths=[str(d / f"data{k}.wdsidx") for k in range(3)],
                                     ext=["id"], name="Reader", **a)

    def mxnet(a):
        return fn.readers.mxnet(path=str(d / "data.rec"), index_path=str(d / "data.ridx"),
                                name="Reader", **a)[1]

    def caffe(a):
        return fn.readers.caffe(path=str(d / "lmdb"), name="Reader", **a)[1]

    def caffe2(a):
        return fn.readers.caffe2(path=str(d / "c2lmdb"), name="Reader", **a)[1]

    def webdataset(a):
        return fn.readers.webdataset(paths=[str(d / "data.tar")], index_paths=[str(d / "data.wdsidx")],
                                     ext=["id"], name="Reader", **a)

    def numpy_(a):
        return fn.readers.numpy(file_root=str(d / "npy"), file_filter="*.npy", name="Reader", **a)

    def coco(a):
        return fn.readers.coco(file_root=str(d / "coco"), annotations_file=str(d / "coco.json"),
                               image_ids=True, name="Reader", **a)[3]

    def nemo_asr(a):
        return fn.readers.nemo_asr(manifest_filepaths=[str(d / "manifest.json")], read_idxs=True,
                                   read_text=False, read_sample_rate=False, name="Reader", **a)[1]

    return {"file_root": (file_root, _digits), "file_list": (file_list, _first),
            "file_list_nolabel": (file_list_nolabel, _digits), "files": (files, _digits),
            "tfrecord": (tfrecord, _first), "mxnet": (mxnet, _first), "caffe": (caffe, _first),
            "caffe2": (caffe2, _first), "webdataset": (webdataset, _digits),
            "numpy": (numpy_, _first), "tfrecord_multi": (tfrecord_multi, _first),
            "mxnet_multi": (mxnet_multi, _first), "webdataset_multi": (webdataset_multi, _digits), "coco": (coco, _coco_id), "nemo_asr": (nemo_asr, _first)}


def _pipe(case: dict, rank: int, root: Path, checkpoint: Any = None):
    from nvidia.dali import Pipeline

    build, read = reader_builders(root / f"n{case['n']}")[case["fmt"]]
    args = dict(case.get("args", {}))
    R = case.get("shards", 1)
    if R > 1:
        args.update(num_shards=R, shard_id=rank)
    kw = {"checkpoint": checkpoint} if checkpoint is not None else {}
    pipe = Pipeline(batch_size=case["bs"], num_threads=1, device_id=None, seed=case.get("seed", 1234),
                    enable_checkpointing=bool(case.get("ckpt")),
                    prefetch_queue_depth=case.get("prefetch", 1), **kw)
    with pipe:
        pipe.set_outputs(build(args))
    pipe.build()
    return pipe, read


def _batch_ids(out, read) -> list[int]:
    t = out[0]
    return [read(np.asarray(t[i])) for i in range(len(t))]


def _stream(case: dict, root: Path) -> dict:
    R, n, bs = case.get("shards", 1), case["n"], case["bs"]
    nb = math.ceil(3 * math.ceil(n / R) / bs) + 1
    ranks = []
    for r in range(R):
        pipe, read = _pipe(case, r, root)
        meta = {k: int(v) for k, v in pipe.reader_meta("Reader").items()}
        ranks.append({"epoch_size": int(pipe.epoch_size("Reader")), "meta": meta,
                      "batches": [_batch_ids(pipe.run(), read) for _ in range(nb)]})
    return {"ranks": ranks}


def _stream_ckpt(case: dict, root: Path) -> dict:
    """pipe.checkpoint() after `cut` batches; the restored pipeline must go on as the original."""
    R, m = case.get("shards", 1), case["more"]
    ranks = []
    for r in range(R):
        pipe, read = _pipe(case, r, root)
        head = [_batch_ids(pipe.run(), read) for _ in range(case["cut"])]
        cp = pipe.checkpoint()
        cont = [_batch_ids(pipe.run(), read) for _ in range(m)]
        pipe2, _ = _pipe(case, r, root, checkpoint=cp)
        restored = [_batch_ids(pipe2.run(), read) for _ in range(m)]
        ranks.append({"head": head, "cont": cont, "restored": restored, "same": cont == restored})
    return {"ranks": ranks}


def _ndd(case: dict, root: Path) -> dict:
    """Dynamic mode: ndd.readers.File(...).next_epoch(batch_size) per shard, 3 epochs."""
    import nvidia.dali.experimental.dynamic as ndd

    d, n, R = root / f"n{case['n']}", case["n"], case.get("shards", 1)
    names = [str(d / "files" / f"c{i % 3}" / f"s{i:03d}.jpg") for i in range(n)]
    def make(r: int):
        return ndd.readers.File(files=names, labels=list(range(n)), num_shards=R, shard_id=r, seed=3,
                                enable_checkpointing=True, **case.get("args", {}))

    def ids(out) -> list[int]:
        lab = out[1].torch() if hasattr(out[1], "torch") else out[1]
        return np.asarray(lab).reshape(-1).astype(int).tolist()

    ranks = []
    for r in range(R):
        rd = make(r)
        if case.get("cut") is None:
            ranks.append({"epochs": [[ids(o) for o in rd.next_epoch(batch_size=case["bs"])] for _ in range(3)]})
            continue
        # get_state() after an epoch and `cut` batches; the restored reader's stream must go on as
        # the original's (DALI restarts the epoch count there, so compare the batches in order)
        [ids(o) for o in rd.next_epoch(batch_size=case["bs"])]
        it = rd.next_epoch(batch_size=case["bs"])
        for _ in range(case["cut"]):
            next(it)
        state = rd.get_state()
        cont = [ids(o) for o in it] + [ids(o) for _ in range(2) for o in rd.next_epoch(batch_size=case["bs"])]
        rd2 = make(r)
        rd2.set_state(state)
        again = [ids(o) for _ in range(3) for o in rd2.next_epoch(batch_size=case["bs"])]
        ranks.append({"same": again[:len(cont)] == cont})
    return {"ranks": ranks}


def _external(case: dict, root: Path) -> dict:
    """An external source of `n` samples (per sample, or in batches whose last one is short) under
    DALIGenericIterator with size=-1 or size=n: epochs end where the source runs out."""
    from nvidia.dali import fn, pipeline_def
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    n, bs, o = case["n"], case["bs"], case["it"]

    def per_sample(si):
        if si.idx_in_epoch >= n:
            raise StopIteration
        return np.array([si.idx_in_epoch], np.int32)

    def batches():
        for k in range(0, n, bs):
            yield [np.array([i], np.int32) for i in range(k, min(k + bs, n))]

    @pipeline_def(batch_size=bs, num_threads=1, device_id=None, prefetch_queue_depth=1)
    def p():
        if case["source"] == "sample":
            return fn.external_source(per_sample, batch=False)
        return fn.external_source(batches, cycle="raise")

    it = DALIGenericIterator([p()], ["id"], size=o["size"], auto_reset=o.get("auto_reset", False),
                             last_batch_policy=getattr(LastBatchPolicy, o["policy"]))
    return {"ranks": [{"len": len(it), "epochs": _epochs(it, _first, 3, o.get("auto_reset", False))}]}


def _iterator(case: dict, pipe, rank: int):
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    o = case["it"]
    auto = o.get("auto_reset", False)
    kw: dict[str, Any] = {"last_batch_policy": getattr(LastBatchPolicy, o["policy"]),
                          "auto_reset": False if auto == "loop" else auto,
                          "last_batch_padded": o.get("padded", False),
                          "prepare_first_batch": o.get("prepare", True)}
    if o.get("mode", "reader_name") == "reader_name":
        kw["reader_name"] = "Reader"
    else:
        kw["size"] = o["size"]
    return DALIGenericIterator([pipe], ["id"], **kw)


def _resets(auto: Any) -> bool:
    return auto is True or auto == "yes"


def _epochs(it, read, epochs: int, auto: Any, first_cut: int | None = None) -> list:
    """Ids per epoch (a list of batches, or the error's type); `first_cut` stops the first epoch
    after that many batches (the caller then resets or checkpoints)."""
    out: list = []
    for e in range(epochs):
        got: list = [f"len {len(it)}"]  # DALI's len() may change per epoch (FILL's carry-over)
        try:
            for k, data in enumerate(it):
                got.append([read(x) for x in data[0]["id"].numpy()])  # type: ignore[arg-type]
                if e == 0 and first_cut is not None and k + 1 >= first_cut:
                    break
        except Exception as ex:  # noqa: BLE001 - recorded and compared as such
            out.append(f"error: {type(ex).__name__}")
            return out
        out.append(got)
        if not _resets(auto) and not (e == 0 and first_cut is not None) and auto != "loop":
            it.reset()  # auto="loop": no reset() at all, the next for loop's iter() does it
    return out


def _len_loop(it, read, epochs: int) -> list:
    """`for _ in range(len(it)): next(it)`, then reset(): a loop that trusts len()."""
    out: list = []
    for _ in range(epochs):
        try:
            out.append([[read(x) for x in next(it)[0]["id"].numpy()] for _ in range(len(it))])
        except Exception as ex:  # noqa: BLE001
            out.append(f"error: {type(ex).__name__}")
            return out
        it.reset()
    return out


def _multi(case: dict, root: Path) -> dict:
    """One iterator over every shard's pipeline (DALI's one-process multi-GPU form)."""
    from nvidia.dali.plugin.pytorch import DALIGenericIterator, LastBatchPolicy

    R, o = case["shards"], case["it"]
    made = [_pipe(case, r, root) for r in range(R)]
    read = made[0][1]
    kw = {"last_batch_policy": getattr(LastBatchPolicy, o["policy"]), "reader_name": "Reader"}
    it = DALIGenericIterator([p for p, _ in made], ["id"], **kw)

    def epochs(it, count: int, cut: int | None = None) -> list:
        out: list = []
        for e in range(count):
            got = []
            for k, data in enumerate(it):
                got.append([[read(x) for x in d["id"].numpy()] for d in data])
                if e == 0 and cut is not None and k + 1 >= cut:
                    break
            out.append(got)
            if cut is None or e > 0:
                it.reset()
        return out

    if o.get("cut") is None:
        return {"ranks": [{"len": len(it), "epochs": epochs(it, 3)}]}
    head = epochs(it, 1, o["cut"])  # then checkpoint every pipeline and restore them all
    cps = it.checkpoints()
    rest = epochs(it, 2)
    it2 = DALIGenericIterator([_pipe(case, r, root, checkpoint=cps[r])[0] for r in range(R)], ["id"], **kw)
    return {"ranks": [{"len": len(it), "head": head, "rest": rest, "restored": epochs(it2, 2)}]}


def _iter_case(case: dict, root: Path) -> dict:
    R, o = case.get("shards", 1), case["it"]
    if o.get("multi"):
        return _multi(case, root)
    ranks = []
    for r in range(R):
        try:
            pipe, read = _pipe(case, r, root)
            it = _iterator(case, pipe, r)
        except Exception as ex:  # noqa: BLE001
            ranks.append({"error": type(ex).__name__})
            continue
        rec: dict[str, Any] = {"len": len(it)}
        cut = o.get("cut")
        if o.get("loop") == "len":
            rec["epochs"] = _len_loop(it, read, 3)
        elif cut is None:
            rec["epochs"] = _epochs(it, read, o.get("epochs", 3), o.get("auto_reset", False))
        elif o.get("then") == "reset":
            rec["head"] = _epochs(it, read, 1, o.get("auto_reset", False), first_cut=cut)
            it.reset()
            rec["epochs"] = _epochs(it, read, 2, o.get("auto_reset", False))
        else:  # checkpoint after `cut` batches (or at the epoch's end, cut=-1), then restore
            rec.update(_ckpt(case, it, pipe, read, r, root, cut))
        ranks.append(rec)
    return {"ranks": ranks}


def _ckpt(case: dict, it, pipe, read, rank: int, root: Path, cut: int) -> dict:
    auto = case["it"].get("auto_reset", False)
    if cut < 0:
        head = _epochs(it, read, 1, True)  # the whole first epoch, no reset after it
    else:
        head = _epochs(it, read, 1, auto, first_cut=cut)
    cps = it.checkpoints()
    rest = _epochs(it, read, 2, auto)
    try:
        pipe2, _ = _pipe(case, rank, root, checkpoint=cps[0])
        it2 = _iterator(case, pipe2, rank)
        restored = _epochs(it2, read, 2, auto)
    except Exception as ex:  # noqa: BLE001
        restored = f"error: {type(ex).__name__}"
    return {"head": head, "rest": rest, "restored": restored}


def run(case: dict, root: Path) -> dict:
    try:
        if case["kind"] == "stream":
            return _stream(case, root)
        if case["kind"] == "stream_ckpt":
            return _stream_ckpt(case, root)
        if case["kind"] == "ndd":
            return _ndd(case, root)
        if case["kind"] == "external":
            return _external(case, root)
        return _iter_case(case, root)
    except Exception as ex:  # noqa: BLE001 - a case that fails is a result to compare
        return {"error": f"{type(ex).__name__}: {str(ex)[:120]}"}


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--shim":
        from conformance import shim

        shim.install()
        args = args[1:]
    root = Path(args[0])
    for line in sys.stdin:
        if line.strip():
            print(json.dumps(run(json.loads(line), root)), flush=True)


if __name__ == "__main__":
    main()
