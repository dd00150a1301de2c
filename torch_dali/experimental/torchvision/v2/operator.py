"""The base of the transforms (`Operator`), the argument and input checks they share, and the two
bridges to torch_dali: `adjust_input` (the functional API, one dynamic-mode call per image) and the
graph-side helpers that `Compose`'s pipeline calls (`get_HWC_from_layout_pipeline`, `branch`).

Inside a `Compose` a transform never sees data: `_invoke` gets a DataNode of the pipeline being
traced and returns one. What the pipeline's input looks like (its layout, its channel count) is
known when the pipeline is built, one pipeline per kind of input (compose.py); `graph_input()`
says it to the transforms, so they choose their graph by Python, not by per-sample conditions.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

import numpy as np
import torch
from PIL import Image

from ... import dynamic as ndd


# -- what the traced pipeline's input is -----------------------------------------------------------

@dataclass
class GraphInput:
    layout: str        # "HWC" (PIL images) or "CHW" (torch tensors)
    channels: int


_GRAPH_INPUT: contextvars.ContextVar[GraphInput | None] = contextvars.ContextVar("tv_graph_input", default=None)


@contextlib.contextmanager
def tracing(layout: str, channels: int) -> Iterator[GraphInput]:
    state = GraphInput(layout, channels)
    token = _GRAPH_INPUT.set(state)
    try:
        yield state
    finally:
        _GRAPH_INPUT.reset(token)


def graph_input() -> GraphInput:
    state = _GRAPH_INPUT.get()
    if state is None:  # a transform's `_invoke` called outside a Compose being built
        return GraphInput("HWC", 3)
    return state


def get_HWC_from_layout_pipeline(data: Any) -> tuple[Any, Any, int, Any]:
    """(height, width, channels, data) of the traced input: height and width per sample (DataNodes
    from its shape), the channel count as a number (fixed for one pipeline)."""
    state = graph_input()
    shape = data.shape()
    if state.layout == "CHW":
        return shape[-2], shape[-1], state.channels, data
    return shape[-3], shape[-2], state.channels, data


def branch(pred: Any, when_true: Callable[[], Any], when_false: Callable[[], Any]) -> Any:
    """Per sample, `when_true()`'s value where `pred` holds, else `when_false()`'s: both are traced
    as the two sides of a pipeline `if` (torch_dali.conditionals), so what a side computes is
    never computed on the samples it does not take."""
    from ....conditionals import UNDEFINED, enter_branch, leave_branch, merge, predicate
    pred = predicate(pred)
    enter_branch(pred, True)
    try:
        yes = when_true()
    finally:
        leave_branch()
    enter_branch(pred, False)
    try:
        no = when_false()
    finally:
        leave_branch()
    return merge(pred, ["<transform output>"], [UNDEFINED], [yes], [no])[0]


# -- argument and input checks ---------------------------------------------------------------------

class DataValidateRule(ABC):
    """A check of the data a transform is called on (raises when it does not fit)."""

    @classmethod
    @abstractmethod
    def verify(cls, data: Any) -> None: ...


class ArgumentValidateRule(ABC):
    """A check of a transform's constructor arguments, given as keywords (raises when they do not fit)."""

    @classmethod
    @abstractmethod
    def verify(cls, **kwargs: Any) -> None: ...


def _numbers(values: Any) -> list:
    return list(values) if isinstance(values, (list, tuple)) else [values] if isinstance(values, (int, float)) else []


class ValidateIsTensor(DataValidateRule):
    @classmethod
    def verify(cls, data: Any) -> None:
        if not isinstance(data, torch.Tensor):
            raise TypeError(f"expected a torch.Tensor, got {type(data).__name__}")


class ValidateTensorOrImage(DataValidateRule):
    @classmethod
    def verify(cls, data: Any) -> None:
        if not isinstance(data, (Image.Image, torch.Tensor)):
            raise TypeError(f"the input must be a torch.Tensor or a PIL Image, got {type(data).__name__}")


class _ValidateChannelCount(DataValidateRule):
    CHANNELS = (1, 2, 3, 4)

    @classmethod
    def verify(cls, data: Any) -> None:
        if isinstance(data, torch.Tensor) and data.shape[-3] not in cls.CHANNELS:
            raise ValueError(f"a tensor input is [..., C, H, W] with 1 to 4 channels; this one has "
                             f"{data.shape[-3]} in dimension -3")


class ValidateIfPositive(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, values: Any, name: str, **_: Any) -> None:
        if any(v <= 0 for v in _numbers(values)):
            raise ValueError(f"{name} must be positive, got {values}")


class ValidateIfNonNegative(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, values: Any, name: str, **_: Any) -> None:
        if any(v < 0 for v in _numbers(values)):
            raise ValueError(f"{name} must not be negative, got {values}")


class ValidateIfRange(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, values: Any, name: str, **_: Any) -> None:
        if isinstance(values, (list, tuple)) and len(values) == 2 and values[0] > values[1]:
            raise ValueError(f"{name} must be a (min, max) pair with min <= max, got {values}")


class ValidateSizeDescriptor(ArgumentValidateRule):
    """A size: an int, or a list/tuple of one or two values, all positive."""

    @classmethod
    def verify(cls, *, size: Any, **_: Any) -> None:
        if not isinstance(size, (int, list, tuple)):
            raise TypeError(f"size must be an int or a list/tuple of one or two ints, got {type(size).__name__}")
        if isinstance(size, (list, tuple)) and len(size) > 2:
            raise ValueError(f"size must hold one or two values, got {len(size)}")
        ValidateIfPositive.verify(values=size, name="size")


class ValidateIfZeroOneRange(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, p: Any, **_: Any) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"the probability p must be a number in [0, 1], got {p!r}")


# -- the transforms' base --------------------------------------------------------------------------

class Operator(ABC):
    """A transform for `Compose`: its arguments are checked when it is made (`arg_rules`), and
    `_invoke` adds its operators to the pipeline `Compose` traces. `preprocess_data`, when set,
    turns the DataNode into what `_kernel` takes (e.g. `(height, width, channels, data)`)."""

    arg_rules: tuple = ()
    input_rules: tuple = ()
    preprocess_data: Callable[[Any], Any] | None = None

    def __init__(self, device: Literal["cpu", "gpu"] = "cpu", **kwargs: Any) -> None:
        self.device = device
        type(self).verify_args(**kwargs)

    @classmethod
    def verify_args(cls, **kwargs: Any) -> None:
        for rule in cls.arg_rules:
            rule.verify(**kwargs)

    @classmethod
    def verify_data(cls, data: Any) -> None:
        for rule in cls.input_rules:
            rule.verify(data)

    @abstractmethod
    def _kernel(self, data_input: Any) -> Any: ...

    def __call__(self, data_input: Any) -> Any:
        raise RuntimeError(f"{type(self).__name__} runs inside a Compose([...]) only; call the Compose, or use "
                           "the functional API (torchvision.v2.functional) for a single image")

    def _invoke(self, data_input: Any) -> Any:
        type(self).verify_data(data_input)
        if self.device == "gpu":
            data_input = data_input.gpu()
        prep = type(self).preprocess_data
        if prep is not None:
            data_input = prep(data_input)
        return self._kernel(data_input)

    def invoke(self, data_input: Any) -> Any:
        """`_invoke` (DALI's name, which subclasses may override) for the other transforms and Compose."""
        return self._invoke(data_input)


# -- the functional API's bridge to the dynamic mode -----------------------------------------------

def _to_dynamic(inpt: Any, device: str) -> tuple[Any, str]:
    """A PIL image -> an HWC ndd.Tensor (mode L gets a channel dimension); a [C, H, W] tensor -> a
    CHW ndd.Tensor; an [N, C, H, W] tensor -> a CHW ndd.Batch of N samples."""
    mode = "RGB"
    if isinstance(inpt, Image.Image):
        mode = inpt.mode
        if mode not in ("L", "RGB", "RGBA"):
            raise ValueError(f"PIL image mode {mode!r} is not supported (L, RGB and RGBA are)")
        arr = np.array(inpt, copy=True)
        out = ndd.Tensor(arr[..., None] if arr.ndim == 2 else arr, layout="HWC")
    elif isinstance(inpt, torch.Tensor):
        if inpt.ndim < 3:
            raise TypeError(f"a tensor input needs at least 3 dimensions ([..., C, H, W]), got shape "
                            f"{tuple(inpt.shape)}")
        if inpt.ndim > 4:  # DALI 2.4 takes [C, H, W] and [N, C, H, W] only
            raise ValueError(f"a tensor input is [C, H, W] or [N, C, H, W], got shape {tuple(inpt.shape)}")
        out = ndd.Tensor(inpt, layout="CHW") if inpt.ndim == 3 else ndd.as_batch(inpt, layout="CHW")
    else:
        raise TypeError(f"input type {type(inpt).__name__} is not supported (PIL images and torch tensors are)")
    if out.device.device_type != device:
        logging.warning("the input is on %s, the operator on %s: copying", out.device.device_type, device)
        out = out.gpu() if device == "gpu" else out.cpu()
    return out, mode


def _from_dynamic(out: Any, inpt: Any, mode: str) -> Any:
    """The result in the caller's type: a PIL image for a PIL input, else a torch tensor (a Batch
    stacked along a leading dimension)."""
    if isinstance(inpt, Image.Image):
        arr = np.asarray(out.cpu())
        if arr.shape[-1] == 1:
            arr, mode = arr[..., 0], "L"
        return Image.fromarray(arr, mode=mode)
    if isinstance(inpt, torch.Tensor):
        if isinstance(out, ndd.Batch):
            dense = torch.as_tensor(np.asarray(ndd.as_tensor(out))) if out.device.device_type == "cpu" \
                else ndd.as_tensor(out).torch()
            return dense
        if not isinstance(out, ndd.Tensor):
            raise TypeError(f"unexpected result type {type(out).__name__}")
        return torch.as_tensor(np.asarray(out)) if out.device.device_type == "cpu" else out.torch()
    return out


def adjust_input(func: Callable) -> Callable:
    """Decorates a functional transform written for ndd data: its first argument (PIL image or
    torch tensor) is converted in (`_to_dynamic`), the result back (`_from_dynamic`); `device`,
    given by keyword or position, says where the data goes."""
    signature = inspect.signature(func)

    @functools.wraps(func)
    def wrapper(inpt: Any, *args: Any, **kwargs: Any) -> Any:
        device = signature.bind_partial(inpt, *args, **kwargs).arguments.get("device", "cpu")
        data, mode = _to_dynamic(inpt, device)
        out = func(data, *args, **kwargs)
        return _from_dynamic(out.evaluate(), inpt, mode)

    return wrapper


def get_input_shape_dynamic(inpt: Any) -> tuple:
    """One sample's shape (a Batch's samples share theirs)."""
    if isinstance(inpt, ndd.Tensor):
        return tuple(inpt.shape)
    if isinstance(inpt, ndd.Batch):
        return tuple(inpt.shape[0])
    raise TypeError(f"expected an ndd.Tensor or ndd.Batch, got {type(inpt).__name__}")


def get_HWC_from_layout_dynamic(inpt: Any) -> tuple[int, int, int]:
    """(height, width, channels) of an ndd.Tensor / ndd.Batch sample, by its layout."""
    shape, layout = get_input_shape_dynamic(inpt), inpt.layout or ""
    if layout.endswith("HWC"):
        return shape[-3], shape[-2], shape[-1]
    if layout.endswith("CHW"):
        return shape[-2], shape[-1], shape[-3]
    if layout.endswith("HW"):
        return shape[-2], shape[-1], 1
    raise ValueError(f"layout {layout!r} is not an image layout (HWC, CHW, HW, with leading dimensions)")
