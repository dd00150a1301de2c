"""One error hierarchy. Every error a user can cause subclasses ValueError or TypeError."""
from __future__ import annotations


class TorchDaliError(Exception):
    """Base of every error torch_dali raises on purpose."""


class ArgumentError(TorchDaliError, ValueError):
    """An operator argument is missing, unknown or out of range."""


class ArgumentTypeError(TorchDaliError, TypeError):
    """An operator argument or input has the wrong type."""


class GraphError(TorchDaliError, ValueError):
    """The pipeline graph is malformed (wrong device, wrong input count, no outputs...)."""


class SerializationError(TorchDaliError, ValueError, RuntimeError):
    """A YAML pipeline cannot be read, or a graph cannot be written as YAML (also a RuntimeError,
    which DALI raises when a serialized pipeline does not parse or an op cannot be serialized)."""


class DataError(TorchDaliError, ValueError):
    """A sample cannot be read or decoded (missing file, corrupt JPEG, truncated record...)."""


class ListingError(DataError, RuntimeError):
    """A reader's dataset cannot be listed (a missing file or folder, a malformed index, no
    samples): a DataError, and a RuntimeError as DALI raises for it when the pipeline is built."""


class PipelineError(TorchDaliError, RuntimeError):
    """An operator failed while the pipeline ran. Names the op, the sample and where the op was made."""

    def __init__(self, message: str, *, op: str = "", sample: str = "", origin: str = "") -> None:
        super().__init__(message)
        self.op = op
        self.sample = sample
        self.origin = origin


def describe_op(op: str, origin: str) -> str:
    """`Resize (defined at train.py:42)`: how errors name an operator."""
    return f"{op} (defined at {origin})" if origin else op
