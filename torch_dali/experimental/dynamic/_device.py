"""`ndd.Device`: where data live and ops run, "cpu" or "gpu" (with a device id), as DALI's dynamic
mode names them. torch's "cuda" is accepted for "gpu"."""
from __future__ import annotations

import threading
from typing import Any, Union

import torch

__all__ = ["Device", "DeviceLike", "device"]


class Device:
    """A device: `Device("cpu")`, `Device("gpu")`, `Device("gpu:1")`, `Device("gpu", 1)`. A GPU
    device without an id is the current CUDA device (0 where there is no CUDA)."""

    CPU: "Device"
    _local = threading.local()

    def __init__(self, name: str = "cpu", device_id: int | None = None) -> None:
        if isinstance(name, Device):
            name, device_id = name.device_type, name.device_id if device_id is None else device_id
        name = str(name)
        if ":" in name:
            name, idx = name.split(":", 1)
            if device_id is not None and int(idx) != device_id:
                raise ValueError(f"Device: {name}:{idx} and device_id={device_id} disagree")
            device_id = int(idx)
        if name == "cuda":
            name = "gpu"
        if name not in ("cpu", "gpu"):
            raise ValueError(f"Device: unknown device type {name!r} (expected 'cpu' or 'gpu')")
        if name == "cpu":
            if device_id not in (None, 0):
                raise ValueError(f"Device: a CPU device has no id, got {device_id}")
            device_id = None
        elif device_id is None:
            device_id = Device.default_device_id("gpu")
        elif device_id < 0:
            raise ValueError(f"Device: invalid device id {device_id}")
        self.device_type = name
        self.device_id = device_id

    @staticmethod
    def default_device_id(device_type: str) -> int | None:
        if device_type == "cpu":
            return None
        return torch.cuda.current_device() if torch.cuda.is_available() else 0

    @staticmethod
    def type_from_dlpack(dev_type: Any) -> str:
        return "gpu" if int(dev_type) in (2, 3, 13) else "cpu"  # kDLCUDA, kDLCUDAHost, kDLCUDAManaged

    @staticmethod
    def from_dlpack(dlpack_device: Any) -> "Device":
        kind, idx = dlpack_device
        t = Device.type_from_dlpack(kind)
        return Device(t, int(idx) if t == "gpu" else None)

    @staticmethod
    def current() -> "Device":
        """The device of the innermost `with Device(...)` block; the CPU outside any."""
        stack = getattr(Device._local, "stack", None)
        return stack[-1] if stack else Device.CPU

    def __enter__(self) -> "Device":
        if not hasattr(Device._local, "stack"):
            Device._local.stack = []
        Device._local.stack.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        Device._local.stack.pop()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = Device(other)
        if not isinstance(other, Device):
            return NotImplemented
        return self.device_type == other.device_type and self.device_id == other.device_id

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __str__(self) -> str:
        return self.device_type if self.device_id is None else f"{self.device_type}:{self.device_id}"

    def __repr__(self) -> str:
        if self.device_id is None:
            return f"Device(device_type='{self.device_type}')"
        return f"Device(device_type='{self.device_type}', device_id={self.device_id})"


Device.CPU = Device("cpu")
DeviceLike = Union[str, Device]


def device(obj: Any, id: int | None = None) -> Device:  # noqa: A002 - DALI's name
    """A Device from a Device, a name ("cpu", "gpu", "gpu:1", "cuda") or a torch device."""
    if isinstance(obj, Device):
        return obj if id is None else Device(obj.device_type, id)
    if isinstance(obj, torch.device):
        return Device("gpu" if obj.type == "cuda" else "cpu", obj.index if obj.type == "cuda" else None)
    return Device(obj, id)


def to_torch(dev: Device) -> torch.device:
    """The torch device of `dev`; a GPU needs CUDA."""
    if dev.device_type == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RuntimeError("ndd: a 'gpu' device needs CUDA, and no CUDA device is available")
    return torch.device("cuda", dev.device_id or 0)
