"""DALI's `_autograph.utils.ag_logging`: the conversion's debug-log verbosity and log calls.

The verbosity is what `set_verbosity` last set, else the `AUTOGRAPH_VERBOSITY` environment
variable (DALI's, read when asked), else 0: nothing logged. `log(level, ...)` and
`error(level, ...)` write only when the verbosity is at least `level`; `warning` always does.
Messages go to Python's `logging` (printf-style `msg % args`, formatted by logging) and, after
`set_verbosity(n, alsologtostdout=True)` or in an interactive interpreter, are printed too.
torch_dali's rewrite of `if`s writes no debug log of its own, so the verbosity gates only these
calls.
"""
from __future__ import annotations

import logging
import os
import sys
import traceback
from typing import Any

ENV_VAR = "AUTOGRAPH_VERBOSITY"

_logger = logging.getLogger("torch_dali.autograph")
_level: int | None = None  # set_verbosity's value; None: the environment decides
_to_stdout = hasattr(sys, "ps1") or hasattr(sys, "ps2")  # interactive sessions echo by default


def set_verbosity(level: int, alsologtostdout: bool = False) -> None:
    """Verbosity from now on (0 logs nothing; larger logs more), over the environment variable;
    `alsologtostdout` prints each message as well as logging it."""
    global _level, _to_stdout
    _level = level
    _to_stdout = alsologtostdout


def get_verbosity() -> int:
    if _level is not None:
        return _level
    return int(os.environ.get(ENV_VAR, 0))


def has_verbosity(level: int) -> bool:
    return get_verbosity() >= level


def _echo(prefix: str, msg: str, args: tuple, kwargs: dict[str, Any]) -> None:
    print(prefix + (msg % args if args else msg))
    if kwargs.get("exc_info"):
        traceback.print_exc()
    sys.stdout.flush()


def log(level: int, msg: str, *args: Any, **kwargs: Any) -> None:
    if has_verbosity(level):
        _logger.info(msg, *args, **kwargs)
        if _to_stdout:
            _echo("", msg, args, kwargs)


def error(level: int, msg: str, *args: Any, **kwargs: Any) -> None:
    if has_verbosity(level):
        _logger.error(msg, *args, **kwargs)
        if _to_stdout:
            _echo("ERROR: ", msg, args, kwargs)


def warning(msg: str, *args: Any, **kwargs: Any) -> None:
    _logger.warning(msg, *args, **kwargs)
    if _to_stdout:
        _echo("WARNING: ", msg, args, kwargs)


def trace(*args: Any) -> None:
    """Prints its arguments when the definition is traced."""
    print(*args)
