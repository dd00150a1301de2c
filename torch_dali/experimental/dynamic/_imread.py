"""`ndd.imread(path)`: reads and decodes image files (one path: a Tensor; a list: a Batch). As in
DALI 2.4 it is `io.file.read` then `decoders.image`: a path may also be a Tensor (or a Batch of
them) holding the path's bytes, and a file that cannot be read fails as `io.file.read` does
(a RuntimeError, not an OSError)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _data, _invoke


def _path_tensor(p: Any) -> Any:
    """A path (str, pathlib.Path, ...) as a Tensor of its UTF-8 bytes; a Tensor is taken as is."""
    if isinstance(p, _data.Tensor):
        return p
    return _data.tensor(np.frombuffer(str(p).encode("utf-8"), dtype=np.uint8).copy())


def imread(path: Any, device: Any = "cpu", output_type: Any = None, **kwargs: Any) -> Any:
    """Decodes the image file(s) at `path` with `decoders.image` (HWC, RGB unless `output_type`)."""
    if device not in ("cpu", "gpu"):
        raise ValueError(f"imread: device must be 'cpu' or 'gpu', got {device!r}")
    if isinstance(path, (_data.Tensor, _data.Batch)):
        names = path
    elif isinstance(path, (list, tuple)):
        names = _data.batch([_path_tensor(p) for p in path])
    else:
        names = _path_tensor(path)
    encoded = _invoke.invoke("io.file.read", [names], {})
    if output_type is not None:
        kwargs["output_type"] = output_type
    return _invoke.invoke("decoders.image", [encoded], dict(kwargs, device=device))
