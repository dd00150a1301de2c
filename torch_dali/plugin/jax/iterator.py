"""`nvidia.dali.plugin.jax.iterator` (re-exported by `nvidia.dali.plugin.jax`): DALIGenericIterator (outputs as JAX arrays), data_iterator.

Needs JAX (importing this module without it is an ImportError, as DALI's). Each step returns one
dict keyed by `output_map`, not a list per pipeline: with several pipelines, a category's batches
are stacked on a new leading axis when they lie on one device, put on their devices as one array
(pmap's layout) when each lies on its own, or assembled into one global array along the batch axis
with `sharding`. The values are copies (the pipeline's buffers are its own again once the
step ends). LastBatchPolicy.PARTIAL is refused: every step's arrays have one shape. Epochs and
resets: see `base_iterator`."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import jax
import jax.dlpack
import jax.numpy as jnp
import torch

from ...errors import ArgumentError
from ...graph.pipeline import Pipeline
from ...graph.pipeline_def import pipeline_def
from ...tensor_list import TensorList, plain
from ..base_iterator import BaseIterator, LastBatchPolicy

__all__ = ["DALIGenericIterator", "LastBatchPolicy", "data_iterator"]


class JaxIteratorError(ArgumentError, AssertionError):
    """A setting the JAX iterator refuses; an AssertionError too, as DALI's (which asserts) is."""


def to_jax(tl: TensorList) -> jax.Array:
    """A dense batch as a JAX array of its own (a copy): CUDA data on their GPU through DLPack,
    host data on JAX's default device."""
    t = plain(tl).as_tensor()
    if t.is_cuda:
        return jax.dlpack.from_dlpack(t.contiguous()).copy()
    if t.dtype == torch.bfloat16:
        return jnp.array(t.float().numpy(), dtype=jnp.bfloat16)
    return jnp.array(t.numpy())


class DALIGenericIterator(BaseIterator):
    """Iterates pipelines; each step returns a dict of JAX arrays keyed by `output_map`."""

    def __init__(self, pipelines: Pipeline | Sequence[Pipeline], output_map: Sequence[str], size: int = -1,
                 reader_name: str | None = None, auto_reset: bool | str | None = False,
                 last_batch_padded: bool = False, last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                 prepare_first_batch: bool = True, sharding: Any = None) -> None:
        self.output_map = list(output_map)
        if len(set(self.output_map)) != len(self.output_map):
            raise JaxIteratorError(f"DALIGenericIterator (JAX): output_map names should be distinct, got "
                                   f"{self.output_map}")
        if sharding is not None and not isinstance(sharding, jax.sharding.Sharding):
            raise JaxIteratorError(f"DALIGenericIterator (JAX): `sharding` must be a jax.sharding.Sharding "
                                   f"(NamedSharding, PositionalSharding...), got {type(sharding).__name__}")
        if last_batch_policy is LastBatchPolicy.PARTIAL:
            raise JaxIteratorError("DALIGenericIterator (JAX): JAX iterator does not support partial last batch "
                                   "policy. (every step's arrays have one shape; use FILL or DROP)")
        self._sharding = sharding
        super().__init__(pipelines, size, reader_name, auto_reset, None, last_batch_padded, last_batch_policy,
                         prepare_first_batch)

    def _convert(self, outs: tuple[TensorList, ...], take: int | None) -> dict[str, jax.Array]:
        if len(outs) != len(self.output_map):
            raise ArgumentError(f"DALIGenericIterator (JAX): the pipeline has {len(outs)} outputs but "
                                f"output_map names {len(self.output_map)}")
        return {name: to_jax(tl) for name, tl in zip(self.output_map, outs)}

    def _next_batch(self) -> dict[str, jax.Array]:
        per_pipe = super()._next_batch()
        if len(per_pipe) == 1:
            return per_pipe[0]
        return {name: self._join([p[name] for p in per_pipe], name) for name in self.output_map}

    def _join(self, shards: list[jax.Array], name: str) -> jax.Array:
        shapes = {tuple(s.shape) for s in shards}
        if len(shapes) != 1:
            raise JaxIteratorError(f"DALIGenericIterator (JAX): output {name!r}: the pipelines' batches differ in "
                                   f"shape {sorted(shapes)}; Shards shapes have to be the same.")
        if self._sharding is not None:
            shape = (len(shards) * shards[0].shape[0], *shards[0].shape[1:])
            return jax.make_array_from_single_device_arrays(shape, self._sharding, shards)
        devices = [next(iter(s.devices())) for s in shards]
        if len(set(devices)) == 1:
            return jnp.stack(shards)
        if len(set(devices)) != len(devices):
            raise JaxIteratorError("DALIGenericIterator (JAX): the pipelines' outputs must lie each on its own "
                                   "device or all on one")
        return jax.device_put_sharded(shards, devices)


def data_iterator(pipeline_fn: Callable[..., Any] | None = None, output_map: Sequence[str] = (), size: int = -1,
                  reader_name: str | None = None, auto_reset: bool | str | None = False,
                  last_batch_padded: bool = False, last_batch_policy: LastBatchPolicy = LastBatchPolicy.FILL,
                  prepare_first_batch: bool = True, sharding: Any = None, **pipeline_kwargs: Any) -> Any:
    """Decorates a pipeline definition: calling the result builds the pipeline(s) and returns a JAX
    DALIGenericIterator over them. Pipeline arguments may be given here or in the call, not both.
    With `sharding`, one pipeline per local JAX device, each with `batch_size` / number of devices
    samples, `device_id` the local index, `shard_id` the device's id, `num_shards` the device count."""
    def decorate(func: Callable[..., Any]) -> Callable[..., DALIGenericIterator]:
        define = pipeline_def(func)

        def create(*args: Any, **call_kwargs: Any) -> DALIGenericIterator:
            both = sorted(set(call_kwargs) & set(pipeline_kwargs))
            if both:
                raise ValueError(f"data_iterator: {', '.join(both)} given both to the decorator and in the call")
            kw = {**call_kwargs, **pipeline_kwargs}
            if sharding is None:
                pipes = [define(*args, **kw)]
            else:
                n = len(jax.devices())
                kw["batch_size"] = int(kw["batch_size"]) // n
                pipes = [define(*args, **kw, device_id=i, shard_id=d.id, num_shards=n)
                         for i, d in enumerate(jax.local_devices())]
            return DALIGenericIterator(pipes, output_map, size=size, reader_name=reader_name, auto_reset=auto_reset,
                                       last_batch_padded=last_batch_padded, last_batch_policy=last_batch_policy,
                                       prepare_first_batch=prepare_first_batch, sharding=sharding)
        return create
    return decorate(pipeline_fn) if pipeline_fn is not None else decorate
