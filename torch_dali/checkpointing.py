"""DALI's checkpointing API on top of `Pipeline.state_dict()`.

`Pipeline(enable_checkpointing=True)`; `pipe.checkpoint()` gives a string (also written to
`filename` when given); `Pipeline(..., checkpoint=that_string)` resumes where it was taken: the
batches that follow are the ones the original pipeline gives next (readers' positions, epochs and
the iteration counter that keys every random draw). Framework iterators (`DALIGenericIterator`)
add their own position: `it.checkpoints()`, one string per pipeline.

The string is JSON (DALI's is a protobuf; the two are not interchangeable): `{"torch_dali_checkpoint":
1, "state": <state_dict>, "seeds": {op name: seed}, "iterator_data": ...}`. It is read as untrusted input: JSON only, size
limited, structure checked, never executed.

External sources are checkpointed when their source is a callable taking the iteration or the
sample info (their position is the iteration and epoch); an iterable, an iterator or a callable
without arguments has state torch_dali cannot see, so a warning says the checkpoint will not
cover it, as DALI does.
"""
from __future__ import annotations

import json
import warnings
from typing import Any

from .errors import SerializationError

FORMAT = "torch_dali_checkpoint"
VERSION = 1
MAX_BYTES = 64 << 20  # a checkpoint holds positions and counters: anything larger is not one


_INT64 = 1 << 63


def _int_in(v: Any, lo: int, hi: int) -> bool:
    """An int (not a bool) in [lo, hi): what seeds and counters are; anything else is not a checkpoint."""
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v < hi


def dumps(state: dict[str, Any], seeds: dict[str, int], iterator_data: Any = None) -> str:
    """The checkpoint string of a pipeline state, its ops' seeds (a pipeline made without a seed
    draws new ones: the restored one must draw what the original would) and, optionally, an
    iterator's position."""
    try:
        return json.dumps({FORMAT: VERSION, "state": state, "seeds": seeds, "iterator_data": iterator_data},
                          sort_keys=True)
    except (TypeError, ValueError) as e:
        raise SerializationError(f"checkpoint: the pipeline state cannot be written as JSON ({e})") from None


def loads(text: str | bytes) -> tuple[dict[str, Any], dict[str, int], Any]:
    """(state, seeds, iterator_data) from a checkpoint string; raises SerializationError on anything
    else."""
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            raise SerializationError(f"checkpoint: {len(text)} bytes is too large for a checkpoint")
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise SerializationError("checkpoint: not UTF-8 text (was it made by torch_dali's checkpoint()?)") from None
    if not isinstance(text, str):
        raise SerializationError(f"checkpoint: expected the string checkpoint() returned, got {type(text).__name__}")
    if len(text) > MAX_BYTES:
        raise SerializationError(f"checkpoint: {len(text)} characters is too large for a checkpoint")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError):
        raise SerializationError("checkpoint: not a torch_dali checkpoint (not JSON); DALI's own checkpoints "
                                 "cannot be read by torch_dali") from None
    if not isinstance(doc, dict) or doc.get(FORMAT) != VERSION or not isinstance(doc.get("state"), dict):
        raise SerializationError(f"checkpoint: not a torch_dali checkpoint of version {VERSION}")
    state = doc["state"]
    it = state.get("iteration", 0)
    if not isinstance(state.get("ops", {}), dict) or not _int_in(it, 0, _INT64):
        raise SerializationError("checkpoint: the pipeline state is malformed")
    seeds = doc.get("seeds") or {}
    if not isinstance(seeds, dict) or not all(isinstance(k, str) and _int_in(v, -_INT64, _INT64)
                                              for k, v in seeds.items()):
        raise SerializationError("checkpoint: the op seeds are malformed (integers of 64 bits)")
    return state, seeds, doc.get("iterator_data")


def check_same_pipeline(state: dict[str, Any], seeds: dict[str, int], names: set[str]) -> None:
    """Refuses a checkpoint of another pipeline, as DALI 2.4 does: every op it saved must be one of
    this pipeline's (`names`), and, as it names every op's seed, every op here must be in it. Applied
    by name, a foreign one would otherwise resume some readers and silently restart the rest."""
    foreign = sorted((set(state.get("ops", {})) | set(seeds)) - names)
    if foreign:
        raise SerializationError(f"checkpoint: it saved op {foreign[0]!r}, which this pipeline does not have; "
                                 "was it taken from another pipeline?")
    missing = sorted(names - set(seeds)) if seeds else []  # seeds list every op the checkpointed pipeline had
    if missing:
        raise SerializationError(f"checkpoint: it holds nothing for op {missing[0]!r} of this pipeline; was it "
                                 "taken from another pipeline?")


def warn_uncaptured(where: str) -> None:
    warnings.warn(f"{where}: torch_dali does not capture the state of such a `source` (an iterable, an iterator "
                  "or a callable without arguments); a checkpoint will not restore its position. Use a callable "
                  "that takes the iteration or the sample info.", RuntimeWarning, stacklevel=3)
