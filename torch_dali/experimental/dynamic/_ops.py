"""The dynamic mode's ops, generated from torch_dali's schemas: a function per op
(`ndd.resize`, `ndd.decoders.image`, `ndd.random.uniform`...) and a class per reader
(`ndd.readers.File`), each placed at its functional path under the package."""
from __future__ import annotations

import json
import sys
from types import ModuleType
from typing import Any, Callable, Iterator

from ...ops import legacy as _legacy
from ...ops._registry import all_schemas, lookup
from ...tensor_list import TensorList
from . import _invoke
from ._op_classes import Operator, build as _build_classes
from . import random as _random
from ._data import Tensor

# not ops applied to data: graph internals, sources, Python callbacks, arithmetic (operators)
_SKIP = {"arithmetic", "external_source", "python_function", "dl_tensor_python_function",
         "torch_python_function", "readers.dataset"}

_all_functions: list[Callable[..., Any]] = []

# deprecated names DALI 2.4's dynamic mode still has (function and class), each the current op
_LEGACY = {"experimental.decoders.image": "decoders.image",
           "experimental.decoders.image_crop": "decoders.image_crop",
           "experimental.decoders.image_random_crop": "decoders.image_random_crop",
           "experimental.decoders.image_slice": "decoders.image_slice",
           "experimental.peek_image_shape": "peek_image_shape"}


def _function(schema: Any) -> Callable[..., Any]:
    name = schema.name
    if schema.random:
        def call(*inputs: Any, rng: Any = None, seed: int | None = None, **kwargs: Any) -> Any:
            if name == "batch_permutation" and kwargs.get("batch_size") is None:
                # as DALI 2.4's function (its class gives one sample): no input to size the batch
                raise ValueError("ndd.batch_permutation: give batch_size=, the number of samples to "
                                 "permute (batch_permutation has no input to take it from)")
            return _invoke.invoke(name, inputs, kwargs, draw=_random.draw_for_call(rng, seed))
    else:
        def call(*inputs: Any, **kwargs: Any) -> Any:
            return _invoke.invoke(name, inputs, kwargs)
    call.__name__ = name.split(".")[-1]
    call.__qualname__ = name
    call.__doc__ = (f"{schema.doc}\n\nDynamic-mode `{name}`: inputs are ndd.Tensor / ndd.Batch (or "
                    "tensor-likes); a Batch input or argument gives a Batch. `device=` picks where it runs.")
    return call


def _tensor_value(t: Tensor) -> Any:
    v = t.torch().cpu()
    return v.item() if v.dim() == 0 else v.tolist()


class Reader(Operator):
    """A reader as an object (`ndd.readers.File(file_root=...)`), iterated by epochs:
    `for jpegs, labels in reader.next_epoch(batch_size=8)` gives Batches (Tensors with
    `batch_size=None`). Each epoch reads the reader's shard once (the next shard in the next epoch
    unless `stick_to_shard`); its last batch may be smaller."""

    _schema_name = ""

    def __init__(self, batch_size: int | None = None, name: str | None = None, device: Any = "cpu",
                 shard_id: int = 0, num_shards: int = 1, stick_to_shard: bool = False,
                 enable_checkpointing: bool = False, seed: int | None = None, **kwargs: Any) -> None:
        # DALI 2.4 names the first argument max_batch_size: next_epoch's default batch size and its limit
        max_bs = kwargs.pop("max_batch_size", None)
        batch_size = batch_size if batch_size is not None else max_bs
        if num_shards < 1:
            raise ValueError(f"The number of shards must be a positive integer, got {num_shards}")
        if not 0 <= shard_id < num_shards:
            raise ValueError(f"shard_id={shard_id} is out of range [0, {num_shards - 1}]")
        self._batch_size = batch_size
        self._shard_id = shard_id  # the shard whose size the next epoch counts (rotates)
        self._stream_shard = shard_id  # the shard the pipeline's stream starts at (fixed)
        self._num_shards = num_shards
        self._stick_to_shard = stick_to_shard
        self._checkpointing = bool(enable_checkpointing)  # get_state() needs it, as in DALI 2.4
        # Tensors given for arguments (`roi_start=ndd.tensor(3)`) are taken as their values, as
        # DALI 2.4's readers take them (a 0-D one as a scalar)
        self._kwargs = {k: _tensor_value(v) if isinstance(v, Tensor) else v for k, v in kwargs.items()}
        self._seed = _random.draw_for_call(None, None) & 0x7FFFFFFF if seed is None else int(seed)
        self._pipe: Any = None
        self._pipe_bs = 0
        self._batched = False
        self._queue: list[list[tuple[Any, Any, str]]] = []
        self._named = False
        self._keys: list[str] = []
        self._api: str | None = None
        self._capture: bool | None = None  # whether the reader's epochs are in capture mode
        self._consumed = 0  # samples taken from the stream so far
        self._epoch_left = 0  # batches of the current epoch not yet given
        self._resume: dict[str, Any] | None = None  # a state set before the first iteration
        self._resume_left = 0  # batches left in the restored state's epoch
        if str(device) != "cpu":
            raise ValueError(f"ndd readers run on the CPU, got device={device!r}")

    def _pipeline(self, batch_size: int) -> Any:
        """The reader's pipeline (made once, at the first epoch's batch size; 1 for samples): its
        samples are one stream across epochs, as in a pipeline (the batch size matters where the
        reader pads a shard's last batch)."""
        if self._pipe is not None:
            return self._pipe
        from ... import fn as _fn
        from ...graph.pipeline_def import pipeline_def

        target: Any = _fn
        for part in self._schema_name.split("."):
            target = getattr(target, part)
        kwargs = dict(self._kwargs, shard_id=self._stream_shard, num_shards=self._num_shards,
                      stick_to_shard=self._stick_to_shard)

        keys: list[str] = []

        @pipeline_def(batch_size=batch_size, num_threads=1, device_id=None, seed=self._seed,
                      exec_async=False, exec_pipelined=False, prefetch_queue_depth=1)
        def one_reader() -> Any:
            out = target(name="reader", **kwargs)
            if isinstance(out, dict):  # named outputs (readers.tfrecord): a pipeline returns their values
                keys[:] = list(out)
                return tuple(out.values())
            return out

        pipe = one_reader()
        pipe.build()
        self._pipe, self._pipe_bs, self._keys = pipe, batch_size, keys
        if self._resume is not None:  # a restored state: the stream goes on where it stopped
            self._skip(int(self._resume["consumed"]))
        return pipe

    def _fill(self) -> None:
        """One more batch of the stream into the queue."""
        outs = self._pipe.run()
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        self._named = bool(self._keys)
        items = list(zip(self._keys, outs)) if self._named else list(enumerate(outs))
        for k in range(len(items[0][1])):
            self._queue.append([(key, tl.samples[k], tl.layout()) for key, tl in items])

    def _take(self, n: int) -> list[list[tuple[Any, Any, str]]]:
        """The next `n` samples of the stream: per sample, (output key, tensor, layout) per output."""
        while len(self._queue) < n:
            self._fill()
        taken = self._queue[:n]
        del self._queue[:n]
        self._consumed += n
        return taken

    def _skip(self, n: int) -> None:
        """Drops the next `n` samples of the stream, holding one batch at a time: taking them all
        first held every sample read since the state's start (2.4 GB to resume 20,000 samples of
        100 kB), and `consumed` comes from a checkpoint file."""
        while n > len(self._queue):
            n -= len(self._queue)
            self._consumed += len(self._queue)
            self._queue.clear()
            self._fill()
        del self._queue[:n]
        self._consumed += n

    def infer_num_outputs(self) -> int:
        """How many outputs the reader gives (DALI 2.4's torchdata Reader node asks before reading)."""
        from ...ops._registry import lookup
        return lookup(self._schema_name).outputs_for(dict(self._kwargs))

    _infer_num_outputs = infer_num_outputs  # DALI 2.4's name for it

    def get_metadata(self, batch_size: int | None = None) -> dict[str, Any]:
        """The reader's metadata (epoch_size, epoch_size_padded, number_of_shards, shard_id,
        pad_last_batch, stick_to_shard); `batch_size`: the one to read with, if not read yet."""
        bs = self._pipe_bs or int(batch_size if batch_size is not None else self._batch_size or 1)
        meta = dict(self._pipeline(bs).reader_meta("reader"))
        meta["shard_id"] = self._shard_id
        return meta

    def enable_checkpointing(self) -> None:
        """Switches get_state() on, as `enable_checkpointing=True` does (Checkpoint.register and
        set_state call it); only before the first iteration, and never in capture mode (DALI 2.4's
        rules)."""
        if self._checkpointing:
            return
        if self._capture:
            raise NotImplementedError(f"{type(self).__name__}: a reader in capture mode cannot be checkpointed")
        if self._pipe is not None:
            raise RuntimeError(f"{type(self).__name__}: checkpointing can only be switched on before the first "
                               "iteration; make the reader with enable_checkpointing=True")
        self._checkpointing = True

    _enable_checkpointing = enable_checkpointing  # DALI's name for it

    def get_state(self, *, cuda_stream: Any = None) -> "ReaderState":
        """Where the reader is (its stream position, shard and epoch progress): give it to
        `set_state` of a new reader made with the same arguments to go on from here."""
        if self._pipe is None:
            raise RuntimeError(f"{type(self).__name__}.get_state: the reader has no state before its first "
                               "iteration (call next_epoch() or the reader first)")
        if not self._checkpointing:
            raise RuntimeError(f"{type(self).__name__}.get_state: the reader was made without checkpointing "
                               "(give it enable_checkpointing=True, or register it with a Checkpoint first)")
        return ReaderState({"seed": self._seed, "shard_id": self._shard_id, "stream_shard": self._stream_shard,
                            "consumed": self._consumed,
                            "batch_size": self._pipe_bs, "batched": self._batched, "api": self._api,
                            "epoch_left": self._epoch_left})

    def set_state(self, state: Any) -> None:
        """Makes this new reader go on from `state` (a ReaderState or its string); only before
        the reader's first iteration."""
        if isinstance(state, ReaderState):
            values = dict(state.values)
        elif isinstance(state, str):
            values = ReaderState.parse(state).values
        else:
            raise TypeError(f"{type(self).__name__}.set_state: expected a ReaderState or its string form, "
                            f"got {type(state).__name__}")
        if self._pipe is not None:
            raise RuntimeError(f"{type(self).__name__}.set_state: a state can only be set before the first "
                               "iteration, not after iteration has begun (make a new reader)")
        consumed = values["consumed"]
        self.enable_checkpointing()
        if not isinstance(consumed, int) or isinstance(consumed, bool) or consumed < 0:
            raise ValueError(f"{type(self).__name__}.set_state: `consumed` must be a non-negative integer, "
                             f"got {str(consumed)[:40]!r}")
        self._seed = int(values["seed"])
        self._shard_id = int(values["shard_id"])
        # `consumed` counts from the stream's start, which is at the reader's first shard, not at
        # the one the next epoch counts (states without it: as before)
        self._stream_shard = int(values.get("stream_shard", self._shard_id))
        self._resume = values
        self._pipeline(int(values["batch_size"]))
        self._batched = bool(values["batched"])
        self._api = values.get("api")
        self._resume_left = int(values["epoch_left"])

    def _use(self, api: str) -> None:
        """As in DALI 2.4, one reader is either called (`reader()`) or iterated by epochs, not both."""
        if self._api not in (None, api):
            raise RuntimeError(f"{type(self).__name__}: a reader is either called (reader()) or iterated with "
                               "next_epoch(), not both (as in DALI); make another reader")
        self._api = api

    def __call__(self, *, batch_size: int | None = None) -> Any:
        """The stream's next sample (a tuple of Tensors, a dict for named outputs), or its next
        `batch_size` samples as Batches. The stream runs across epochs, as a pipeline's reader does."""
        self._use("call")
        bs = int(batch_size) if batch_size is not None else 1
        if self._pipe is not None and bs != self._pipe_bs:
            raise ValueError(f"{type(self).__name__}(): batch_size={batch_size} differs from the reader's earlier "
                             "calls (as in DALI 2.4, a reader keeps one batch size; make a new reader)")
        self._pipeline(bs)
        samples = self._take(bs)
        vals = []
        for j, (key, _, layout) in enumerate(samples[0]):
            tl = TensorList([smp[j][1] for smp in samples], layout)
            vals.append((key, _invoke.from_tensor_list(tl, batch_size is not None)))
        return _shape_outputs(vals, self._named)

    def next_epoch(self, batch_size: int | None = None, ctx: Any = None, capture: bool = False) -> Iterator[Any]:
        """The next epoch of the reader's shard: tuples of Batches of `batch_size` samples (a dict for
        readers with named outputs; a 1-tuple for one output, as in DALI), or of Tensors, one sample at a time,
        when `batch_size` is None. As in DALI, batches are always full: the last one of an epoch
        continues into the next epoch's samples, which then start where it stopped.
        `capture=True` (DALI 2.4's capture mode) keeps its rules but runs the loop's ops as they come
        (the results are the same; DALI replays them as a pipeline): it needs a batch size, and a
        reader keeps the mode of its first epoch."""
        if batch_size is None:
            batch_size = self._batch_size
        if capture:
            if batch_size is None:
                raise ValueError(f"{type(self).__name__}.next_epoch: capture=True needs a batch_size")
            if self._checkpointing:
                raise NotImplementedError(f"{type(self).__name__}.next_epoch: a checkpointed reader cannot run "
                                          "in capture mode")
        if self._capture is not None and self._capture != bool(capture):
            # DALI 2.4 refuses both switches (back to eager once its loop had ops to capture)
            raise RuntimeError(f"{type(self).__name__}.next_epoch: a reader whose epochs ran with{'out' if capture else ''} "
                               f"capture=True cannot switch to {'capture' if capture else 'eager'} mode "
                               "(make a new reader)")
        self._capture = bool(capture)
        return self._epoch_iter(batch_size)

    def _epoch_iter(self, batch_size: int | None) -> Iterator[Any]:
        self._use("epoch")
        bs = int(batch_size) if batch_size is not None else 1
        if self._pipe is not None and bs != self._pipe_bs:
            raise ValueError(f"{type(self).__name__}.next_epoch: batch_size={batch_size} differs from the "
                             f"{self._pipe_bs if self._pipe_bs > 1 or self._batched else None} of the reader's "
                             "earlier epochs (as in DALI 2.4, a reader keeps one batch size; make a new reader)")
        if self._pipe is None and self._batch_size is not None and bs > int(self._batch_size):
            raise ValueError(f"{type(self).__name__}.next_epoch: batch_size={bs} is larger than the reader's "
                             f"max_batch_size {self._batch_size}")
        self._batched = batch_size is not None
        pipe = self._pipeline(bs)
        if self._resume_left > 0:  # a restored state stopped inside an epoch: its remaining batches
            self._epoch_left, self._resume_left = self._resume_left, 0
            while self._epoch_left > 0:
                self._epoch_left -= 1
                yield self._batch_of(self._take(bs), batch_size is not None)
            return
        meta = pipe.reader_meta("reader")
        padded = int(meta["epoch_size_padded"])
        size = padded * (self._shard_id + 1) // self._num_shards - padded * self._shard_id // self._num_shards
        op = pipe.reader("reader")
        if getattr(op, "even_shards", False):
            # sharded random_shuffle reads DistributedSampler's split (on_purpose.md): ceil(n/R)
            # on every shard; DALI's contiguous sizes would cut epochs off the reader's own
            size = -(-int(meta["epoch_size"]) // self._num_shards)
        sizes = getattr(op, "rank_sizes", lambda e: None)(getattr(op, "epoch", 0))
        if sizes is not None:  # whole tar files per shard (webdataset split_by_file): this epoch's
            size = sizes[self._stream_shard]
        if size < 1:
            raise RuntimeError(f"{type(self).__name__}: shard {self._shard_id} of {self._num_shards} has no samples "
                               f"(the dataset has {meta['epoch_size']})")
        if not self._stick_to_shard:
            self._shard_id = (self._shard_id + 1) % self._num_shards
        self._epoch_left = -(-size // bs)
        while self._epoch_left > 0:
            self._epoch_left -= 1
            yield self._batch_of(self._take(bs), batch_size is not None)

    def _batch_of(self, samples: list[list[tuple[Any, Any, str]]], batched: bool) -> Any:
        vals = []
        for j, (key, _, layout) in enumerate(samples[0]):
            tl = TensorList([smp[j][1] for smp in samples], layout)
            vals.append((key, _invoke.from_tensor_list(tl, batched)))
        return _shape_outputs(vals, self._named)


class ReaderState:
    """A reader's position (`reader.get_state()`); `str(state)` is its JSON form, which
    `set_state` also takes."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = dict(values)

    @staticmethod
    def parse(text: str) -> "ReaderState":
        try:
            values = json.loads(text)
            if not isinstance(values, dict) or not {"seed", "shard_id", "consumed", "batch_size"} <= set(values):
                raise ValueError
        except ValueError:
            raise ValueError(f"not a reader state: {text[:80]!r}") from None
        return ReaderState(values)

    def __str__(self) -> str:
        return json.dumps(self.values, sort_keys=True)

    def __repr__(self) -> str:
        return f"ReaderState({self})"


def _shape_outputs(vals: list[tuple[Any, Any]], named: bool) -> Any:
    if named:
        return dict(vals)
    return tuple(v for _, v in vals)  # a 1-tuple for one output, as in DALI 2.4: `for (batch,) in ...`


def _reader_class(schema: Any) -> type:
    return type(schema.class_name, (Reader,), {"_schema_name": schema.name, "__doc__": Reader.__doc__,
                                               "__module__": "torch_dali.experimental.dynamic.readers"})


def _namespace(root: ModuleType, parts: list[str]) -> ModuleType:
    target = root
    for depth, part in enumerate(parts):
        full = f"{root.__name__}." + ".".join(parts[: depth + 1])
        sub = sys.modules.get(full) or getattr(target, part, None)
        if not isinstance(sub, ModuleType):
            sub = ModuleType(full)
            sys.modules[full] = sub
        setattr(target, part, sub)
        target = sub
    return target


def install(root: ModuleType) -> ModuleType:
    """Places every op under `root` (the package); returns the class API's namespace (`ops`),
    whose classes are also this module's attributes (`ndd._ops.Resize`, as in DALI 2.4)."""
    readers = _namespace(root, ["readers"])
    for schema in all_schemas():
        name = schema.name
        if name.startswith("_") or name in _SKIP:
            continue
        parts = name.split(".")
        if parts[0] == "readers":
            setattr(readers, schema.class_name, _reader_class(schema))
            continue
        target = _namespace(root, parts[:-1])
        if hasattr(target, parts[-1]) and target is root:
            continue  # the package's own name (e.g. `copy` is not shadowed twice)
        f = _function(schema)
        setattr(target, parts[-1], f)
        _all_functions.append(f)
    ops = _build_classes(root, [s for s in all_schemas()], _SKIP)
    _install_legacy(root, ops)
    here = sys.modules[__name__]
    for k, v in vars(ops).items():
        if not k.startswith("__") and not hasattr(here, k):
            setattr(here, k, v)
    return ops


def _install_legacy(root: ModuleType, ops: ModuleType) -> None:
    for old, new in _LEGACY.items():
        current: Any = root
        for part in new.split("."):
            current = getattr(current, part)
        parts = old.split(".")
        setattr(_namespace(root, parts[:-1]), parts[-1], _deprecated(current, old, new))
        cls = lookup(new).class_name
        target: Any = ops
        for part in new.split(".")[:-1]:
            target = getattr(target, part)
        home: Any = ops
        for depth, part in enumerate(parts[:-1]):
            sub = getattr(home, part, None)
            if not isinstance(sub, ModuleType):
                sub = ModuleType(f"{ops.__name__}." + ".".join(parts[: depth + 1]))
                sys.modules[sub.__name__] = sub
                setattr(home, part, sub)
            home = sub
        setattr(home, cls, getattr(target, cls))


def _deprecated(f: Callable[..., Any], old: str, new: str) -> Callable[..., Any]:
    def call(*inputs: Any, **kwargs: Any) -> Any:
        _legacy.warn(f"ndd.{old} is deprecated in DALI 2.4; use ndd.{new}")
        return f(*inputs, **kwargs)
    call.__name__ = old.split(".")[-1]
    call.__qualname__ = old
    call.__doc__ = f"Deprecated name of `ndd.{new}` (the same op)."
    return call
