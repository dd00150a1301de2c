"""`nvidia.dali.plugin.jax`: the JAX iterator. A package, as DALI 2.4's is, so that code importing
its submodule (`from nvidia.dali.plugin.jax.iterator import DALIGenericIterator`, as DALI's own
JAX tests do) finds the same names. Needs JAX, as DALI's (an ImportError without it)."""
from __future__ import annotations

from .iterator import DALIGenericIterator, JaxIteratorError, LastBatchPolicy, data_iterator, to_jax

__all__ = ["DALIGenericIterator", "LastBatchPolicy", "data_iterator"]
