"""What a control (real DALI) result means here, and how failure reasons are grouped."""
from __future__ import annotations

import re
from typing import Any

# Real DALI failing for want of a GPU (its own messages when CUDA is absent or a GPU op is asked
# for with `device_id=None`).
_GPU = re.compile(
    r"CUDA-capable GPU|CUDA is not available|CUDA driver|libcuda|cudaGetDevice|no CUDA|cuInit|"
    r"device_id|GPU operator|GPU DALI pipeline|pynvml|NVML|nvml|gpu.*not (supported|available)|"
    r"CUDA error|cudaError|Cannot (?:use|create).*GPU|requires a GPU", re.IGNORECASE)
# Optional packages some cases import (not installed as part of the control environment).
_PKG = re.compile(r"No module named '(?!nvidia)([\w.]+)'")
# The case arguments say it is a GPU or mixed-device case.
_GPU_ARG = re.compile(r"'(?:gpu|mixed)'")


def control_category(case: dict[str, Any], extra_marker: str) -> str:
    """pass | gpu | extra | package | skip | excluded | timeout | crash | dali_fails."""
    status = case["status"]
    if status == "pass":
        return "pass"
    if status in ("skip", "excluded"):
        return status
    if status in ("timeout", "memory"):
        return "extra" if extra_marker in case.get("reason", "") else "timeout"
    if status == "crash":
        return "crash"
    text = f"{case.get('reason', '')} {case.get('detail', '')} {case.get('where', '')}"
    if extra_marker in text or "DALI_extra" in text or "DALI_EXTRA_PATH" in text:
        return "extra"
    if _GPU.search(text) or _GPU_ARG.search(case.get("summary", "")):
        return "gpu"
    if _PKG.search(text):
        return "package"
    return "dali_fails"


def import_category(reason: str, extra_marker: str) -> str:
    """Why a whole module could not be imported or collected under DALI here."""
    if extra_marker in reason or "DALI_extra" in reason:
        return "extra"
    if _GPU.search(reason):
        return "gpu"
    if _PKG.search(reason):
        return "package"
    return "dali_fails"


_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUM = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_DEFINED = re.compile(r"\(defined at [^)]*\)")
_TMP = re.compile(r"/(?:tmp|var)/[\w./-]+")
_WS = re.compile(r"\s+")


def group_key(reason: str) -> str:
    """A failure reason with the parts that vary per case blanked: numbers, addresses, temp paths and
    where the op was defined."""
    r = _DEFINED.sub("(defined at ...)", reason)
    r = _HEX.sub("0x...", r)
    r = _TMP.sub("/tmp/...", r)
    r = _NUM.sub("N", r)
    r = _WS.sub(" ", r).strip()
    return r[:220]
