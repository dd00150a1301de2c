"""Build a graph into a Plan (op instances, device placement, execution steps) and run one iteration."""
from __future__ import annotations

import contextlib
import threading
import time
import traceback
import warnings
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

import torch

from .. import _knobs
from .._thread_priority import lower_this_thread
from . import reaper
from ..errors import GraphError, PipelineError, SerializationError, TorchDaliError
from ..graph.graph import Graph
from ..graph.node import Node
from ..io.host_memory import BatchBuffers
from ..ops import _dispatch, arg_input_types
from ..ops.enum_data import enum_type_of
from ..ops._operator import (BatchContext, Operator, SampleContext, WorkerPool, batch_args, joined_names,
                              parallel_map, sample_arg)
from ..tensor_list import TensorList
from .steps import Batch, Partial, StageSpec, Step, find_fusions, plan_stages  # noqa: F401 - Batch: graph.pipeline
from .streams import StageStreams
from .timing import OpTimes
from .watch import leave_running


_warned = False


def _worker_init() -> None:
    """Sample-parallel workers run torch ops single-threaded: the pool is the parallelism, and
    OpenMP teams inside each worker would oversubscribe the cores. (Per thread: the caller's
    torch.get_num_threads() is unchanged.)"""
    torch.set_num_threads(1)


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """torch single-threaded on this thread for a while (then as it was): samples run on the stage's
    own thread (all of them with num_threads=1; sample 0, or a batch of at most 3, otherwise),
    whose torch would otherwise start an OpenMP team of every core for each large op (on a busy
    machine a team waits for a descheduled member: resize_nn 5 -> 280 ms a batch) and give values
    that depend on the core count, unlike the pool's single-threaded workers."""
    prev = torch.get_num_threads()
    if prev == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(prev)


def _prepare(ops: list[Operator]) -> None:
    """Errors are left to the first batch, which meets them again and reports them in its place."""
    lower_this_thread()
    for op in ops:
        try:
            op.prepare()
        except Exception:  # noqa: BLE001
            pass


def _fallback_warning(what: str) -> None:
    """Once per process: a notebook building many pipelines should not print the same line each time."""
    global _warned
    if _warned:
        return
    _warned = True
    warnings.warn(f"torch_dali: {what}; GPU and mixed ops run on the CPU (pass strict_device=True "
                  "to make this an error)", RuntimeWarning, stacklevel=4)


class Plan:
    """Op instances placed on devices, and the steps that run one iteration."""

    def __init__(self, graph: Graph, batch_size: int, num_threads: int, device_id: int | None,
                 strict_device: bool = False, feeds_training: bool = False) -> None:
        self.graph = graph
        self.feeds_training = feeds_training  # torch_dali.DataLoader's pipeline: `_knobs.training_feed`
        self.batch_size = batch_size
        self.nodes = graph.reachable()
        needs_gpu = any(n.device in ("gpu", "mixed") for n in self.nodes)
        self.cuda: torch.device | None = None
        if needs_gpu:
            if device_id is None or not torch.cuda.is_available():
                why = ("device_id=None" if device_id is None else "CUDA is not available")
                if strict_device:
                    raise GraphError(f"the pipeline has GPU ops but {why}")
                _fallback_warning(why)
            else:
                if device_id >= torch.cuda.device_count():
                    raise GraphError(f"device_id {device_id} is invalid: this machine has "
                                     f"{torch.cuda.device_count()} CUDA device(s)")
                self.cuda = torch.device("cuda", device_id if device_id >= 0 else torch.cuda.current_device())
        self.streams = StageStreams(self.cuda, _knobs.stream_priority(feeds_training))
        self.ops: dict[int, Operator] = {}
        for n in self.nodes:
            dev = self.cuda if (n.device in ("gpu", "mixed") and self.cuda is not None) else torch.device("cpu")
            try:
                self.ops[n.id] = n.schema.impl(n, dev)
            except TorchDaliError:
                raise
            except Exception as e:  # a bad argument combination found at build time
                why = e.args[0] if isinstance(e, KeyError) and e.args else e  # str(KeyError) adds quotes
                # an error with no text (MemoryError()) left "Op (defined at x.py:3): " and nothing else
                raise GraphError(f"{n.describe()}: {str(why) or type(e).__name__}") from e
        self._output_keys = {(d.node.id, d.index) for d in graph.outputs}
        self._consumers: dict[int, list[Node]] = {n.id: [] for n in self.nodes}
        self._lineage: dict[tuple[int, int], list[tuple[int, int]]] = {}  # per value, the values it comes from
        # per pipeline output, the enum element type of its tensors (types.INTERP_TYPE...) or None
        self._enum_types = [enum_type_of(d) for d in graph.outputs]
        for n in self.nodes:
            for d in [*n.inputs, *n.arg_inputs.values()]:
                if n not in self._consumers[d.node.id]:
                    self._consumers[d.node.id].append(n)
        for n in self.nodes:  # ops that work with a neighbour (decoders.image(on_error="skip"))
            self.ops[n.id].connect(self)
        # what runs each sample of a per-sample op: its spec or a fast kernel (chosen once, here)
        self._sample_run = {nid: _dispatch.sample_runner(op) for nid, op in self.ops.items()}
        # per op, the element type its per-sample arguments' data must have (checked as they arrive)
        self._arg_want = {n.id: w for n in self.nodes if (w := arg_input_types.wanted(n))}
        self._fusions = find_fusions(self.nodes, self.ops, self._consumers, self.is_output)
        self.stages: list[StageSpec] = plan_stages(self.nodes, self.ops, self._fusions)
        self.steps: list[Step] = [s for stage in self.stages for s in stage.steps]
        # After each stage, the values later stages or the outputs still read; the rest of the
        # batch's values are dropped there. Kept to the end, a decoded batch stayed alive (device
        # memory) through every hand-off and the output queue until the consumer took the batch.
        self._live_after: dict[int, set[tuple[int, int]]] = {}
        later = set(self._output_keys)
        for spec in reversed(self.stages):
            self._live_after[id(spec)] = set(later)
            later.update((d.node.id, d.index) for n in spec.nodes for d in [*n.inputs, *n.arg_inputs.values()])
        # one-time set-up (extension, decoder states) overlaps the first batch's reading
        preparing = [op for op in self.ops.values() if type(op).prepare is not Operator.prepare]
        if preparing:
            prep = threading.Thread(target=_prepare, args=(preparing,), name="torch_dali-prepare", daemon=True)
            prep.start()
            leave_running([prep])  # a script ending during the set-up must not finalize under it
        self._close_lock = threading.Lock()
        self._closed = False
        self.pool = WorkerPool(num_threads, "torch_dali", _worker_init) if num_threads > 1 else None
        self.batch_buffers = BatchBuffers()  # the per-sample chains' dense batches
        # chain outputs whose last batch had samples of different shapes: allocating a dense
        # batch for them (sized by sample 0) is wasted, and sample 0's copy into it too
        self._ragged_sinks: set[tuple[int, int]] = set()
        # chain outputs whose last batch was dense: their sample shape and type
        self._sink_like: dict[tuple[int, int], tuple[tuple[int, ...], torch.dtype]] = {}
        # thread -> (the step it runs, since when): what a stop or a batch timeout reports as stuck
        self._running: dict[threading.Thread, tuple[list[Node], float]] = {}
        self.op_times: OpTimes | None = None  # per-op seconds, once time_ops() is called

    def time_ops(self, sync: bool = True) -> OpTimes:
        """From now on records each op's time (`timing.OpTimes`). With `sync`, waits for the GPU
        around each batch op (a profile of a plan run step by step: `torch-dali bench`); without,
        host time only (what a running executor's ops cost its threads)."""
        if self.op_times is None:
            wait = (lambda: torch.cuda.synchronize(self.cuda)) if sync and self.cuda is not None else (lambda: None)
            self.op_times = OpTimes((n.name for n in self.nodes), wait)
        return self.op_times

    # -- the graph around an op (for `Operator.connect`) ------------------------------------------
    def consumers(self, node: Node) -> list[Node]:
        """The nodes that read any output of `node` (as data or as an argument input)."""
        return list(self._consumers.get(node.id, []))

    def is_output(self, node: Node) -> bool:
        """Whether an output of `node` is a pipeline output."""
        return any(key[0] == node.id for key in self._output_keys)

    def used_outputs(self, node: Node) -> set[int]:
        """The indices of `node`'s outputs that a pipeline output or another node reads."""
        used = {i for nid, i in self._output_keys if nid == node.id}
        for n in self._consumers.get(node.id, []):
            used.update(d.index for d in [*n.inputs, *n.arg_inputs.values()] if d.node.id == node.id)
        return used

    def op(self, node: Node) -> Operator:
        return self.ops[node.id]

    # -- running -------------------------------------------------------------------------------
    def run(self, iteration: int) -> list[TensorList]:
        """One iteration, every stage one after another on this thread."""
        part = self.start(iteration)
        for stage in self.stages:
            self.run_stage(stage, part)
        return self.outputs(part)

    def start(self, iteration: int) -> Partial:
        return Partial(iteration, {}, [], self.batch_size)

    def run_stage(self, stage: StageSpec, part: Partial, lane: int = 0, laned: bool = False) -> Partial:
        """Runs `stage` of one iteration, on `lane`'s stream when the stage runs on lanes (the
        mixed stage always has a stream of its own)."""
        stream = self.streams.for_stage(stage, lane, laned)
        read = self.streams.follow(stream, part)
        if self.pool is None:
            with _one_torch_thread():
                self._run_steps(stage.steps, part, stream)
        else:
            self._run_steps(stage.steps, part, stream)
        self.streams.finish(stream, part, read, stage.on_cuda)
        live = self._live_after.get(id(stage))
        dead = [part.values.pop(k) for k in [k for k in part.values if k not in live]] if live is not None else []
        if dead or read:
            reaper.drop((dead, read))  # where the batch's per-sample tensors die (see executor.reaper)
        return part

    def outputs(self, part: Partial) -> list[TensorList]:
        """The iteration's outputs; those made from the source op that named the batch's samples
        (a reader) carry those names, as DALI's `source_info()` of each output sample."""
        outs = [part.values[(d.node.id, d.index)] for d in self.graph.outputs]
        outs = [tl if kind is None else tl.with_enum_type(kind) for tl, kind in zip(outs, self._enum_types)]
        if part.source_info:
            for tl, d in zip(outs, self.graph.outputs):
                names = self._carried_names(d, part)
                if names is not None:
                    tl.set_sources(names)
        return outs

    def _carried_names(self, d: Any, part: Partial) -> Sequence[str] | None:
        """The `source_info()` names the samples of value `d` carry: those of the first source
        found going back through data inputs (not argument inputs), each op's first input first
        (DALI's samples keep their first input's); None when no reader named them."""
        lineage = self._lineage.get((d.node.id, d.index))
        if lineage is None:
            lineage, todo = [], [d]
            while todo:
                x = todo.pop(0)
                if (x.node.id, x.index) not in lineage:
                    lineage.append((x.node.id, x.index))
                    todo.extend(x.node.inputs)
            self._lineage[(d.node.id, d.index)] = lineage
        key = next((k for k in lineage if k in part.source_info), None)
        return None if key is None else part.source_info[key]

    def run_cpu_stage(self, iteration: int) -> Partial:
        """The CPU stage of one iteration (for profiling a stage on its own)."""
        part = self.start(iteration)
        for stage in self.stages:
            if stage.kind == "cpu":
                self.run_stage(stage, part)
        return part

    def run_device_stage(self, part: Partial) -> list[TensorList]:
        """The mixed and GPU stages of an iteration the CPU stage began, one after the other."""
        for stage in self.stages:
            if stage.kind != "cpu":
                self.run_stage(stage, part)
        return self.outputs(part)

    @property
    def has_device_stage(self) -> bool:
        return len(self.stages) > 1

    def _run_steps(self, steps: list[Step], part: Partial, stream: Any = None) -> None:
        me = threading.current_thread()
        try:
            for step in steps:
                self._running[me] = (step.nodes, time.monotonic())
                self._run_step(step, part, stream)
        finally:
            self._running.pop(me, None)

    def running_ops(self) -> list[str]:
        """The ops some thread is inside right now, longest-running first: `PythonFunction 'f'
        (defined at train.py:12), for 31.0 s on thread torch_dali-prefetch`."""
        now = time.monotonic()
        rows = sorted(((t0, nodes, t.name) for t, (nodes, t0) in list(self._running.items())),
                      key=lambda r: r[0])
        return [f"{' + '.join(n.describe() for n in nodes)}, for {now - t0:.1f} s on thread {name}"
                for t0, nodes, name in rows]

    def _run_step(self, step: Step, part: Partial, stream: Any) -> None:
        values, sources, bs, iteration = part.values, part.sources, part.bs, part.iteration
        times = self.op_times
        if step.sample_wise:
            if times is None:
                self._run_chain(step.nodes, values, iteration, bs, sources)
            else:
                before = times.sample_totals(n.name for n in step.nodes)
                t0 = time.perf_counter()
                self._run_chain(step.nodes, values, iteration, bs, sources)
                times.add_chain(before, time.perf_counter() - t0)
            return
        node = step.nodes[0]
        op = self.ops[node.id]
        ins = [values[(d.node.id, d.index)] for d in node.inputs]
        if ins:
            bs = len(ins[0])
        arg_tls = {k: values[(d.node.id, d.index)] for k, d in node.arg_inputs.items()}
        args = {k: batch_args(tl) for k, tl in arg_tls.items()}
        ctx = BatchContext(node, iteration, bs, op.device, self.pool, sources, stream)
        ctx.arg_batches = arg_tls
        if op.reads_source_info and node.inputs and part.source_info:
            ctx.source_info = self._carried_names(node.inputs[0], part) or ()
        if step.fused is not None:  # the consumer's outputs are what the step leaves
            last = step.nodes[1]
            run: Any = partial(_dispatch.run_batch, step.fused, (ctx, BatchContext(last, iteration, bs, op.device,
                               self.pool, sources, stream)), ins,
                               (args, {k: batch_args(values[(d.node.id, d.index)])
                                       for k, d in last.arg_inputs.items()}))
            node = last
        else:
            run = partial(_dispatch.run_batch, op, ctx, ins, args)
        try:
            arg_input_types.check_step(step.nodes, self._arg_want, values)
            if times is not None:
                times.sync()
                t0 = time.perf_counter()
            if stream is not None and op.device.type == "cuda":
                with torch.cuda.stream(stream):
                    outs = run()
            else:
                outs = run()
            if times is not None:
                times.sync()
                times.add_step(node.name, time.perf_counter() - t0)
        except PipelineError:
            raise
        except Exception as e:
            raise self._error(node, e, None, sources) from e
        if ctx.source_picks is not None and part.source_info:  # an op that gathers samples names them
            part.source_info[(node.id, 0)] = joined_names(
                ctx.source_picks, [self._carried_names(d, part) for d in node.inputs])
        if not node.inputs and outs:  # a source (reader, external source) sets the batch size
            bs = len(outs[0])
            src = op.last_sources
            if src and not sources:
                sources = src  # may be lazy: names are formatted only when needed
            if src:
                for k in range(len(outs)):
                    names = op.output_source_info(k)
                    if names is not None:
                        part.source_info[(node.id, k)] = names
        for k, tl in enumerate(outs):
            values[(node.id, k)] = tl
        part.sources, part.bs = sources, bs

    def _run_chain(self, nodes: list[Node], values: dict[tuple[int, int], TensorList], iteration: int,
                   bs: int, sources: list[str]) -> None:
        results: dict[tuple[int, int], list[Any]] = {}
        for n in nodes:
            for k in range(len(n.outputs)):
                results[(n.id, k)] = [None] * bs
        # Pipeline outputs made here are gathered into one dense batch by the workers themselves
        # (cache-hot, in parallel), instead of a torch.stack on the consumer's thread afterwards.
        sinks = [(n.id, k) for n in nodes for k in range(len(n.outputs)) if (n.id, k) in self._output_keys]
        times = self.op_times
        dense: dict[tuple[int, int], torch.Tensor | None] = {}

        def get(key: tuple[int, int], i: int) -> torch.Tensor:
            r = results.get(key)
            return r[i] if r is not None else values[key][i]

        runners, arg_want = self._sample_run, self._arg_want

        def one(i: int) -> None:
            src = sources[i] if i < len(sources) else ""
            for n in nodes:
                run_sample = runners[n.id]
                ins = [get((d.node.id, d.index), i) for d in n.inputs]
                args = {k: sample_arg(get((d.node.id, d.index), i)) for k, d in n.arg_inputs.items()}
                sctx = SampleContext(n.seed, iteration, i, src)
                slot = dense.get((n.id, 0))
                if slot is not None:
                    sctx.out = slot[i]
                try:
                    if n.id in arg_want:
                        arg_input_types.check_batch(n, arg_want[n.id], lambda k: get(
                            (n.arg_inputs[k].node.id, n.arg_inputs[k].index), i))
                    if times is None:
                        out = run_sample(sctx, ins, args)
                    else:
                        t0 = time.perf_counter()
                        out = run_sample(sctx, ins, args)
                        times.add_sample(n.name, time.perf_counter() - t0)
                except PipelineError:
                    raise
                except Exception as e:
                    raise self._error(n, e, i, sources) from e
                if isinstance(out, tuple):
                    for k, t in enumerate(out):
                        results[(n.id, k)][i] = t
                else:
                    results[(n.id, 0)][i] = out
            for key in sinks:
                buf = dense.get(key)
                t = results[key][i]
                if buf is not None and isinstance(t, torch.Tensor) and t.shape == buf.shape[1:] \
                        and t.dtype == buf.dtype and t.device == buf.device:
                    if t.data_ptr() != buf[i].data_ptr():  # the op did not write in place
                        buf[i].copy_(t)
                    results[key][i] = buf[i]

        start = 0
        if bs > 0 and all(k in self._sink_like or k in self._ragged_sinks for k in sinks):
            # every output's sample shape is known from the last batch: the dense batches are made
            # first and every sample, sample 0 included, runs in parallel (a sample that does not
            # fit is kept apart, as below)
            for key in sinks:
                if key not in self._ragged_sinks:
                    shape, dtype = self._sink_like[key]
                    dense[key] = self.batch_buffers.empty((bs, *shape), dtype)
        elif bs > 0:
            with _one_torch_thread():  # as on the pool's workers (the same values, no OpenMP team)
                one(0)  # sample 0 first: its outputs give the dense batch's shape
            start = 1
            for key in sinks:
                t = results[key][0]
                if key in self._ragged_sinks:  # its last batch's samples differed in shape: no dense batch
                    continue
                if isinstance(t, torch.Tensor) and t.device.type == "cpu" and t.numel() > 0:
                    buf = self.batch_buffers.empty((bs, *t.shape), t.dtype)  # memory filled before: no faults
                    buf[0].copy_(t)
                    results[key][0] = buf[0]
                    dense[key] = buf
        if self.pool is None or bs - start <= 2:
            with _one_torch_thread():
                for i in range(start, bs):
                    one(i)
        else:
            rest = parallel_map(self.pool, lambda j: one(j + start), bs - start)
            del rest
        for n in nodes:
            op = self.ops[n.id]
            keep = values[(n.inputs[0].node.id, n.inputs[0].index)].layout() if n.inputs else ""
            for k in range(len(n.outputs)):
                layout = keep if op.output_layout(k) is None else op.output_layout(k)
                buf = dense.get((n.id, k))
                samples = results[(n.id, k)]
                if buf is not None and all(t.data_ptr() == buf[i].data_ptr() for i, t in enumerate(samples)):
                    values[(n.id, k)] = TensorList(buf, layout)
                    self._sink_like[(n.id, k)] = (tuple(buf.shape[1:]), buf.dtype)
                else:
                    self._sink_like.pop((n.id, k), None)
                    values[(n.id, k)] = TensorList(samples, layout)
                    if (n.id, k) in sinks:
                        first = samples[0] if samples else None
                        uniform = all(isinstance(t, torch.Tensor) and isinstance(first, torch.Tensor)
                                      and t.shape == first.shape for t in samples)
                        (self._ragged_sinks.discard if uniform else self._ragged_sinks.add)((n.id, k))

    @staticmethod
    def _error(node: Node, e: Exception, sample: int | None, sources: list[str]) -> PipelineError:
        where = ""
        src = ""
        if sample is not None:
            src = sources[sample] if sample < len(sources) else ""
            where = f" on sample {sample}" + (f" ({src})" if src else "")
        tb = "".join(traceback.format_exception_only(type(e), e)).strip()
        msg = f"{node.describe()} failed{where}: {tb}"
        return PipelineError(msg, op=node.schema.display_name(), sample=src, origin=node.origin)

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        return {n.name: s for n in self.nodes if (s := self.ops[n.id].state_dict())}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for n in self.nodes:
            if n.name not in state and self.ops[n.id].state_dict():  # DALI 2.4 refuses it too
                raise SerializationError(f"checkpoint: it holds no state for op {n.name!r}, which has one; "
                                         "was it taken from another pipeline?")
            if n.name in state:
                try:
                    self.ops[n.id].load_state_dict(state[n.name])
                except TorchDaliError:  # the op's own verdict (another dataset, another shard)
                    raise
                except (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError) as e:
                    # a state that is not what the op saved (an edited or damaged checkpoint)
                    raise SerializationError(f"checkpoint: the saved state of {n.name!r} is malformed "
                                             f"({type(e).__name__}: {e})") from None

    def batch_info(self) -> dict[str, Any]:
        """Per reader, where the last batch stands in its epoch (`real` samples, `ended`)."""
        return {n.name: dict(info) for n, op in self.readers() if (info := op.batch_info)}

    def readers(self) -> list[tuple[Node, Operator]]:
        return [(n, self.ops[n.id]) for n in self.nodes if self.ops[n.id].epoch_size() is not None]

    def close(self) -> None:
        """Closes the ops and the thread pool, once, from any thread (also one of the pool's own,
        where the garbage collector may run a pipeline's __del__: that one is not waited for)."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        for op in self.ops.values():
            op.close()
        self.streams.release()
        pool, self.pool = self.pool, None
        if pool is not None:
            pool.shutdown(wait=not pool.owns_current_thread(), cancel_futures=True)
