"""`fn.external_source` (DALI's ExternalSource): feed a pipeline from Python.

Behaviour checked against DALI 2.4:

* `source` is an iterable (`iter()` is taken at build), a generator function (called to make the
  iterator, and called again where a cycle restarts), or a callable. A callable takes no argument,
  or one: in batch mode the iteration number within the epoch (a `BatchInfo(iteration, epoch_idx)`
  with `batch_info=True`); in per-sample mode (`batch=False`) a
  `SampleInfo(idx_in_epoch, idx_in_batch, iteration, epoch_idx)`.
* `batch=True`: each call / `next()` gives a whole batch, a list of samples or one array with a
  leading batch dimension; the batch size of that iteration is its length. `batch=False`: one
  sample per call, the pipeline's batch size samples per iteration.
* With `num_outputs=k` each batch (or sample) is a tuple of k, one per output.
* End of data (the iterator ends, or the callable raises StopIteration): `pipe.run()` raises
  StopIteration. `cycle=None/False/"no"`: after `pipe.reset()` the same iterator is asked again
  (a generator stays ended; an iterator that rewinds itself goes on); callables start a new
  epoch. `cycle="raise"`: StopIteration, then `reset()` starts the iterable over. `cycle="quiet"/True`: the data repeats with no StopIteration (a reset
  does not rewind it), unless the started-over source gives nothing: then StopIteration. A per-sample source that ends part-way through a batch drops that batch.
  A generator *object* cannot be cycled (DALI refuses it too).
* Without `source`, batches come from `pipe.feed_input(name, batch)`, in the order fed; with
  `num_outputs=k` each output can be fed alone through its DataNode (`external_feed`). Data that
  cannot make a batch (too many or mixed samples, no tensor) is refused by feed_input itself.
* Layout: the `layout` argument, else the one fed with the batch, else the batch's own (a
  pipeline's output fed back, or its samples); a fed layout other than `layout` is an error.
* Without `dtype` / `ndim` / `layout`, an output's first batch fixes them: a later batch of another
  type, dimensionality or (once one was seen) layout is an error, after `reset()` too
  (`external_source_checks`). A `source` callable must take 0 or 1 parameters, defaults
  included; `*args`, `**kwargs` and keyword-only parameters are a TypeError.

Samples may be NumPy arrays, torch tensors (CPU or CUDA), anything with `__dlpack__` (CuPy,
JAX...), `bytes` (uint8 1-D), Python or NumPy scalars (0-d, NumPy's types) or objects with
`__array__`. They become torch tensors without a copy where the memory allows (`bytes` and
read-only arrays are copied). A CPU external source given CUDA data copies it to the CPU; a GPU one
given CPU data copies it over. Where DALI is stricter (Python scalars, bytes) torch_dali accepts.

`source` is called (or iterated) on the thread that calls `pipe.run()` / `schedule_run()`, as
DALI calls it: the first run fetches `prefetch_queue_depth` iterations, each later one one more
(DALI's iterators one more after each batch), and an error it raises reaches that caller as it was
raised (`external_pump`). With `repeat_last`, an iteration repeats what was fed when it was
scheduled (DALI's timing: after a feed, the iterations already scheduled still show the older
data). `no_copy=True` refuses data on the other device (as DALI: sharing it is impossible);
otherwise no effect. Accepted with no effect: `prefetch_queue_depth`, `blocking`,
`cuda_stream`, `use_copy_kernel`. `parallel=True` runs a per-sample callable on the pipeline's
threads instead (DALI uses worker processes), so it must be thread-safe. `source` is stored in the graph as given: only what
the YAML encoder can name round-trips; lists of arrays, generators and local functions do not.
"""
from __future__ import annotations

import inspect
import threading
import warnings
from typing import Any, Callable, Iterator

import torch

from .. import types
from ..errors import ArgumentError, ArgumentTypeError, DataError, PipelineError
from ..tensor_list import TensorList
from ._operator import BatchContext, Operator
from .external_feed import FeedQueues
from .external_source_checks import (Consistency, FedDataError, FeedWithSourceError, accepted_arg_count,
                                     check_fed_ndim, check_layout_ndim, check_uniform)
from .source_data import describe, to_batch, to_tensor
from .external_pump import END, Ahead
from .external_source_input import (CYCLES, GENERATOR_CYCLE, check_cycle, check_source, describe_source,
                                    take_started)
from ._registry import register
from ._schema import Arg, OpSchema, enum_member, positive


# one class each with types' (`isinstance(info, types.BatchInfo)` holds for what a callable gets)
SampleInfo = types.SampleInfo
BatchInfo = types.BatchInfo


class SourceExhausted(PipelineError, StopIteration):
    """An external source reached the end of its data: `pipe.run()` raises this StopIteration."""


# -- the op ---------------------------------------------------------------------------------------

class ExternalSource(Operator):
    """Hands out batches from a Python source, or from `pipe.feed_input`."""

    sample_wise = False
    order_sensitive = True

    def setup(self) -> None:
        a = self.args
        src = a["source"]
        self.k: int = a["num_outputs"] or 1
        # with num_outputs given (even 1), each batch (or sample) is a tuple with one per output
        self.split_outputs = a["num_outputs"] is not None
        self.batch: bool = bool(a["batch"])
        self.cycle: str = CYCLES[a["cycle"]]
        self.parallel = bool(a["parallel"])
        # where the source stands for the next fetch (epoch, iteration within it, sample index) and,
        # for state_dict, after the batch produced last (fetching may run ahead: `external_pump`)
        self.epoch = 0
        self.iteration = 0
        self.idx_in_epoch = 0
        self._produced = (0, 0, 0)
        self.exhausted = False
        self.ahead = Ahead(self.where())
        self.caller_fetch = False  # set by the executor: `pump` fetches on the caller's thread
        self._it: Iterator[Any] | None = None
        self._factory: Callable[[], Iterator[Any]] | None = None
        self._call: Callable[[Any], Any] | None = None
        self._lock = threading.Lock()
        self._fed = FeedQueues(self.k, bool(a["repeat_last"]))
        self.layouts = self._per_output("layout", a["layout"], str)
        self.dtypes = [self._dtype(d) for d in self._per_output("dtype", a["dtype"], object)]
        self.ndims = self._per_output("ndim", a["ndim"], int)
        for lay, nd in zip(self.layouts, self.ndims):
            check_layout_ndim(self.name, lay, nd)
        self.seen = [Consistency(d, n, lay) for d, n, lay in zip(self.dtypes, self.ndims, self.layouts)]
        if src is None:
            if self.cycle != "no":
                raise ArgumentError(f"{self.name}: `cycle` needs a `source`")
            return
        if inspect.isgenerator(src) and self.cycle != "no":
            raise ArgumentTypeError(f"{self.name}: cycle={self.args.get('cycle')!r}, but {GENERATOR_CYCLE}")
        if inspect.isgeneratorfunction(src):
            self._factory = src
        elif callable(src):
            if self.cycle != "no":
                raise ArgumentError(f"{self.name}: `cycle` applies to iterables and generator functions, "
                                    f"not to a callable ({getattr(src, '__name__', type(src).__name__)})")
            n = accepted_arg_count(src)
            self._call = (lambda info, f=src: f(info)) if n else (lambda info, f=src: f())
        elif hasattr(src, "__iter__"):
            self._factory = lambda s=src: iter(s)
        else:
            raise ArgumentTypeError(f"{self.name}: `source` must be an iterable, a generator function or "
                                    f"a callable, got {type(src).__name__}")
        if self._factory is not None:
            started = take_started(src) if not inspect.isgeneratorfunction(src) else None
            self._it = started if started is not None else self._factory()

    def _dtype(self, d: Any) -> torch.dtype | None:
        if d is None or isinstance(d, torch.dtype):
            return d
        try:
            return types.to_torch_dtype(enum_member(types.DALIDataType, d))
        except (ValueError, KeyError, TypeError):
            raise ArgumentTypeError(f"{self.name}: `dtype` must be a data type such as types.FLOAT, "
                                    f"got {d!r}") from None

    def _per_output(self, key: str, value: Any, kind: type) -> list[Any]:
        if isinstance(value, (list, tuple)):
            if len(value) != self.k:
                raise ArgumentError(f"{self.name}: `{key}` has {len(value)} entries, one per output "
                                    f"({self.k}) is needed")
            return list(value)
        return [value] * self.k

    # -- getting data ---------------------------------------------------------------------------
    def where(self) -> str:
        return f"{self.name} '{self.node.name}'"

    def _end(self) -> SourceExhausted:
        return SourceExhausted(f"{self.where()}: the source has no more data (pipe.reset() "
                               + ("starts it over)" if self.cycle == "raise" or self._call is not None
                                  else "asks the same iterator again; use cycle='raise' to start it over)"),
                               op=self.name, origin=self.node.origin)

    def _next_item(self) -> Any:
        """The next element of the iterable, wrapping around when cycle='quiet'."""
        try:
            return next(self._it)  # type: ignore[arg-type]
        except StopIteration:
            if self.cycle != "quiet":
                raise self._end() from None
        self._it = self._factory()  # type: ignore[misc]
        try:
            return next(self._it)
        except StopIteration:  # started over and still empty: the epoch ends, as in DALI 2.4
            raise self._end() from None

    def _from_source(self, n: int, ctx: BatchContext | None = None) -> Any:
        """One iteration's data as the source gave it (a batch, or a list of samples); advances
        the fetch position. `n`: the batch size; `ctx` (the pool) for parallel per-sample sources."""
        raw = self._fetch(n, ctx)
        self.iteration += 1
        return raw

    def _outputs_of(self, raw: Any) -> list[Any]:
        """What `_from_source` gave as k batches (lists of samples or dense arrays)."""
        if self.batch:
            return self._split(raw, "the batch")
        if not self.split_outputs:
            return [raw]
        split = [self._split(s, f"sample {i}") for i, s in enumerate(raw)]
        return [[s[j] for s in split] for j in range(self.k)]

    def _fetch(self, n: int, ctx: BatchContext | None) -> Any:
        if self.batch:
            if self._call is not None:
                info: Any = BatchInfo(self.iteration, self.epoch) if self.args["batch_info"] else self.iteration
                try:
                    raw = self._call(info)
                except StopIteration:
                    raise self._end() from None
            else:
                raw = self._next_item()
            return raw

        ended = object()

        def one(i: int) -> Any:
            if self._call is None:
                return self._next_item()
            try:
                return self._call(SampleInfo(self.idx_in_epoch + i, i, self.iteration, self.epoch))
            except StopIteration:  # never let it cross a thread pool or a generator
                return ended

        if self._call is not None and self.parallel and ctx is not None:
            samples = ctx.map(one, n)
        else:
            samples = []
            for i in range(n):
                samples.append(one(i))
                if samples[-1] is ended:
                    break
        if any(s is ended for s in samples):
            raise self._end()
        self.idx_in_epoch += n
        return samples

    def _produce(self, ctx: BatchContext) -> list[Any]:
        """This iteration's raw data: fetched on the caller's thread ahead (`pump`), or now."""
        if self.exhausted:
            raise self._end()
        if self.caller_fetch:
            raw, position = self.ahead.take()
            if raw is END:
                self.exhausted = True
                raise self._end()
            self._produced = position
            return self._outputs_of(raw)
        try:
            raw = self._from_source(ctx.batch_size, ctx)
        except SourceExhausted:
            self.exhausted = True
            raise
        self._produced = (self.epoch, self.iteration, self.idx_in_epoch)
        return self._outputs_of(raw)

    @property
    def ran_out(self) -> bool:
        """Whether the source ended: when it was fetched (DALI's criterion for `reset()`), or
        when this op reached the end."""
        return self.exhausted or self.ahead.ended

    @property
    def fetches_in_caller(self) -> bool:
        """Whether the executor should call `pump` from the caller's thread: a source that is not
        parallel (a parallel one runs on the pipeline's threads, as DALI's runs in workers), or
        fed data with `repeat_last` (which batch an iteration repeats is fixed when it is
        scheduled, as in DALI: data fed after that shows one iteration later)."""
        if self.args["source"] is None:
            return bool(self.args["repeat_last"])
        return not (self.parallel and not self.batch)

    @property
    def pumps_on_demand(self) -> bool:
        """Whether `pump` runs at schedule time even when batches are made on demand: fed data
        with `repeat_last`."""
        return self.args["source"] is None and bool(self.args["repeat_last"])

    def pump(self, upto: int, batch_size: int) -> None:
        """On the thread that calls run(): fetches data until `upto` iterations are fetched ahead
        (since the last reset); an error the source raises propagates from here, as in DALI."""
        if self.args["source"] is None:  # repeat_last: what was fed by now
            while self.ahead.fetched < upto:
                self.ahead.put(self._fed.take(self.where(), self.node.name), (self.epoch, self.iteration, 0))
            return
        while self.ahead.fetched < upto and not self.ahead.ended:
            try:
                raw: Any = self._from_source(batch_size)
            except SourceExhausted:
                raw = END
            self.ahead.put(raw, (self.epoch, self.iteration, self.idx_in_epoch))

    def _split(self, raw: Any, what: str) -> list[Any]:
        if not self.split_outputs:
            return [raw]
        if _is_array(raw) and getattr(raw, "ndim", 0) >= 1 and len(raw) == self.k:
            return list(raw)  # as DALI: an array whose first dimension is one entry per output
        if not isinstance(raw, (tuple, list)) or len(raw) != self.k:
            raise DataError(f"{self.where()}: with num_outputs={self.k}, {what} must be a tuple of "
                            f"{self.k} (one per output), got {describe(raw)}")
        return list(raw)

    def feed(self, data: Any, layout: str | None = None, output: int | None = None,
             batch_size: int = -1) -> None:
        """Queues one batch for a later iteration: a tuple of k batches when num_outputs=k, or the
        batch of `output` alone."""
        if self.args["source"] is not None:
            raise FeedWithSourceError(f"{self.where()}: it has a `source`; feed_input is only for external "
                                "sources defined without one")
        if output is not None and self.split_outputs:
            check_fed_ndim(self.where(), data, layout)
            self._fed.put(output, self._fed_batch(data, output, batch_size), layout)
            return
        pieces = self._split(data, "the fed data")
        for raw in pieces:
            check_fed_ndim(self.where(), raw, layout)
        batches = [self._fed_batch(raw, k, batch_size) for k, raw in enumerate(pieces)]
        for k, tl in enumerate(batches):
            self._fed.put(k, tl, layout)

    def _fed_batch(self, raw: Any, k: int, batch_size: int) -> TensorList:
        """The fed data as a batch now, so that data which cannot be one fails at feed_input (as in
        DALI 2.4), not at a later run(); run() then only checks it against the op's arguments."""
        where = self.where() + (f" output {k}" if self.k > 1 else "")
        try:
            tl = to_batch(raw, where)
            check_uniform(where, tl)
        except FedDataError:
            raise
        except DataError as e:
            raise FedDataError(str(e)) from None
        if 0 < batch_size < len(tl):
            raise FedDataError(f"{where}: feed_input got a batch of {len(tl)} samples, more than the pipeline's "
                               f"batch_size={batch_size}")
        return tl

    def connect(self, plan: Any) -> None:
        # outputs nothing reads are never fed (DALI prunes them) nor asked for
        used = plan.used_outputs(self.node)
        self._fed.used = used
        if self.args["source"] is not None and len(used) < self.k:
            unused = [k for k in range(self.k) if k not in used]
            which = (f"outputs at the indices {', '.join(map(str, unused))} are" if len(unused) > 1
                     else f"output at the index {unused[0]} is")
            warnings.warn(f"{self.where()}: the source {describe_source(self.args['source'])} gives "
                          f"{self.k} outputs and its {which} not used by the pipeline; the source still "
                          "computes them, so have it compute only the outputs the pipeline uses", stacklevel=2)

    # -- running --------------------------------------------------------------------------------
    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        fed = self._call is None and self._it is None
        if fed and self.caller_fetch:
            items = self.ahead.take()[0]
        elif fed:
            items = self._fed.take(self.where(), self.node.name)
        else:
            items = [(raw, None) for raw in self._produce(ctx)]
        outs = []
        for k, item in enumerate(items):
            if item is None:  # an output nothing reads, never fed
                outs.append(TensorList([], self.layouts[k] or ""))
                continue
            raw, layout_override = item
            where = self.where() + (f" output {k}" if self.k > 1 else "")
            if self.batch or fed:
                tl = to_batch(raw, where)
            else:
                tl = TensorList([to_tensor(s, f"{where}, sample {i}") for i, s in enumerate(raw)])
            outs.append(self._finish(tl, k, where, layout_override, checked=fed))
        outs_fed = [t for t, item in zip(outs, items) if item is not None]
        sizes = {len(t) for t in outs_fed}
        if len(sizes) > 1:
            raise DataError(f"{self.where()}: the outputs have different batch sizes {[len(t) for t in outs_fed]}")
        if not len(outs_fed[0]):
            raise DataError(f"{self.where()}: the source gave an empty batch (0 samples); every batch needs at "
                            "least one sample")
        if len(outs_fed[0]) > ctx.batch_size:
            raise DataError(f"{self.where()}: the source gave a batch of {len(outs_fed[0])} samples, more "
                            f"than the pipeline's batch_size={ctx.batch_size}")
        return outs

    def _finish(self, tl: TensorList, k: int, where: str, layout: str | None, checked: bool = False) -> TensorList:
        seen = self.seen[k]
        # the `layout` argument, else the layout fed with the batch, else the batch's own (a
        # TensorList, or TensorCPU samples of one)
        seen.check_fed_layout(where, layout)
        layout = self.layouts[k] or (layout if layout is not None else tl.layout())
        dense = tl.dense
        samples = [dense] if dense is not None else tl.samples
        for i, s in enumerate(samples):
            nd = s.dim() - (1 if dense is not None else 0)
            seen.check_sample(where + ("" if dense is not None else f", sample {i}"), s, nd, layout)
        if samples:
            first = samples[0]
            if not checked:  # fed batches were checked by feed_input
                check_uniform(where, tl)
            seen.check_iteration(where, first.dtype, first.dim() - (1 if dense is not None else 0), layout)
        want = self.device
        if self.args.get("no_copy") and samples and samples[0].device.type != want.type:
            have = "GPU" if samples[0].device.type == "cuda" else "CPU"
            raise DataError(f"{where}: no_copy is supported only for the same data source device type as operator. "
                            f"Received: {have} input for {'GPU' if want.type == 'cuda' else 'CPU'} operator")
        if dense is not None:
            if dense.device != want:
                dense = dense.to(want, non_blocking=True)
            return TensorList(dense, layout)
        return TensorList([s if s.device == want else s.to(want, non_blocking=True) for s in samples], layout)

    # -- epochs ---------------------------------------------------------------------------------
    def reset_source(self) -> None:
        """After a source of the pipeline ended (this one, or another: the epoch is the pipeline's):
        a new epoch. Callables and cycle='raise' iterables start over; other iterables are asked for
        more again (an exhausted generator ends again at once; an iterator that rewinds itself on
        StopIteration, as some do, goes on), as in DALI."""
        if self.args["source"] is None:
            return
        if self.cycle == "quiet":  # only an empty restart ends it: the next fetch starts over again
            self.ahead.clear()
            self.exhausted = False
            return
        self.epoch += 1
        self.iteration = 0
        self.idx_in_epoch = 0
        self._produced = (self.epoch, 0, 0)
        self.ahead.clear()
        if self.cycle == "raise" and self._call is None:
            self._it = self._factory()  # type: ignore[misc]
        self.exhausted = False

    # -- state: the position of a callable source (its info arguments), for checkpoints --------
    @property
    def restorable(self) -> bool:
        """Whether the source's position is this op's counters: a callable taking the iteration or
        the sample info (iterables, iterators and argument-less callables keep state of their own)."""
        if self.args["source"] is None:
            return True
        return self._call is not None and bool(accepted_arg_count(self.args["source"]))

    def state_dict(self) -> dict[str, Any]:
        if self.args["source"] is None or not self.restorable:
            return {}
        epoch, iteration, idx = self._produced
        return {"epoch": epoch, "iteration": iteration, "idx_in_epoch": idx, "exhausted": self.exhausted}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.ahead.clear()  # fetched for batches that were dropped
        if not state or not self.restorable:
            return
        for key in ("epoch", "iteration", "idx_in_epoch"):
            v = state.get(key, 0)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < 1 << 62:  # int64 in a source's hands
                raise ArgumentError(f"{self.where()}: the saved state has a bad `{key}`: {v!r}")
            setattr(self, key, v)
        self._produced = (self.epoch, self.iteration, self.idx_in_epoch)
        self.exhausted = bool(state.get("exhausted", False))

    def output_layout(self, index: int) -> str:
        return self.layouts[index] or ""

    def layout_known(self, index: int) -> bool:
        """Whether output `index`'s layout is known before data arrive (`layout=` was given); else
        each batch fed says it (`feed_input(..., layout=)`)."""
        return bool(self.layouts[index])


register(OpSchema(
    name="external_source", impl=ExternalSource, legacy_names=("ExternalSource",),
    devices=("cpu", "gpu"), min_inputs=0, max_inputs=0,
    num_outputs=lambda a: a.get("num_outputs") or 1,
    doc="Feeds the pipeline from Python: an iterable, a generator function, a callable, or "
        "pipe.feed_input().",
    args=(
        Arg("source", "source", None, "iterable, generator function or callable giving batches (or "
            "samples with batch=False); None: data comes from pipe.feed_input", check=check_source),
        Arg("num_outputs", "int", None, "split each batch (a tuple) into this many outputs", check=positive),
        Arg("batch", "bool", True, "the source gives whole batches (False: one sample per call)"),
        Arg("cycle", "any", None, "None/False: end with StopIteration; 'quiet'/True: repeat; 'raise': "
            "StopIteration, then reset() starts over", check=check_cycle),
        Arg("layout", "strs", None, "layout of the samples (one per output, or one for all)"),
        Arg("dtype", "any", None, "expected element type (checked)"),
        Arg("ndim", "any", None, "expected number of dimensions of a sample (checked)"),
        Arg("batch_info", "bool", False, "a one-argument batch callable gets BatchInfo instead of the "
            "iteration number"),
        Arg("parallel", "bool", False, "run a per-sample callable on the pipeline's threads"),
        Arg("prefetch_queue_depth", "int", 1, "accepted; no effect", check=positive),
        Arg("no_copy", "bool", None, "data on the other device is refused; data is never copied where it "
            "can be shared"),
        Arg("blocking", "bool", None, "accepted; no effect"),
        Arg("cuda_stream", "any", None, "accepted; no effect"),
        Arg("use_copy_kernel", "bool", False, "accepted; no effect"),
        Arg("repeat_last", "bool", False, "feed_input only: reuse the last batch fed when none is new"),
    ),
))


def _is_array(x: Any) -> bool:
    """A NumPy array or a torch tensor (or anything with an array interface and a length)."""
    return isinstance(x, torch.Tensor) or hasattr(x, "__array_interface__") or hasattr(x, "__array__")
