"""Pipeline, with DALI's names and meanings (its decorator, `pipeline_def`, is in pipeline_def.py)."""
from __future__ import annotations

import os
import random as _pyrandom
from typing import Any, Callable


from ..errors import ArgumentError, ArgumentTypeError, GraphError, PipelineError
from ..executor.executor import Executor
from ..executor.plan import Batch, Plan
from ..tensor_list import TensorList, user_view
from ..types import CPU_ONLY_DEVICE_ID
from .build_checks import check_callback_pickler, check_foreign_nodes, check_parallel_sources
from .cse import eliminate_common_subgraphs
from .graph import Graph
from .pipeline_queries import BuiltPipelineQueries
from .dali_api import (ACCEPTED, DaliAPI, OperatorConcurrency, OutputTypeError, StreamPolicy, as_nodes, executor_flag,
                       flatten_outputs, integer, numbers_only)


# seeds of unseeded pipelines: OS entropy, not the global `random` generator user code seeds
_SEED_SOURCE = _pyrandom.SystemRandom()


class Pipeline(DaliAPI, BuiltPipelineQueries):
    """A graph of ops and the machinery that runs it. Define it by subclassing (`define_graph`),
    with `with pipe: pipe.set_outputs(...)`, or with `@pipeline_def`."""

    def __init__(self, batch_size: int = -1, num_threads: int = -1, device_id: int | None = -1,
                 seed: int = -1, exec_pipelined: bool = True, prefetch_queue_depth: int | dict = 2,
                 exec_async: bool = True, bytes_per_sample: int = 0, set_affinity: bool = False,
                 max_streams: int = -1, default_cuda_stream_priority: int = 0,
                 enable_memory_stats: bool = False, py_num_workers: int = 1,
                 py_start_method: str = "fork", strict_device: bool = False, enable_checkpointing: bool = False,
                 checkpoint: Any = None, output_dtype: Any = None, output_ndim: Any = None,
                 output_layout: Any = None, stream_policy: Any = None, concurrency: Any = None,
                 debug: bool = False, **kwargs: Any) -> None:
        unknown = set(kwargs) - ACCEPTED
        if unknown:
            raise ArgumentError(f"Pipeline: unknown argument(s) {', '.join(sorted(unknown))}")
        batch_size = integer("batch_size", batch_size, -1)
        if batch_size < 1 and batch_size != -1:
            raise ArgumentError(f"Pipeline: `batch_size` must be a positive integer, got {batch_size!r}")
        num_threads = integer("num_threads", num_threads, -1)
        device_id = None if device_id is None else integer("device_id", device_id, -1)
        seed = integer("seed", seed, -1)
        if isinstance(prefetch_queue_depth, dict):
            prefetch_queue_depth = {k: integer(f"prefetch_queue_depth['{k}']", v, 2)
                                    for k, v in prefetch_queue_depth.items()}
        else:
            prefetch_queue_depth = integer("prefetch_queue_depth", prefetch_queue_depth, 2)
        self._batch_size = batch_size
        self._num_threads = num_threads if num_threads and num_threads > 0 else (os.cpu_count() or 1)
        self._num_threads_given = bool(num_threads and num_threads > 0)
        if device_id == CPU_ONLY_DEVICE_ID:
            device_id = None
        self._device_id = device_id
        self._seed_given = seed is not None and seed != -1
        # an unseeded pipeline draws its seed from the OS, leaving Python's global `random` state as
        # the user's code left it (DALI's Pipeline does not touch it either)
        self._seed = int(seed) if self._seed_given else _SEED_SOURCE.randrange(1 << 31)
        self._exec_async = bool(exec_async)
        self._exec_pipelined = bool(exec_pipelined)
        if isinstance(prefetch_queue_depth, dict):
            depth = max(int(prefetch_queue_depth.get("cpu_size", 2)), int(prefetch_queue_depth.get("gpu_size", 2)))
        else:
            depth = int(prefetch_queue_depth)
        if depth < 1:
            raise ArgumentError(f"Pipeline: `prefetch_queue_depth` must be >= 1, got {prefetch_queue_depth!r}")
        self._prefetch_queue_depth = depth
        self._strict_device = strict_device
        # set by torch_dali.DataLoader before build: the pipeline feeds a training loop, and its
        # GPU work keeps out of the training's way (`_knobs.training_feed`)
        self.feeds_training = False
        self._py_num_workers = integer("py_num_workers", py_num_workers, 1)
        self._py_start_method = py_start_method
        self._py_callback_pickler = kwargs.get("py_callback_pickler")
        check_callback_pickler(self._py_callback_pickler, py_start_method)
        self._graph: Graph | None = None
        self._executor: Executor | None = None
        self._last_batch: Batch | None = None
        self._consumed_state: dict[str, Any] = {"iteration": 0, "ops": {}}
        self._py_graph_fn: Callable[[], Any] | None = None
        self._built = False
        self._output_error: Exception | None = None  # set_outputs met a non-output: raised by build(), as DALI does
        self._setup_ended = False  # iter_setup() raised StopIteration (DALI's end of an epoch)
        self._conditionals = False
        self._debug = bool(debug)
        self._set_output_descs(output_dtype, output_ndim, output_layout)
        self._stream_policy = executor_flag("stream_policy", stream_policy, StreamPolicy)
        self._concurrency = executor_flag("concurrency", concurrency, OperatorConcurrency)
        self._enable_checkpointing = bool(enable_checkpointing)
        self._restored: tuple[dict[str, Any], dict[str, int], Any] | None = None
        if checkpoint is not None:
            from ..checkpointing import loads
            self._restored = loads(checkpoint)  # checked now: a bad checkpoint fails at construction

    # -- properties ----------------------------------------------------------------------------
    @property
    def batch_size(self) -> int:
        return self._batch_size

    @property
    def max_batch_size(self) -> int:
        return self._batch_size

    @property
    def num_threads(self) -> int:
        return self._num_threads

    @property
    def device_id(self) -> int | None:
        """The GPU the pipeline runs on, or None. Left at its default (-1, the current device) it
        is decided at build, as DALI's: the current device if the graph has GPU or mixed ops,
        else None (also before the build)."""
        if self._device_id != -1:
            return self._device_id
        cuda = self._executor.plan.cuda if self._executor is not None else None
        return None if cuda is None else int(cuda.index)

    @property
    def device_id_setting(self) -> int | None:
        """`device_id` as given (-1: the current device once built, if the graph needs one):
        what a saved pipeline writes."""
        return self._device_id

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def py_num_workers(self) -> int:
        """As given (DALI's worker count for `parallel=True` external sources; torch_dali runs
        them on the pipeline's threads, but refuses 0 workers with such a source, as DALI does)."""
        return self._py_num_workers

    @property
    def py_start_method(self) -> str:
        return self._py_start_method

    @property
    def stream_policy(self) -> StreamPolicy | None:
        """DALI's executor stream policy as given (None: not given); no effect here."""
        return self._stream_policy

    @property
    def concurrency(self) -> OperatorConcurrency | None:
        """DALI's executor operator concurrency as given (None: not given); no effect here."""
        return self._concurrency

    @property
    def built(self) -> bool:
        """Whether build() has run (a DataLoader needs the pipeline before, to set its shards)."""
        return self._built

    @property
    def seed_given(self) -> bool:
        """Whether the seed was given (else it was drawn at random for this process)."""
        return self._seed_given

    @property
    def exec_async(self) -> bool:
        return self._exec_async

    @property
    def exec_pipelined(self) -> bool:
        return self._exec_pipelined

    @property
    def prefetch_queue_depth(self) -> int:
        return self._prefetch_queue_depth

    @property
    def strict_device(self) -> bool:
        """Whether GPU ops without CUDA are an error (else they run on the CPU, with a warning)."""
        return self._strict_device

    @property
    def executor(self) -> Executor:
        """What runs the built pipeline (builds it first): its `plan` (ops, steps, readers, per-op
        timing), its stages, `stage_stats()` and `memory_stats()`; for tools and diagnostics."""
        return self._exec()

    @property
    def graph(self) -> Graph:
        self._ensure_graph()
        return self._graph  # type: ignore[return-value]

    # -- definition ----------------------------------------------------------------------------
    def define_graph(self) -> Any:
        """Override in a subclass: call ops and return the outputs."""
        raise GraphError("Pipeline has no graph: subclass it and implement define_graph(), use "
                         "`with pipe: pipe.set_outputs(...)`, or use @pipeline_def")

    def __enter__(self) -> "Pipeline":
        Pipeline.push_current(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        Pipeline.pop_current()

    def set_outputs(self, *outputs: Any) -> None:
        """The pipeline's outputs: DataNodes (made inside `with pipe:` or outside any pipeline) or
        constants (NumPy arrays, numbers), which become constant outputs."""
        if self._built:
            raise GraphError("set_outputs: the pipeline is already built")
        self.graph_in_definition()
        Pipeline.push_current(self)
        try:
            outs = as_nodes(flatten_outputs(outputs))
        except OutputTypeError as e:  # DALI refuses such outputs at build(), so code may catch it there
            self._output_error = e
            return
        finally:
            Pipeline.pop_current()
        self._output_error = None
        self._graph.set_outputs(outs)

    def graph_in_definition(self) -> Graph:
        """The graph that ops called now join while this pipeline is current (`with pipe:`,
        define_graph), made empty on first use; `graph` traces the definition first."""
        if self._graph is None:
            self._graph = Graph(self._seed)
        return self._graph

    def _ensure_graph(self, outputs_required: bool = True) -> None:
        """Trace the definition unless done. `outputs_required=False` (a @pipeline_def call) lets a
        definition without outputs pass, as DALI does; building such a pipeline fails."""
        if self._output_error is not None:
            raise self._output_error
        if self._graph is not None and self._graph.outputs:
            return
        Pipeline.push_current(self)
        try:
            py_fn = self._py_graph_fn is not None
            outs = self._py_graph_fn() if py_fn else self.define_graph()
            if outs is None:  # a definition that returns nothing has no outputs, as in DALI
                outs = ()
            # a @pipeline_def function's list of numbers is one constant output, as in DALI (which
            # unpacks only tuples there); other lists are outputs, as define_graph's are in DALI
            several = isinstance(outs, tuple) or (isinstance(outs, list) and not (py_fn and numbers_only(outs)))
            outs = as_nodes(flatten_outputs(outs if several else (outs,)))
        finally:
            Pipeline.pop_current()
        if not outs and not outputs_required:
            return
        self._graph.set_outputs(outs)  # type: ignore[union-attr]

    # -- running -------------------------------------------------------------------------------
    @property
    def debug(self) -> bool:
        """Debug mode (DALI's experimental `debug=True`): run() calls the definition each iteration
        and every op in it runs at once on real batches (see torch_dali.eager)."""
        return self._debug

    def start_py_workers(self) -> None:
        """DALI starts the worker processes of `parallel=True` external sources here (before build,
        so that they fork without a CUDA context). torch_dali runs such sources on the pipeline's
        threads, so there is nothing to start: like DALI's, the call is accepted before or after
        build, more than once, and with no parallel source at all."""
        return None

    def build(self) -> None:
        if self._built:
            return
        if self._batch_size < 1:
            raise ArgumentError("Pipeline: `batch_size` must be given (a positive integer) to build")
        if self._debug:
            if self._py_graph_fn is None:
                raise PipelineError("Pipeline: debug mode runs a @pipeline_def definition; a Pipeline "
                                    "subclass or `with pipe:` graph cannot run in debug mode")
            self._built = True
            return
        self._ensure_graph()
        check_foreign_nodes(self._graph)  # type: ignore[arg-type]
        self._check_output_descs(len(self._graph.outputs))  # type: ignore[union-attr]
        check_parallel_sources(self._graph, self._py_num_workers, self._py_start_method,  # type: ignore[arg-type]
                               self._py_callback_pickler)
        if self._restored is not None:  # the seeds the checkpointed pipeline drew
            from ..checkpointing import check_same_pipeline
            names = {n.name for n in self._graph.reachable()}  # type: ignore[union-attr]
            check_same_pipeline(*self._restored[:2], names)
            for node in self._graph.nodes:  # type: ignore[union-attr]
                if node.name in self._restored[1]:
                    node.seed = self._restored[1][node.name]
        if self._device_id is not None and self._device_id < -1:
            raise PipelineError(f"Pipeline: device_id {self._device_id} is invalid (a GPU index, -1 for the "
                                "current device, or None for CPU only)")
        plan = Plan(eliminate_common_subgraphs(self._graph), self._batch_size,  # type: ignore[arg-type]
                    self._num_threads, self._device_id, self._strict_device, self.feeds_training)
        self._executor = Executor(plan, self._prefetch_queue_depth, self._exec_async, self._exec_pipelined)
        self._built = True
        if self._enable_checkpointing:
            from ..ops.external_source_api import warn_unrestorable_sources
            warn_unrestorable_sources(plan)
        if self._restored is not None:
            self.load_state_dict(self._restored[0])

    def _exec(self) -> Executor:
        if not self._built:
            self.build()
        return self._executor  # type: ignore[return-value]

    def run(self, *, timeout: float | None = None, **pipeline_inputs: Any) -> tuple[TensorList, ...]:
        """The next batch of every output, as TensorLists: `schedule_run()` then `outputs()`, as
        DALI's. `timeout` (seconds; with exec_async, the default): a PipelineError naming the
        running ops when no batch is ready by then. `pipeline_inputs` (DALI's `run(name=batch)`):
        each a batch fed to the external source of that name first (`feed_input`); only where
        no batch runs ahead of its input (prefetch_queue_depth=1 or exec_pipelined=False)."""
        if pipeline_inputs:
            if self._exec_pipelined and self._prefetch_queue_depth > 1:
                raise PipelineError(
                    f"Pipeline.run: inputs given by name ({', '.join(pipeline_inputs)}) need prefetch_queue_depth=1 "
                    f"or exec_pipelined=False (got prefetch_queue_depth={self._prefetch_queue_depth}, "
                    f"exec_pipelined={self._exec_pipelined}); otherwise feed them with feed_input() or `source`")
            if not self._debug:
                self.build()
            for name, value in pipeline_inputs.items():
                self.feed_input(name, value)
        if self._debug:
            if not self._built:
                self.build()
            if _debug_runner is None:
                raise PipelineError("Pipeline: debug mode needs torch_dali.eager (import torch_dali)")
            return _debug_runner(self, self._py_graph_fn)
        self.schedule_run()
        return self.outputs(timeout=timeout)

    def schedule_run(self) -> None:
        """DALI's: schedules iterations (the first call `prefetch_queue_depth` of them, later calls
        one), each after an `iter_setup()`; external sources' `source` callables run now, on this
        thread, for what is scheduled. An iter_setup() that raises StopIteration ends the epoch:
        `outputs()` raises it once the batches scheduled before are taken."""
        if self._debug:
            raise PipelineError("Pipeline: a debug-mode pipeline runs with run() only (no schedule_run/outputs)")
        executor = self._exec()  # build first: iter_setup may feed inputs
        for _ in range(executor.schedule_count()):
            if self._setup_ended:
                return
            try:
                self.iter_setup()
            except StopIteration:
                self._setup_ended = True
                return
            executor.schedule_one()

    def outputs(self, *, timeout: float | None = None) -> tuple[TensorList, ...]:
        """The next scheduled batch (after schedule_run(); without one, it schedules it)."""
        executor = self._exec()
        if self._setup_ended and executor.pending() == 0:
            raise StopIteration
        batch = executor.next(timeout)
        self._last_batch = batch
        self._consumed_state = batch.state
        self._verify_outputs(batch.outputs)
        return tuple(user_view(tl) for tl in batch.outputs)

    share_outputs = outputs

    def empty(self) -> bool:
        """Whether no scheduled batch is waiting to be taken (DALI's)."""
        return self._executor is None or self._executor.pending() == 0

    def release_outputs(self) -> None:
        self._last_batch = None

    def iter_setup(self) -> None:
        """DALI's hook called before each run(); override to feed external sources."""

    def reset(self) -> None:
        """After an external source ended (run() raised StopIteration), starts its next epoch as
        DALI does; otherwise nothing to do: readers move across epochs by themselves."""
        if self._setup_ended:  # iter_setup() ended the epoch: the next schedule_run() starts the next
            self._setup_ended = False
            if self._executor is not None:
                self._executor.rearm()
        if self._executor is not None:
            from ..ops.external_source_api import reset_sources
            reset_sources(self._executor, int(self._consumed_state.get("iteration", 0)))

    def feed_input(self, data_node: Any, data: Any, layout: str | None = None, cuda_stream: Any = None,
                   use_copy_kernel: bool = False) -> None:
        """Queues the next batch of the external source `data_node` (its name or DataNode); call it
        before each run(), e.g. in iter_setup(). A tuple of batches when it has num_outputs > 1."""
        if self._debug:  # no executor: the debug run hands the batch to the source when it runs
            name = getattr(getattr(data_node, "node", None), "name", data_node)
            self.__dict__.setdefault("debug_fed", {}).setdefault(str(name), []).append((data, layout))
            return
        from ..ops.external_source_api import feed_input
        feed_input(self, data_node, data, layout)

    # -- readers -------------------------------------------------------------------------------
    def set_node_args(self, name: str, *, seed: int | None = None, **args: Any) -> None:
        """Before build: sets constant arguments (and, with `seed`, the seed) of the node `name`, as
        if it had been defined with them. Names are checked against the op's schema here, values
        when the op is built. (What DataLoader uses to shard readers and pick CMN's output.)"""
        if self._built:
            raise GraphError(f"set_node_args: the pipeline is already built; cannot change '{name}'")
        node = self.graph.find(name)
        unknown = [k for k in args if node.schema.arg(k) is None]
        if unknown:
            raise ArgumentError(f"{node.describe()}: unknown argument(s) {', '.join(unknown)}")
        node.args = {**node.args, **args}
        for k in args:
            node.arg_inputs.pop(k, None)  # a constant replaces a per-sample input
        if seed is not None:
            node.seed = int(seed)
            node.seed_given = True  # as if given at definition (a reader's shared shard seed)

    # -- serialization -------------------------------------------------------------------------
    def define_from(self, body: Callable[[], Any], conditionals: bool = False) -> None:
        """Makes `body()` this pipeline's definition (what `pipeline_def` does): traced now, as DALI
        traces it, so errors in the definition surface here; a debug pipeline runs it at each run()."""
        self._py_graph_fn = body
        self._conditionals = conditionals
        if not self._debug:
            self._ensure_graph(outputs_required=False)

    def serialize(self, define_graph: Callable | None = None, filename: str | None = None) -> str:
        from ..serialization.yaml_io import dump_pipeline
        if define_graph is not None:
            if not callable(define_graph):
                raise ArgumentTypeError(f"serialize: `define_graph` must be a callable that defines the graph, got "
                                        f"{type(define_graph).__name__} (to write a file, pass filename=...)")
            self._py_graph_fn = define_graph
        self._ensure_graph()
        self._check_output_descs(len(self._graph.outputs))  # type: ignore[union-attr] - as build() does
        text = dump_pipeline(self)
        if filename is not None:
            with open(filename, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    @classmethod
    def deserialize(cls, serialized_pipeline: str | bytes | None = None, filename: str | None = None,
                    **overrides: Any) -> "Pipeline":
        from ..serialization.yaml_io import load_pipeline
        pipe, graph = load_pipeline(serialized_pipeline, filename, overrides, Pipeline)
        pipe._graph = graph
        return pipe

    def deserialize_and_build(self, serialized_pipeline: str | bytes, *, allow_modules: Any = None,
                              allow_functions: Any = None) -> None:
        """Replaces this pipeline's graph with the serialized one. This pipeline's own batch size,
        threads and seed are kept where it was given them, else the serialized pipeline's are taken
        (as DALI 2.4 does); its device, prefetch and executor settings are its own. Each op keeps
        the seed written for it (a pipeline seed decides only ops written without one). Functions
        named in the YAML
        resolve as in `deserialize` (`allow_modules`, `allow_functions`)."""
        from ..serialization.callables import allow_list
        from ..serialization.yaml_io import load_graph
        if self._built:
            raise GraphError("deserialize_and_build: this pipeline is already built")
        written: dict[str, Any] = {}

        def pick_seed(params: dict[str, Any]) -> int:
            written.update({k: v for k, v in params.items() if isinstance(v, int) and not isinstance(v, bool)})
            return self._seed if self._seed_given or written.get("seed", -1) == -1 else written["seed"]

        graph = load_graph(serialized_pipeline, pick_seed, allow=allow_list(allow_modules, allow_functions))
        if self._batch_size < 1 and written.get("batch_size", 0) >= 1:
            self._batch_size = written["batch_size"]
        if not self._num_threads_given and written.get("num_threads", 0) >= 1:
            self._num_threads = written["num_threads"]
        if not self._seed_given and written.get("seed", -1) != -1:
            self._seed, self._seed_given = written["seed"], True
        self._graph = graph
        self.build()

    # -- teardown ------------------------------------------------------------------------------
    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None
        self._built = False

    close = shutdown
    _shutdown = shutdown  # DALI's private name, which DALI's own tests call

    def __del__(self) -> None:
        try:
            if self._executor is not None:
                self._executor.shutdown(wait=False)
        except Exception:  # noqa: BLE001 - interpreter teardown
            pass


_debug_runner: Any = None


def set_debug_runner(fn: Any) -> None:
    """Installs what runs one iteration of a debug-mode pipeline: fn(pipe, definition) -> outputs."""
    global _debug_runner
    _debug_runner = fn
