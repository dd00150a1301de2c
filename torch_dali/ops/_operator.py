"""The runtime side of an op: what the executor calls. Schemas (in `_schema`) describe; these run."""
from __future__ import annotations

import math

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterable, Iterator, Sequence

import torch

from .._thread_priority import lower_this_thread
from ..errors import ArgumentError, ArgumentTypeError
from ..rng import SampleRNG, state_rng
from ..tensor_list import TensorList
from .enum_data import enum_refusal

if TYPE_CHECKING:
    from ..graph.node import Node
    from ..skips import SkipLog


class SampleContext:
    """What a per-sample op may know about the sample it is working on."""

    __slots__ = ("seed", "iteration", "index", "source", "_rng", "out")

    def __init__(self, seed: int, iteration: int, index: int, source: str = "") -> None:
        self.seed = seed
        self.iteration = iteration
        self.index = index
        self.source = source
        self._rng: SampleRNG | None = None
        #: where the executor will gather this sample's output (a slot of the dense batch), or
        #: None; an op may write its result there directly and return it, saving a copy
        self.out: torch.Tensor | None = None

    @property
    def rng(self) -> SampleRNG:
        if self._rng is None:
            self._rng = SampleRNG(self.seed, self.iteration, self.index)
        return self._rng

    def keyed(self, state: Any) -> "SampleContext":
        """This context with its draws keyed by a `_random_state` sample (see rng.state_rng);
        unchanged when `state` is None."""
        if state is not None:
            self._rng = state_rng(state, self.index)
        return self


class WorkerPool:
    """The executor's sample-parallel threads: a ThreadPoolExecutor that says how many workers it
    has and which threads are its own (the standard library keeps both in private attributes)."""

    def __init__(self, workers: int, name: str, initializer: Callable[[], None] | None = None) -> None:
        self.workers = max(1, int(workers))
        self._own: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._init = initializer
        self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix=name, initializer=self._started)

    def _started(self) -> None:
        lower_this_thread()
        with self._lock:
            self._own.add(threading.current_thread())
        if self._init is not None:
            self._init()

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        return self._pool.map(fn, *iterables)

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future:
        return self._pool.submit(fn, *args, **kwargs)

    def threads(self) -> list[threading.Thread]:
        """The pool's threads started so far that are alive."""
        with self._lock:
            return [t for t in self._own if t.is_alive()]

    def owns_current_thread(self) -> bool:
        """Whether the calling thread is one of the pool's (it must not wait for the pool)."""
        with self._lock:
            return threading.current_thread() in self._own

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)


class BatchContext:
    """What a batch op may know: the iteration, batch size, device, stream and the thread pool."""

    def __init__(self, node: "Node", iteration: int, batch_size: int, device: torch.device,
                 pool: WorkerPool | None, sources: Sequence[str] = (),
                 stream: Any = None) -> None:
        self.node = node
        self.iteration = iteration
        self.batch_size = batch_size
        self.device = device
        self.pool = pool
        self.sources = sources if sources else [""] * batch_size  # may be lazy (readers' Sources)
        #: the `source_info()` names the first input's samples carry, for ops that `reads_source_info`
        self.source_info: Sequence[str] = ()
        #: set by an op whose output samples gather input samples (multi_paste): per output sample,
        #: the (input, sample) pairs it took; its names are then theirs (`joined_names`)
        self.source_picks: list[list[tuple[int, int]]] | None = None
        self.stream = stream
        #: the argument inputs as batches, for ops that check what `batch_args` flattens away
        #: (a per-sample argument's type and dimensions)
        self.arg_batches: dict[str, Any] = {}

    def sample(self, i: int) -> SampleContext:
        return SampleContext(self.node.seed, self.iteration, i, self.sources[i] if i < len(self.sources) else "")

    def map(self, fn: Callable[[int], Any], n: int | None = None) -> list[Any]:
        """Runs fn(i) for each sample, on the pool's threads when there is one."""
        n = self.batch_size if n is None else n
        if self.pool is None or n <= 1:
            return [fn(i) for i in range(n)]
        if self.stream is not None and self.device.type == "cuda":
            # torch's current stream is per thread: the pool's threads would launch on their default
            # stream, unordered with the step's (an input still being written is read early)
            return parallel_map(self.pool, fn, n, self.stream)
        return parallel_map(self.pool, fn, n)


def joined_names(picks: list[list[tuple[int, int]]], names: list[Sequence[str] | None]) -> list[str]:
    """Per output sample, the non-empty names of the (input, sample) pairs it took, joined with
    ";" (DALI 2.4's source_info() of a multi_paste output, measured)."""
    return [";".join(n for n in (names[t][s] if names[t] is not None else "" for t, s in p) if n) for p in picks]


def parallel_map(pool: WorkerPool, fn: Callable[[int], Any], n: int, stream: Any = None) -> list[Any]:
    """fn(i) for i in range(n) on the pool, in a few contiguous chunks per thread: one task per
    sample costs ~20-100 µs of queue and lock traffic, more than many per-sample ops take. With a
    CUDA `stream`, each chunk launches its work on it."""
    chunk = max(1, -(-n // (pool.workers * 2)))
    spans = [range(a, min(n, a + chunk)) for a in range(0, n, chunk)]

    def part(r: range) -> list[Any]:
        if stream is None:
            return [fn(i) for i in r]
        with torch.cuda.stream(stream):
            return [fn(i) for i in r]
    parts = pool.map(part, spans)
    return [x for part in parts for x in part]


def _or(layout: str | None, fallback: str) -> str:
    return fallback if layout is None else layout


def batch_args(tl: TensorList) -> list[Any]:
    """Each sample of an argument input as the Python value an op works with (`sample_arg`); one
    `tolist()` for a dense batch of scalars (a coin flip per sample) instead of a view and an
    `item()` per sample."""
    dense = tl.dense
    if dense is not None and dense.device.type == "cpu" and dense.dim() >= 1 and dense.shape[0] \
            and math.prod(dense.shape[1:]) == 1:
        if dense.dtype != torch.bfloat16 and not dense.requires_grad:
            # through NumPy: a torch reshape releases the GIL (a wait for it back under contention)
            return dense.numpy().reshape(-1).tolist()
        return dense.reshape(dense.shape[0]).tolist()
    return [sample_arg(t) for t in tl]


def sample_arg(t: torch.Tensor) -> Any:
    """A per-sample argument tensor as the Python value an op works with."""
    if t.numel() == 1:
        return t.item()
    return t.tolist()


def scalar_arg(op: str, name: str, v: Any) -> Any:
    """One sample of a per-sample argument that takes one number: a sample with dimensions (a list,
    see `sample_arg`) is refused."""
    if isinstance(v, list):
        ndim, x = 0, v
        while isinstance(x, list):
            ndim, x = ndim + 1, (x[0] if x else None)
        raise ArgumentError(f"{op}: `{name}` takes one number per sample, got {v!r}: {not_scalar(ndim)}")
    return v


def not_scalar(ndim: int) -> str:
    """Why a scalar argument refuses an array of `ndim` dimensions."""
    return f"it has {ndim} dimension{'s' if ndim != 1 else ''}, a single number has none"


class BuildArgumentError(ArgumentError, RuntimeError):
    """An op's arguments refused when the pipeline is built: an ArgumentError (a ValueError), and a
    RuntimeError as DALI raises for them (DALI code catches those as RuntimeError)."""


class BuildArgumentTypeError(ArgumentTypeError, RuntimeError):
    """An op's argument of the wrong type, refused when the pipeline is built (see BuildArgumentError)."""


class Operator:
    """Base of every op implementation.

    `sample_wise` ops implement `run_sample`; the executor calls it for each sample on CPU threads
    (several per-sample ops are chained within one task). Others implement `run_batch`.
    """

    sample_wise: bool = True
    # Must see batches one at a time and in order (user functions, sources): keeps its stage off
    # the executor's parallel lanes.
    order_sensitive: bool = False
    # Takes samples whose rows are strided views (crops of larger images) on every path: an op
    # feeding only such ops may hand them views instead of copies.
    strided_input_ok: bool = False
    # Checks its samples with its consumers' checks (`add_check`) and refills the batch with the
    # following samples when one fails: readers, for decoders with on_error="skip".
    takes_checks: ClassVar[bool] = False
    # Processes the frames of a sequence independently, so it takes per-frame argument inputs
    # (fn.per_frame): it then runs on the batch unfolded into frames (ops/per_frame.py).
    per_frame_ok: ClassVar[bool] = False
    # Handles per-frame arguments (and sequence inputs) in its own run_batch, so the dispatch
    # does not unfold the batch into frames for it (transforms: several inputs may be sequences).
    own_frames: ClassVar[bool] = False

    # -- what a source op (no inputs) says about the batch it made last --------------------------------
    #: the file or record of each sample (may be lazy), for error messages; empty if unknown
    last_sources: Sequence[str] = ()
    #: the outputs whose samples carry `source_info()` names (None: every output)
    source_info_outputs: ClassVar[tuple[int, ...] | None] = (0,)
    #: the executor gives the op (in BatchContext.source_info) the names its first input's samples carry
    reads_source_info: ClassVar[bool] = False
    #: a reader's place in its epoch after its last batch: `real` samples, whether the epoch `ended`
    batch_info: dict[str, Any] | None = None
    #: samples left out with on_error="skip" (readers), listed by `Pipeline.skipped()`
    skip_log: "SkipLog | None" = None

    def source_info(self) -> Sequence[str]:
        """The last batch's samples as DALI's `source_info()` names them (a reader's entries as
        listed); `last_sources` (what error messages print) unless the op says otherwise."""
        return self.last_sources

    def output_source_info(self, k: int) -> Sequence[str] | None:
        """The `source_info()` names output `k`'s samples of the last batch carry; None for an
        output that carries none (by default: `source_info()` on `source_info_outputs`)."""
        if self.source_info_outputs is not None and k not in self.source_info_outputs:
            return None
        return self.source_info()

    def __init__(self, node: "Node", device: torch.device) -> None:
        self.node = node
        self.args = node.args
        self.device = device
        # argument inputs made by fn.per_frame: the op then runs frame by frame (ops/per_frame.py)
        self.per_frame_names = sorted(k for k, d in node.arg_inputs.items() if d.node.schema.name == "per_frame")
        # given enum values as data by an op that takes none: fails when it runs, as in DALI (_dispatch)
        self.enum_refusal = enum_refusal(node)
        try:
            if self.per_frame_names and not self.per_frame_ok:
                raise ArgumentError(f"{self.name}: argument `{self.per_frame_names[0]}` is given per frame "
                                    f"(fn.per_frame), but {self.name} does not take per-frame arguments")
            self.setup()
        except (BuildArgumentError, BuildArgumentTypeError):
            raise
        except ArgumentError as e:
            raise BuildArgumentError(*e.args).with_traceback(e.__traceback__) from None
        except ArgumentTypeError as e:
            raise BuildArgumentTypeError(*e.args).with_traceback(e.__traceback__) from None

    @property
    def name(self) -> str:
        return self.node.schema.display_name()

    def setup(self) -> None:
        """Checks the combination of arguments; runs once at build()."""

    def run_sample(self, ctx: SampleContext, inputs: list[torch.Tensor],
                   args: dict[str, Any]) -> torch.Tensor | tuple[torch.Tensor, ...]:
        raise TypeError(f"{self.name} has no per-sample implementation")

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList],
                  args: dict[str, list[Any]]) -> list[TensorList]:
        """Default batch path: the per-sample implementation, sample by sample (used on CUDA)."""
        n_out = self.node.schema.outputs_for(self.args, len(self.node.inputs))
        outs: list[list[torch.Tensor]] = [[] for _ in range(n_out)]
        for i in range(ctx.batch_size):
            sample_args = {k: v[i] for k, v in args.items()}
            r = self.run_sample(ctx.sample(i), [x[i] for x in inputs], sample_args)
            r = r if isinstance(r, tuple) else (r,)
            for k in range(n_out):
                outs[k].append(r[k])
        keep = inputs[0].layout() if inputs else ""
        return [TensorList(o, _or(self.output_layout(k), keep)) for k, o in enumerate(outs)]

    def connect(self, plan: Any) -> None:
        """At build, after every op exists: an op that works with its neighbours looks them up
        (`plan.consumers`, `plan.is_output`, `plan.op`)."""

    def add_check(self, op: str, check: Callable[[torch.Tensor, str], None],
                  reset: Callable[[], None] | None = None) -> None:
        """Runs `check(data, source)` (it raises for data the consumer `op` cannot use) on each
        sample before it enters a batch, and `reset()` before each batch; only where
        `takes_checks`."""
        raise TypeError(f"{self.name} does not check its samples for its consumers")

    def prepare(self) -> None:
        """At build, on a background thread: slow one-time set-up (loading the extension, making
        decoder states) that the first batch would otherwise wait for. Must be safe to race with
        the op's first run (the op's own locks order them)."""

    def fuse(self, consumer: "Operator") -> Any:
        """An object with `run_fused` that runs this op and its only consumer together, or None."""
        return None

    def takes_regions(self) -> bool:
        """At build: whether this op can say, before a batch runs, which part of each image of its
        first input it will read (`input_regions`), and takes batches of those parts instead
        (`TensorList.regions` says where each lies). A GPU decoder feeding only such an op then
        decodes just those parts: less decoding and a smaller decoded batch."""
        return False

    def input_regions(self, iteration: int, sizes: Any) -> Any:
        """(n, 4) int64 (y, x, h, w): the part of each whole image of `sizes` (n, 2) that this op's
        run of `iteration` reads, every tap of its filters included."""
        raise TypeError(f"{self.name} does not read regions")

    def output_layout(self, index: int) -> str | None:
        """Layout of output `index`; None means "the layout of input 0" (ops that keep it)."""
        if index == 0:
            return self.node.schema.output_layout or None
        return ""

    def layout_known(self, index: int) -> bool:
        """Whether output `index`'s layout is known at build, before any data (an external source
        without `layout=` learns it from each batch fed)."""
        return True

    def hwc_input(self) -> bool:
        """Whether this op's input batches are HWC images: the case the fused kernels read."""
        return False

    # -- state (readers and other stateful ops) -------------------------------------------------
    def epoch_size(self) -> int | None:
        return None

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        pass

    def close(self) -> None:
        pass
