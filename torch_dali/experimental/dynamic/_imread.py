"""`ndd.imread(path)`: reads and decodes image files (one path: a Tensor; a list: a Batch)."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _data, _invoke


def imread(path: Any, device: Any = "cpu", output_type: Any = None, **kwargs: Any) -> Any:
    """Decodes the image file(s) at `path` with `decoders.image` (HWC, RGB unless `output_type`)."""
    many = isinstance(path, (list, tuple)) or isinstance(path, _data.Batch)
    paths = [str(p) for p in path] if many else [str(path)]
    raw = [np.fromfile(p, dtype=np.uint8) for p in paths]
    if output_type is not None:
        kwargs["output_type"] = output_type
    data: Any = _data.as_batch(raw) if many else _data.as_tensor(raw[0])
    return _invoke.invoke("decoders.image", [data], dict(kwargs, device=device))
