"""`Augmentation`: a transformation written with torch_dali ops, plus how its magnitude bins map to
the parameter it is called with; and `signed_bin`, a magnitude bin with a random sign.

An augmentation with `mag_range=(lo, hi)` called with `magnitude_bin=b` and
`num_magnitude_bins=n` receives `mag_to_param(m)` with `m = linspace(lo, hi, n)[b]` (float32),
negated for samples whose random sign is 1 when it is declared `randomly_negate=True`. The
parameters of every bin (and sign) are computed once, in Python, and stored as one constant
table; each sample's parameter is a row of it (`table[bin]`), so nothing is recomputed per batch.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ... import fn, types
from ...errors import ArgumentError, ArgumentTypeError
from ...graph.node import DataNode
from ._args import MissingArgException, accepted_kwargs, missing_kwargs, num_positional_args

Bin = Union[int, DataNode]


class _Unset:
    """A default that tells "not given" apart from None in `Augmentation.augmentation`."""

    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


class _SignedMagnitudeBin:
    """A magnitude bin (an int, or an integer per sample) with a random sign per sample (0: keep,
    1: negate) and `signed_magnitude_idx = 2 * bin + sign`, the row of a table of signed
    parameters laid out [+m0, -m0, +m1, -m1, ...]."""

    def __init__(self, magnitude_bin: Bin, random_sign: DataNode, signed_magnitude_idx: DataNode) -> None:
        self._magnitude_bin = magnitude_bin
        self._random_sign = random_sign
        self._signed_magnitude_idx = signed_magnitude_idx

    def __getitem__(self, idx: int) -> "_SignedMagnitudeBin":
        """Entry `idx` of a vector of signed bins (one per step of a sequence of augmentations)."""
        mbin = self._magnitude_bin if isinstance(self._magnitude_bin, int) else self._magnitude_bin[idx]
        return type(self)(mbin, self._random_sign[idx], self._signed_magnitude_idx[idx])

    @classmethod
    def create_from_bin(cls, magnitude_bin: Bin, random_sign: Optional[DataNode] = None,
                        seed: Optional[int] = None, shape: Optional[Sequence[int]] = None) -> "_SignedMagnitudeBin":
        if isinstance(magnitude_bin, bool) or not isinstance(magnitude_bin, (int, DataNode)):
            raise ArgumentTypeError(f"signed_bin: `magnitude_bin` must be an int or a DataNode of integers in "
                                    f"[0, num_magnitude_bins - 1], got {magnitude_bin!r}")
        if random_sign is not None and (seed is not None or shape is not None):
            raise ArgumentError("signed_bin: `random_sign` cannot be given together with `seed` or `shape` "
                                "(those are for drawing the sign)")
        if random_sign is None:
            random_sign = fn.random.uniform(values=[0, 1], dtype=types.INT32, seed=seed, shape=shape)
        # made here, before any branch: every augmentation that needs it reads the same node
        return cls(magnitude_bin, random_sign, 2 * magnitude_bin + random_sign)

    @staticmethod
    def _remap_to_signed_magnitudes(magnitudes: Sequence[Any]) -> np.ndarray:
        """[m0, m1, ...] -> [m0, -m0, m1, -m1, ...]: row 2 * bin + sign."""
        return np.array([s * m for m in magnitudes for s in (1, -1)])

    @property
    def bin(self) -> Bin:
        return self._magnitude_bin

    @property
    def random_sign(self) -> DataNode:
        return self._random_sign

    @property
    def signed_magnitude_idx(self) -> DataNode:
        return self._signed_magnitude_idx


def signed_bin(magnitude_bin: Bin, random_sign: Optional[DataNode] = None, seed: Optional[int] = None,
               shape: Optional[Sequence[int]] = None) -> _SignedMagnitudeBin:
    """`magnitude_bin` with a sign per sample: `random_sign` (0 or 1 per sample), or one drawn
    here (with `seed`, and `shape` for a vector of signs). Make it once, before choosing among
    augmentations, so that all of them share one draw."""
    return _SignedMagnitudeBin.create_from_bin(magnitude_bin, random_sign, seed, shape)


class Augmentation:
    """A transformation `op(data, parameter, **extra)` with its magnitude set-up; made by the
    `@augmentation` decorator (see there for the meaning of each field)."""

    def __init__(self, op: Callable[..., DataNode], mag_range: Any = None, randomly_negate: Optional[bool] = None,
                 mag_to_param: Optional[Callable[[Any], Any]] = None, param_device: Optional[str] = None,
                 name: Optional[str] = None) -> None:
        self._op = op
        self._mag_range = mag_range
        self._randomly_negate = randomly_negate
        self._mag_to_param = mag_to_param
        self._param_device = param_device
        self._name = name
        if param_device not in (None, "cpu", "gpu", "auto"):
            raise ArgumentError(f"augmentation `{self.name}`: `param_device` must be 'cpu', 'gpu' or 'auto', "
                                f"got {param_device!r}")
        if num_positional_args(op) < 2:
            raise ArgumentTypeError(f"augmentation `{self.name}`: {op} must take at least two positional "
                                    "arguments: the batch and the parameter")

    def __repr__(self) -> str:
        fields = [f"{k}={v!r}" for k, v in self._config().items() if v is not None]
        return f"Augmentation({', '.join([repr(self.op)] + fields)})"

    # -- the fields, with their defaults -------------------------------------------------------------
    @property
    def op(self) -> Callable[..., DataNode]:
        return self._op

    @property
    def mag_range(self) -> Any:
        return self._mag_range

    @property
    def mag_to_param(self) -> Callable[[Any], Any]:
        return self._mag_to_param or np.array

    @property
    def randomly_negate(self) -> bool:
        return bool(self._randomly_negate)

    @property
    def param_device(self) -> str:
        return self._param_device or "cpu"

    @property
    def name(self) -> str:
        return self._name or getattr(self._op, "__name__", "augmentation")

    def _config(self) -> dict[str, Any]:
        return {"mag_range": self._mag_range, "mag_to_param": self._mag_to_param,
                "randomly_negate": self._randomly_negate, "param_device": self._param_device, "name": self._name}

    def augmentation(self, mag_range: Any = _UNSET, randomly_negate: Any = _UNSET, mag_to_param: Any = _UNSET,
                     param_device: Any = _UNSET, name: Any = _UNSET, augmentation_cls: Any = None) -> "Augmentation":
        """A new augmentation of the same `op` with the fields given here changed, the rest kept."""
        config = self._config()
        for key, value in (("mag_range", mag_range), ("randomly_negate", randomly_negate),
                           ("mag_to_param", mag_to_param), ("param_device", param_device), ("name", name)):
            if value is not _UNSET:
                config[key] = value
        return (augmentation_cls or type(self))(self.op, **config)

    # -- applying it -------------------------------------------------------------------------------
    def __call__(self, data: DataNode, *, magnitude_bin: Any = None, num_magnitude_bins: Optional[int] = None,
                 **kwargs: Any) -> DataNode:
        """`op(data, parameter, **extra)`: the parameter of `magnitude_bin` (see the module's doc);
        `extra` is the part of `kwargs` that `op` declares by name."""
        from ...conditionals import converted
        device = self.param_device if self.param_device != "auto" else (
            "gpu" if isinstance(data, DataNode) and data.device == "gpu" else "cpu")
        param = self._param(magnitude_bin, num_magnitude_bins, device)
        missing = missing_kwargs(self.op, kwargs, 2)
        if missing:
            raise MissingArgException(
                f"augmentation `{self.name}` needs the argument(s) {', '.join(missing)}, which the call did not "
                "give", augmentation=self, missing_args=missing)
        # `if`s on DataNodes in the op work as in the pipeline definition (DALI converts them too);
        # not lambdas: they hold no `if` statement, and two on one line cannot be told apart
        op = self.op if getattr(self.op, "__name__", "") == "<lambda>" else converted(self.op)
        return op(data, param, **accepted_kwargs(self.op, kwargs, 2))

    def _get_magnitudes(self, num_magnitude_bins: Optional[int]) -> Optional[np.ndarray]:
        mr = self.mag_range
        if mr is None:
            return None
        if isinstance(mr, np.ndarray):
            if num_magnitude_bins is not None and len(mr) != num_magnitude_bins:
                raise ArgumentError(f"augmentation `{self.name}`: its `mag_range` lists {len(mr)} magnitudes, "
                                    f"but the call has num_magnitude_bins={num_magnitude_bins}")
            return mr
        if num_magnitude_bins is None:
            raise ArgumentError(f"augmentation `{self.name}`: `num_magnitude_bins` is required (with the data "
                                f"and `magnitude_bin`) to divide its magnitude range; in {self!r}")
        if not hasattr(mr, "__len__") or len(mr) != 2:
            raise ArgumentError(f"augmentation `{self.name}`: `mag_range` must be (low, high) or a NumPy array "
                                f"of magnitudes, got {mr!r}")
        return np.linspace(mr[0], mr[1], num_magnitude_bins, dtype=np.float32)

    def _map_mag_to_param(self, magnitude: Any) -> np.ndarray:
        param = self.mag_to_param(magnitude)
        if _has_node(param):
            raise ArgumentTypeError(
                f"augmentation `{self.name}`: `mag_to_param` returned a DataNode; it must return NumPy data "
                "(parameters are computed once, in Python): move the ops into the augmentation itself")
        return np.array(param)

    def _map_mags_to_params(self, magnitudes: Sequence[Any]) -> np.ndarray:
        params = [self._map_mag_to_param(m) for m in magnitudes]
        for p, m in zip(params[1:], magnitudes[1:]):
            if p.shape != params[0].shape or p.dtype != params[0].dtype:
                raise ArgumentError(
                    f"augmentation `{self.name}`: `mag_to_param` must give the same shape and type for every "
                    f"magnitude: {params[0].shape} {params[0].dtype} for {magnitudes[0]}, {p.shape} {p.dtype} "
                    f"for {m}")
        return np.array(params)

    def _param(self, magnitude_bin: Any, num_magnitude_bins: Optional[int], device: str) -> Any:
        magnitudes = self._get_magnitudes(num_magnitude_bins)
        if magnitudes is None:
            return None
        if magnitude_bin is None:
            raise ArgumentError(f"augmentation `{self.name}` has a `mag_range`: the call needs `magnitude_bin`")
        if isinstance(magnitude_bin, int) and not isinstance(magnitude_bin, bool) and \
                not 0 <= magnitude_bin < len(magnitudes):
            raise ArgumentError(f"augmentation `{self.name}`: magnitude_bin {magnitude_bin} is out of range "
                                f"[0, {len(magnitudes) - 1}]")
        if self.randomly_negate:
            if not isinstance(magnitude_bin, _SignedMagnitudeBin):
                warnings.warn(f"augmentation `{self.name}` negates its magnitude at random, but got a magnitude "
                              "bin without a sign: a sign is drawn for this call alone. Make the sign once, before "
                              "choosing among augmentations, with `signed_bin(magnitude_bin)`.", Warning, stacklevel=3)
                magnitude_bin = signed_bin(magnitude_bin)
            if isinstance(magnitude_bin.bin, int):  # one magnitude: the table has its two signs
                table = self._map_mags_to_params(_SignedMagnitudeBin._remap_to_signed_magnitudes([magnitudes[magnitude_bin.bin]]))
                return types.Constant(table, device=device)[magnitude_bin.random_sign]
            table = self._map_mags_to_params(_SignedMagnitudeBin._remap_to_signed_magnitudes(magnitudes))
            return types.Constant(table, device=device)[magnitude_bin.signed_magnitude_idx]
        mbin = magnitude_bin.bin if isinstance(magnitude_bin, _SignedMagnitudeBin) else magnitude_bin
        if isinstance(mbin, int):
            return types.Constant(self._map_mag_to_param(magnitudes[mbin]), device=device)
        return types.Constant(self._map_mags_to_params(magnitudes), device=device)[mbin]


def _has_node(obj: Any) -> bool:
    if isinstance(obj, (list, tuple)):
        return any(_has_node(x) for x in obj)
    return isinstance(obj, DataNode)
