"""What a built pipeline reports: its readers, where it stands (state), the samples it skipped and
the memory it holds. A base of Pipeline (pipeline.py), kept apart from defining and running it."""
from __future__ import annotations

from typing import Any, Callable

from ..errors import GraphError


class BuiltPipelineQueries:
    """Pipeline's queries of its built plan and executor (`_exec()` builds the pipeline first)."""

    _batch_size: int
    _built: bool
    _consumed_state: dict[str, Any]
    _executor: Any
    _last_batch: Any
    _exec: Callable[[], Any]  # Pipeline's: the executor, building the pipeline first
    build: Callable[[], None]

    def reader_names(self) -> list[str]:
        """The names of the pipeline's readers (ops with epochs), in definition order (builds)."""
        return [n.name for n, _ in self._exec().plan.readers()]

    def reader(self, name: str | None = None) -> Any:
        """The reader op `name` (default: the first) of the built pipeline: its `epoch_order(e)`,
        `meta()`, `state_dict()`, `sample(i)`, `source(i)`, `classes` and `may_skip`."""
        return self._reader_ops(name)[0][1]

    def last_batch_info(self, name: str) -> dict[str, Any]:
        """Where the batch last returned by run() stands in reader `name`'s epoch: `real` samples
        (the rest is padding or the next epoch) and whether the epoch `ended` in it."""
        info = (self._consumed_state.get("info") or {}).get(name)
        return dict(info) if info else {"real": self._batch_size, "ended": False}

    def _reader_ops(self, name: str | None):
        readers = self._exec().plan.readers()
        if name is not None:
            readers = [r for r in readers if r[0].name == name]
            if not readers:
                raise GraphError(f"no reader named '{name}' in this pipeline")
        return readers

    def epoch_size(self, name: str | None = None) -> Any:
        readers = self._reader_ops(name)
        if name is not None:
            return readers[0][1].epoch_size()
        return {n.name: op.epoch_size() for n, op in readers}

    def reader_meta(self, name: str | None = None) -> Any:
        readers = self._reader_ops(name)
        metas = {n.name: op.meta() for n, op in readers}  # type: ignore[attr-defined]
        return metas[name] if name is not None else metas

    # -- state ---------------------------------------------------------------------------------
    def state_dict(self) -> dict[str, Any]:
        """Where the pipeline stands after the last batch the caller took."""
        if not self._built:
            self.build()
        if self._consumed_state.get("iteration", 0) == 0 and not self._consumed_state.get("ops"):
            return {"iteration": 0, "ops": self._exec().plan.state_dict()}
        return dict(self._consumed_state)

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._exec().restore(state)
        self._consumed_state = dict(state)

    def skipped(self) -> list:
        """Samples left out by readers and decoders with on_error="skip": (op, source, reason), in
        plan order (builds the pipeline if needed). Readers log their own problems and those their
        consumers' checks found, each under the name of the op that found it."""
        plan = self._exec().plan
        return [s for node in plan.nodes if (log := plan.op(node).skip_log) is not None for s in log.items()]

    # -- memory ----------------------------------------------------------------------------------
    def external_source_shm_statistics(self) -> dict[str, list[int]]:
        """DALI's sizes of the shared-memory chunks its worker processes pass `parallel=True` samples
        through. torch_dali's parallel sources run on the pipeline's threads and hand samples over
        in-process, so there are no chunks: both lists are always empty."""
        return {"capacities": [], "per_sample_capacities": []}

    def memory_stats(self) -> dict[str, int]:
        """What this pipeline holds now: prefetched batches and batches waiting between stages (host
        and device bytes), its threads, and the CUDA caching allocator's totals for its device
        (shared with the rest of the process)."""
        stats = {"prefetched_batches": 0, "prefetched_host_bytes": 0, "prefetched_device_bytes": 0,
                 "staged_batches": 0, "staged_host_bytes": 0, "staged_device_bytes": 0,
                 "threads": 0, "cuda_allocated_bytes": 0, "cuda_reserved_bytes": 0}
        ex = self._executor
        if ex is None:
            return stats
        stats.update(ex.memory_stats())
        if ex.plan.cuda is not None:
            import torch
            stats["cuda_allocated_bytes"] = int(torch.cuda.memory_allocated(ex.plan.cuda))
            stats["cuda_reserved_bytes"] = int(torch.cuda.memory_reserved(ex.plan.cuda))
        return stats

    def release_memory(self) -> None:
        """Drops prefetched batches (the next run() recomputes them: nothing is skipped) and
        returns cached CUDA blocks to the driver; for use between phases (train -> eval)."""
        if self._executor is not None and self._consumed_state.get("ops") is not None \
                and self._last_batch is not None:  # before the first run() nothing is prefetched
            self._executor.restore(self._consumed_state)
        import gc
        gc.collect()
        import torch
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
