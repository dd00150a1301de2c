"""`@augmentation`: turns a function written with torch_dali ops into an `Augmentation` that
AutoAugment, RandAugment and TrivialAugment can sample from."""
from __future__ import annotations

from typing import Any, Callable, Optional, Type

from ...errors import ArgumentTypeError
from ._augmentation import Augmentation


def augmentation(function: Optional[Callable[..., Any]] = None, *, mag_range: Any = None,
                 randomly_negate: Optional[bool] = None, mag_to_param: Optional[Callable[[Any], Any]] = None,
                 param_device: Optional[str] = None, name: Optional[str] = None,
                 augmentation_cls: Optional[Type[Augmentation]] = None) -> Any:
    """Decorates `function(data, parameter, **extra)` (used bare or with arguments).

    The decorated augmentation is called as `aug(data, magnitude_bin=b, num_magnitude_bins=n,
    **extra)`; the parameter it passes on is `mag_to_param(linspace(lo, hi, n)[b])`, negated for
    samples whose random sign is 1 when `randomly_negate`:

    * `mag_range`: `(lo, hi)`, or a NumPy array of the magnitudes themselves; None: the function
      gets `None` as its parameter (augmentations without a strength, such as `equalize`).
    * `randomly_negate`: negate the magnitude for a random half of the samples.
    * `mag_to_param`: magnitude -> parameter (NumPy data of one shape and type for every
      magnitude); parameters are computed once per bin, in Python, never per batch.
    * `param_device`: where the parameter table lives: "cpu" (default), "gpu", or "auto" (the
      device of the data).
    * `name`: the augmentation's name (default: the function's name).
    """
    def decorate(func: Callable[..., Any]) -> Augmentation:
        return (augmentation_cls or Augmentation)(func, mag_range=mag_range, randomly_negate=randomly_negate,
                                                  mag_to_param=mag_to_param, param_device=param_device, name=name)

    if function is None:
        return decorate
    if isinstance(function, Augmentation):
        raise ArgumentTypeError(f"@augmentation applied to `{function.name}`, which already is an augmentation: "
                                f"change its set-up with `{function.name}.augmentation(...)`, or decorate "
                                f"`{function.name}.op`")
    if not callable(function):
        raise ArgumentTypeError(f"@augmentation can only decorate a function, got {function!r}")
    return decorate(function)
