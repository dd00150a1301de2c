"""Which samples each epoch hands out: readers and DALIGenericIterator under DALI 2.4 and torch_dali.

    python -m conformance.epochs [--dali-python PATH] [--only SUBSTR] [--out results.json]

Writes tiny data sets (conformance/epochs_data.py: sample i carries id i in every reader format),
runs the same cases under real DALI (`--dali-python`, default ../dali-venv/bin/python) and under
torch_dali through the import shim (conformance/epochs_worker.py), and compares per case:

* `stream` cases: each shard's pipeline run() batch by batch over 3 epochs, plus
  `pipe.epoch_size()` and `pipe.reader_meta()`. Formats: readers.file (file_root, file_list,
  files), tfrecord, mxnet, caffe, caffe2, webdataset, numpy, coco, nemo_asr; sizes 10 / 17 / 33,
  batch 4 / 8; 1-4 shards; pad_last_batch, stick_to_shard, random_shuffle, shuffle_after_epoch.
* `iter` cases: one DALIGenericIterator per shard (a rank), 3 epochs: ids per batch after the
  policy's filling or trimming and len(); FILL / DROP / PARTIAL, reader_name= or size=,
  auto_reset True/False/"yes"/"no", last_batch_padded, prepare_first_batch; `reset()` after the
  first batch; checkpoints (enable_checkpointing) taken after 1 or 2 batches or at an epoch's end
  and restored into a fresh pipeline and iterator: the restored run must equal the original's rest.

Unshuffled cases must match exactly. With random_shuffle the order differs on purpose
(conformance/on_purpose.md), as do sharded shuffled epochs (torch_dali: DistributedSampler's
split); there the check is len(), epoch_size and, for one shard, each epoch's multiset, and for
torch_dali alone that the ranks together read every sample in every epoch.

Results (2026-12-05, DALI 2.4 CPU, this tree): see the "epochs" section of conformance/README.md.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from . import epochs_data

HERE = Path(__file__).resolve().parent
FORMATS = ("file_root", "file_list", "files", "tfrecord", "mxnet", "caffe", "caffe2", "webdataset",
           "numpy", "coco", "nemo_asr", "tfrecord_multi", "mxnet_multi", "webdataset_multi")
READER_VARIANTS = ({}, {"pad_last_batch": True}, {"stick_to_shard": True},
                   {"pad_last_batch": True, "stick_to_shard": True}, {"random_shuffle": True},
                   {"random_shuffle": True, "pad_last_batch": True},
                   {"random_shuffle": True, "stick_to_shard": True})


def stream_cases() -> list[dict]:
    out = []
    for fmt, n, R, args in itertools.product(FORMATS, (10, 17), (1, 2, 3, 4), READER_VARIANTS):
        out.append({"kind": "stream", "fmt": fmt, "n": n, "bs": 4, "shards": R, "args": args})
    for n, bs, R, args in itertools.product((10, 17, 33), (4, 8), (1, 3), READER_VARIANTS[:4]):
        out.append({"kind": "stream", "fmt": "file_list", "n": n, "bs": bs, "shards": R, "args": args})
    for fmt, R in itertools.product(("file_list", "numpy"), (1, 3)):
        out.append({"kind": "stream", "fmt": fmt, "n": 17, "bs": 4, "shards": R,
                    "args": {"shuffle_after_epoch": True}})
    for fmt, fill in itertools.product(("file_list", "webdataset", "tfrecord"), (1, 3, 100)):
        out.append({"kind": "stream", "fmt": fmt, "n": 17, "bs": 4, "shards": 1,
                    "args": {"random_shuffle": True, "initial_fill": fill}})
    return out


def ckpt_cases() -> list[dict]:
    out = []
    for fmt, args, R, cut in itertools.product(FORMATS, ({}, {"pad_last_batch": True}, {"random_shuffle": True},
                                                         {"random_shuffle": True, "pad_last_batch": True}),
                                               (1, 3), (1, 3, 5)):
        out.append({"kind": "stream_ckpt", "fmt": fmt, "n": 10, "bs": 4, "shards": R, "args": args,
                    "ckpt": True, "cut": cut, "more": 6})
    for fmt, R in itertools.product(("file_list", "numpy", "tfrecord"), (1, 3)):
        out.append({"kind": "stream_ckpt", "fmt": fmt, "n": 17, "bs": 4, "shards": R, "ckpt": True, "cut": 5,
                    "more": 8, "args": {"shuffle_after_epoch": True}})
    for fmt, depth, args in itertools.product(("file_list", "tfrecord", "webdataset"), (2, 3),
                                              ({}, {"random_shuffle": True})):
        out.append({"kind": "stream_ckpt", "fmt": fmt, "n": 10, "bs": 4, "shards": 1, "ckpt": True, "cut": 3,
                    "more": 6, "args": args, "prefetch": depth})
    for fmt in ("webdataset", "file_list"):
        out.append({"kind": "stream_ckpt", "fmt": fmt, "n": 17, "bs": 4, "shards": 1, "ckpt": True, "cut": 2,
                    "more": 8, "args": {"random_shuffle": True, "initial_fill": 3}})
    return out


def ndd_cases() -> list[dict]:
    out = []
    for n, R, bs, args in itertools.product((10, 17), (1, 2, 3), (None, 4), READER_VARIANTS):
        out.append({"kind": "ndd", "fmt": "files", "n": n, "bs": bs, "shards": R, "args": args})
    for n, R, bs, args in itertools.product((10, 17), (1, 3), (None, 4), READER_VARIANTS[:5]):
        out.append({"kind": "ndd", "fmt": "files", "n": n, "bs": bs, "shards": R, "args": args, "cut": 1})
    return out


def external_cases() -> list[dict]:
    out = []
    for n, source, policy, auto, size in itertools.product((8, 10), ("sample", "batch"), ("FILL", "DROP", "PARTIAL"),
                                                           (False, True), (-1, "n")):
        it = {"policy": policy, "auto_reset": auto, "size": n if size == "n" else -1}
        out.append({"kind": "external", "fmt": "external", "source": source, "n": n, "bs": 4, "it": it})
    return out


def iter_cases() -> list[dict]:
    out = []
    base = itertools.product(("file_list", "tfrecord"), (10, 17), (4, 8), (1, 2, 3, 4),
                             ({}, {"pad_last_batch": True}, {"stick_to_shard": True},
                              {"pad_last_batch": True, "stick_to_shard": True},
                              {"random_shuffle": True}, {"random_shuffle": True, "pad_last_batch": True}),
                             ("FILL", "DROP", "PARTIAL"), ("reader_name", "size"))
    for fmt, n, bs, R, args, policy, mode in base:
        it = {"policy": policy, "mode": mode, "size": n // R,  # DALI refuses reader_name + padded
              "padded": bool(args.get("pad_last_batch")) and mode == "size"}
        out.append({"kind": "iter", "fmt": fmt, "n": n, "bs": bs, "shards": R, "args": args, "it": it})
    for n, R, policy, auto, prep in itertools.product((10, 17), (1, 3), ("FILL", "DROP", "PARTIAL"),
                                                      (False, True, "yes", "no", "loop"), (True, False)):
        it = {"policy": policy, "auto_reset": auto, "prepare": prep}  # "loop": no reset() calls
        out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": 4, "shards": R, "it": it})
    for n, R, policy, pad, then in itertools.product((10, 17), (1, 3), ("FILL", "DROP", "PARTIAL"),
                                                     (False, True), ("reset", 1, 2, -1)):
        for auto, prep in ((False, True), (True, True), (False, False)):
            it = {"policy": policy, "auto_reset": auto, "padded": pad, "prepare": prep,
                  "cut": 1 if then == "reset" else then, "then": "reset" if then == "reset" else "ckpt"}
            out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": 4, "shards": R,
                        "args": {"pad_last_batch": pad}, "it": it, "ckpt": then != "reset"})
    for n, bs, R, pad, policy in itertools.product((10, 17), (3, 4), (1, 2, 3), (False, True),
                                                   ("FILL", "DROP", "PARTIAL")):
        it = {"policy": policy, "loop": "len"}
        out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": bs, "shards": R,
                    "args": {"pad_last_batch": pad}, "it": it})
        it = {"policy": policy, "multi": True}
        out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": bs, "shards": R,
                    "args": {"pad_last_batch": pad}, "it": it})
        for cut in (1, 2):
            out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": bs, "shards": R, "ckpt": True,
                        "args": {"pad_last_batch": pad}, "it": dict(it, cut=cut)})
    for n, R, policy, pad in itertools.product((10, 17), (1, 3), ("FILL", "DROP", "PARTIAL"), (False, True)):
        out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": 4, "shards": R, "it": {"policy": policy},
                    "args": {"shuffle_after_epoch": True, "pad_last_batch": pad}})
    for n, bs, R, policy, pad, auto in itertools.product((7, 10, 13, 17), (3, 4), (2, 3, 4), ("FILL", "DROP", "PARTIAL"),
                                                         (False, True), (False, True)):
        if n >= R:  # 9 epochs: shards rotate through every position more than twice
            out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": bs, "shards": R, "args": {"pad_last_batch": pad},
                        "it": {"policy": policy, "epochs": 9, "auto_reset": auto}})
    for n, R, policy, then, pad in itertools.product((10, 17), (1, 3), ("FILL", "DROP", "PARTIAL"), (1, 2, -1),
                                                     (False, True)):
        it = {"policy": policy, "cut": then, "then": "ckpt"}
        out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": 4, "shards": R, "ckpt": True, "it": it,
                    "args": {"random_shuffle": True, "pad_last_batch": pad}})
    for n, R, policy, then, auto in itertools.product((10, 17), (1, 3), ("FILL", "DROP", "PARTIAL"), (1, 2, -1),
                                                      (False, True)):
        it = {"policy": policy, "cut": then, "then": "ckpt", "mode": "size", "size": n // R, "auto_reset": auto}
        out.append({"kind": "iter", "fmt": "file_list", "n": n, "bs": 4, "shards": R, "ckpt": True, "it": it,
                    "args": {}})
    for policy, then, depth in itertools.product(("FILL", "PARTIAL"), (1, -1), (2, 3)):
        it = {"policy": policy, "cut": then, "then": "ckpt"}
        out.append({"kind": "iter", "fmt": "file_list", "n": 10, "bs": 4, "shards": 2, "ckpt": True, "it": it,
                    "args": {}, "prefetch": depth})
    for n, R, policy, shuffle in itertools.product((10, 17, 33), (2, 3), ("FILL", "PARTIAL"), (False, True)):
        out.append({"kind": "iter", "fmt": "webdataset_multi", "n": n, "bs": 4, "shards": R, "it": {"policy": policy},
                    "args": {"split_by_file": True, "pad_last_batch": True, "random_shuffle": shuffle}})
    for fmt, then in itertools.product(FORMATS, (1, -1)):
        it = {"policy": "PARTIAL", "cut": then, "then": "ckpt"}
        out.append({"kind": "iter", "fmt": fmt, "n": 10, "bs": 4, "shards": 2, "it": it, "ckpt": True})
    return out


def _shuffled(case: dict) -> bool:
    a = case.get("args", {})
    return bool(a.get("random_shuffle") or a.get("shuffle_after_epoch"))


def _ms(epochs: list) -> list:
    """Each epoch's multiset of ids (an error string as it is)."""
    return [sorted(Counter(i for b in e if isinstance(b, list) for i in b).items()) if isinstance(e, list) else e
            for e in epochs]


def _sizes(epochs: list) -> list:
    return [[len(b) if isinstance(b, list) else b for b in e] if isinstance(e, list) else e for e in epochs]


def even_split(case: dict) -> bool:
    """torch_dali's sharded random_shuffle: DistributedSampler's split, ceil(n/R) on every rank
    (on_purpose.md): sizes, len() and DROP's batches follow it, so only its promise is checked."""
    a = case.get("args", {})
    return (bool(a.get("random_shuffle")) and not a.get("stick_to_shard") and case.get("shards", 1) > 1
            and not case["fmt"].startswith("webdataset"))


def ours_only(case: dict) -> bool:
    """torch_dali's own arguments (webdataset's split_by_file): DALI refuses them; promises only."""
    return "split_by_file" in case.get("args", {})


def dali_loses_epoch(case: dict) -> bool:
    """DALI 2.4's restored iterator with prepare_first_batch=False gives an empty epoch first after
    a checkpoint at an epoch's end; torch_dali goes on as the original (on_purpose.md)."""
    return case["kind"] == "iter" and case["it"].get("then") == "ckpt" and case["it"].get("prepare") is False


def _rank(case: dict, rank: dict) -> dict:
    if "error" in rank:
        return {"error": True}  # both sides refusing is agreement, whatever the exception's type
    if not _shuffled(case):
        return rank
    r = {k: v for k, v in rank.items() if k in ("epoch_size", "meta", "len", "same")}
    if case["kind"] == "stream_ckpt":  # the restored pipeline must go on as the original did
        r["sizes"] = [len(b) for b in rank["cont"]]
    elif case.get("shards", 1) == 1:  # the order differs on purpose; the counts must not
        r.update({k: _sizes(v) for k, v in rank.items() if k in ("epochs", "head", "rest", "restored")})
        if "batches" in rank:
            r["batch_sizes"] = [len(b) for b in rank["batches"]]
        if (case["kind"] == "iter" and case["it"].get("policy") == "PARTIAL" and "epochs" in rank
                and case["args"].get("pad_last_batch")):  # unpadded, PARTIAL cuts what the order decides
            r["multisets"] = _ms(rank["epochs"])
    return r


def _errors_alike(x: Any) -> Any:
    """An epoch that raised matches one that raised, whatever the exception's type is called."""
    if isinstance(x, str) and x.startswith("error: "):
        return "error"
    if isinstance(x, list):
        return [_errors_alike(v) for v in x]
    if isinstance(x, dict):
        return {k: _errors_alike(v) for k, v in x.items()}
    return x


def _normalize(case: dict, res: dict) -> dict:
    """What must match: everything unshuffled; counts and (PARTIAL, one shard) multisets shuffled."""
    if "error" in res:
        return {"error": True}
    return _errors_alike({"ranks": [_rank(case, r) for r in res["ranks"]]})


def covers_all(case: dict, res: dict) -> list[str]:
    """torch_dali's promise when shuffled (PARTIAL, FILL): each epoch the ranks read every sample."""
    if case["kind"] == "ndd":
        if not _shuffled(case) or "error" in res or not (case["args"].get("pad_last_batch") or case["bs"] is None):
            return []
    elif (case["kind"] != "iter" or not (_shuffled(case) or ours_only(case)) or "error" in res
            or case["it"]["policy"] == "DROP"
            or not case.get("args", {}).get("pad_last_batch") or case["it"].get("mode") == "size"):
        return []
    eps = [r.get("epochs") for r in res["ranks"]]
    if any(not isinstance(e, list) for e in eps):
        return []
    problems = []
    for e in range(min(len(x) for x in eps)):
        seen = {i for x in eps if isinstance(x[e], list) for b in x[e] if isinstance(b, list) for i in b}
        partial = case["kind"] == "ndd" or case["it"]["policy"] == "PARTIAL"
        if seen != set(range(case["n"])) and (partial or e == 0):
            problems.append(f"epoch {e}: {case['n'] - len(seen)} samples missing")
    return problems


def restores_alike(res: dict) -> bool:
    """A restored pipeline or iterator hands out what the original went on to hand out."""
    def ids(epochs: Any) -> Any:  # len() before a loop may be read before or after the reset
        return [[b for b in e if isinstance(b, list)] if isinstance(e, list) else e for e in epochs] \
            if isinstance(epochs, list) else epochs

    ranks = res.get("ranks", [])
    return all(r.get("same", True) and ("rest" not in r or ids(r["rest"]) == ids(r["restored"])) for r in ranks)


def _run_side(python: str, shim: bool, root: Path, cases: list[dict]) -> list[dict]:
    env = dict(os.environ, PYTHONPATH=str(HERE.parent))
    cmd = [python, "-m", "conformance.epochs_worker"] + (["--shim"] if shim else []) + [str(root)]
    p = subprocess.run(cmd, input="".join(json.dumps(c) + "\n" for c in cases), text=True,
                       capture_output=True, env=env, cwd=str(HERE.parent))
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    if len(lines) != len(cases):
        sys.exit(f"{python}: {len(lines)} of {len(cases)} results\n{p.stderr[-3000:]}")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dali-python", default=str(HERE.parent.parent / "dali-venv/bin/python"))
    ap.add_argument("--ours-python", default=sys.executable)
    ap.add_argument("--only", default="", help="run the cases whose JSON contains this text")
    ap.add_argument("--out", default="", help="write every case with both results here")
    a = ap.parse_args()
    cases = [c for c in stream_cases() + ckpt_cases() + ndd_cases() + external_cases() + iter_cases()
             if a.only in json.dumps(c)]
    root = Path(tempfile.mkdtemp(prefix="epochs-"))
    for n in sorted({c["n"] for c in cases if c["kind"] != "external"}):
        epochs_data.make(root, n)
    dali = _run_side(a.dali_python, False, root, cases)
    ours = _run_side(a.ours_python, True, root, cases)
    diff, both_err, promise, split = [], 0, [], 0
    for c, d, t in zip(cases, dali, ours):
        if "error" in d and "error" in t:
            both_err += 1
        promise += [(c, p) for p in covers_all(c, t)]
        if not restores_alike(t):
            promise.append((c, "the restored run differs from the original's"))
        if even_split(c) or dali_loses_epoch(c) or ours_only(c):
            split += 1
        elif _normalize(c, d) != _normalize(c, t):
            diff.append((c, d, t))
    print(f"{len(cases)} cases: {len(cases) - len(diff) - split} agree ({both_err} errors on both sides), "
          f"{len(diff)} differ, {split} cases apart on purpose checked for torch_dali's promises only; "
          f"torch_dali's promises (every sample when padded, restores alike) broken in {len(promise)}")
    for c, d, t in diff[:40]:
        print("DIFF", json.dumps(c), "\n  dali", json.dumps(d)[:600], "\n  ours", json.dumps(t)[:600])
    for c, p in promise[:20]:
        print("MISSING", json.dumps(c), p)
    if a.out:
        Path(a.out).write_text(json.dumps([{"case": c, "dali": d, "ours": t}
                                           for c, d, t in zip(cases, dali, ours)]))


if __name__ == "__main__":
    main()
