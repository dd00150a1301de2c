"""The data-loader side of DALI's proxy: the callable a torch Dataset calls per sample in place of
its transform, the references it hands back instead of the pipeline's outputs, and the collate
rule that turns one batch of those references into a batch reference (and, unless the server is
deterministic, sends that batch's inputs to the server at once, from the worker that made it)."""
from __future__ import annotations

import os
import threading
import uuid
from inspect import Parameter, Signature
from typing import Any

from torch.utils.data._utils.collate import default_collate_fn_map

from .channel import send

_token: tuple[int, str] | None = None


def _process_token() -> str:
    """A name for this process, fresh in every worker (forked or spawned): batch ids made by
    workers of an earlier epoch, whose outputs may still be on their way, never match new ones."""
    global _token
    if _token is None or _token[0] != os.getpid():
        _token = (os.getpid(), uuid.uuid4().hex[:12])
    return _token[1]


class DALIPipelineRunRef:
    """One pipeline iteration: the batch the samples given to the proxy make up. `call_args`
    holds each input's samples until they are sent to the server."""

    def __init__(self, batch_id: tuple) -> None:
        self.batch_id = batch_id
        self.call_args: dict[str, list] = {}
        self.is_scheduled = False
        self.is_complete = False
        self.first_sample = 0  # the proxy's index of the first sample call_args holds
        # the server process only: what produce_data got (outputs or an error), for any other
        # reference to the same run met later
        self.result: tuple | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "result": None}

    def __repr__(self) -> str:
        return (f"DALIPipelineRunRef(batch_id={self.batch_id}, inputs={sorted(self.call_args)}, "
                f"is_scheduled={self.is_scheduled}, is_complete={self.is_complete})")


class DALIOutputSampleRef:
    """What the proxy returns for one sample and one pipeline output."""

    def __init__(self, proxy: "DALIProxy", pipe_run_ref: DALIPipelineRunRef, output_idx: int,
                 sample_idx: int) -> None:
        self.proxy = proxy
        self.pipe_run_ref = pipe_run_ref
        self.output_idx = output_idx
        self.sample_idx = sample_idx

    def __repr__(self) -> str:
        return (f"DALIOutputSampleRef({self.pipe_run_ref!r}, output_idx={self.output_idx}, "
                f"sample_idx={self.sample_idx})")


class DALIOutputBatchRef:
    """A batch of one pipeline output, to be replaced by the data (DALIServer.produce_data)."""

    def __init__(self, pipe_run_ref: DALIPipelineRunRef, output_idx: int) -> None:
        self.pipe_run_ref = pipe_run_ref
        self.output_idx = output_idx

    def __repr__(self) -> str:
        return f"DALIOutputBatchRef(pipe_run_ref={self.pipe_run_ref!r}, output_idx={self.output_idx})"


class _OpenRun:
    """A thread's batch in the making: its run and how many samples it holds."""

    def __init__(self) -> None:
        self.run: DALIPipelineRunRef | None = None
        self.count = 0
        self.next_batch = 0


class DALIProxy:
    """`DALIServer.proxy`: call it with one sample of each of the pipeline's inputs (named as its
    external sources; positionally too when there is one) and it returns references to the
    sample's outputs. Picklable, so spawned workers get it with the Dataset."""

    def __init__(self, input_names: list[str], num_outputs: int, deterministic: bool, inbox: tuple[str, bytes],
                 local_queue: Any) -> None:
        self._names = tuple(input_names)
        self._num_outputs = num_outputs
        self._deterministic = deterministic
        self._inbox = inbox  # the server's socket address and key: from worker processes (channel.py)
        self._local_queue = local_queue  # a plain queue: from the server's own process
        self._home = os.getpid()
        self._setup()

    def _setup(self) -> None:
        kind = Parameter.POSITIONAL_OR_KEYWORD if len(self._names) == 1 else Parameter.KEYWORD_ONLY
        outs = tuple(DALIOutputSampleRef for _ in range(self._num_outputs))
        self.__signature__ = Signature([Parameter(n, kind) for n in self._names], return_annotation=outs)
        self._open: dict[tuple[int, int], _OpenRun] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        keep = ("_names", "_num_outputs", "_deterministic", "_inbox", "_home")
        return {k: self.__dict__[k] for k in keep}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._local_queue = None  # another process: it sends through the server's socket
        self._setup()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            raise ValueError(f"DALI proxy: call it as proxy{self.__signature__} (one sample of each pipeline "
                             f"input); got {len(args)} positional and keyword(s) {sorted(kwargs)}: {e}") from None
        with self._lock:
            state = self._open.setdefault((os.getpid(), threading.get_ident()), _OpenRun())
        if state.run is None or state.run.is_complete:
            state.run = DALIPipelineRunRef((_process_token(), threading.get_ident(), state.next_batch))
            state.next_batch += 1
            state.count = 0
        run = state.run
        for name in self._names:
            run.call_args.setdefault(name, []).append(bound.arguments[name])
        refs = tuple(DALIOutputSampleRef(self, run, i, state.count) for i in range(self._num_outputs))
        state.count += 1
        return refs[0] if len(refs) == 1 else refs

    def send_run(self, run: DALIPipelineRunRef) -> None:
        """Hands the run's inputs to the server: from its own process directly, from a worker
        through the server's socket. The run keeps its id, not the data."""
        if not run.call_args:
            raise RuntimeError(f"DALI proxy: batch {run.batch_id} has no inputs to send (sent already?)")
        item = (run.batch_id, run.call_args)
        if os.getpid() == self._home and self._local_queue is not None:
            self._local_queue.put(item)
        else:
            send(*self._inbox, item)
        run.call_args = {}
        run.is_scheduled = True


def collate_dali_output_sample_ref_fn(samples: Any, *, collate_fn_map: Any = None) -> DALIOutputBatchRef:
    """default_collate's rule for DALIOutputSampleRef: the samples of one batch, in the order the
    proxy gave them out, become one batch reference (and the batch goes to the server now, unless
    the server is deterministic: then produce_data sends it, in the loader's order)."""
    samples = list(samples)
    if not samples:
        raise RuntimeError("DALI proxy: no samples to collate")
    first = samples[0]
    for i, s in enumerate(samples):
        if s.proxy is not first.proxy or s.pipe_run_ref is not first.pipe_run_ref or s.output_idx != first.output_idx:
            raise RuntimeError("DALI proxy: the samples collated into one batch must be the proxy's outputs for "
                               "one batch (the same pipeline output, in the order the proxy was called)")
        if s.sample_idx != first.sample_idx + i:
            raise RuntimeError(f"DALI proxy: sample {i} of the batch is the proxy's sample {s.sample_idx}, after "
                               f"{first.sample_idx}; a batch must hold the samples in the order the proxy was called")
    run = first.pipe_run_ref
    if run.call_args and not run.is_scheduled:
        # samples given to the proxy before this batch's first one belong to a batch that was never
        # collated (its Dataset raised after them): dropped, so that the worker's batches go on
        held = len(next(iter(run.call_args.values())))
        if first.sample_idx + len(samples) != run.first_sample + held:
            raise RuntimeError(f"DALI proxy: a batch of {len(samples)} samples from sample {first.sample_idx} does "
                               f"not end where the proxy's batch in the making does ({run.first_sample + held})")
        drop = first.sample_idx - run.first_sample
        run.call_args = {k: v[drop:] for k, v in run.call_args.items()}
        run.first_sample = first.sample_idx
    run.is_complete = True
    if not first.proxy._deterministic and not run.is_scheduled:
        first.proxy.send_run(run)
    return DALIOutputBatchRef(run, first.output_idx)


# torch's default_collate (and so its DataLoader) collates the proxy's references with this rule;
# set at import, which a spawned worker does when it unpickles the proxy
default_collate_fn_map[DALIOutputSampleRef] = collate_dali_output_sample_ref_fn
