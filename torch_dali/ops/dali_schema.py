"""An operator's schema as DALI's backend shows it (`backend.GetSchema("readers__File")`): looked up
by DALI's schema name (`fn.x._schema_name`, a legacy class name such as `FileReader`) and asked
with DALI's method names: its names, whether it keeps state, its inputs, arguments and input devices."""
from __future__ import annotations

import functools

from ._naming import dali_schema_name
from ._operator import Operator
from ._registry import all_schemas
from ._schema import COMMON_ARGS, OpSchema
from .legacy import CLASSES

# arguments every DALI op has (besides its own); `device` and `name` are not schema arguments in DALI
_SHARED = tuple(a for a in COMMON_ARGS if a not in ("device", "name"))


class DaliSchema:
    """One op's schema under one of its DALI names (a legacy name reports itself deprecated)."""

    def __init__(self, schema: OpSchema, name: str, current: str = "") -> None:
        self.schema = schema
        self.name = name
        self.current = current  # the op's current DALI name when `name` is a deprecated one

    def __repr__(self) -> str:
        return f"OpSchema({self.name!r})"

    # -- names ---------------------------------------------------------------------------------------
    def Name(self) -> str:  # noqa: N802 - DALI's method names
        return self.name

    def OperatorName(self) -> str:  # noqa: N802
        return self.name.split("__")[-1]

    def ModulePath(self) -> list[str]:  # noqa: N802
        return self.name.split("__")[:-1]

    def IsDeprecated(self) -> bool:  # noqa: N802
        return bool(self.current)

    def DeprecatedInFavorOf(self) -> str:  # noqa: N802
        return self.current

    def IsInternal(self) -> bool:  # noqa: N802
        return self.schema.name.startswith("_")

    def Dox(self) -> str:  # noqa: N802
        return self.schema.doc

    # -- behaviour -----------------------------------------------------------------------------------
    def IsStateful(self) -> bool:  # noqa: N802
        """Whether the op keeps state between batches: it draws random numbers, reads a data set or
        a source, or runs the user's code."""
        impl = self.schema.impl
        return bool(self.schema.random or impl.order_sensitive or impl.state_dict is not Operator.state_dict)

    def MinNumInput(self) -> int:  # noqa: N802
        return self.schema.min_inputs

    def MaxNumInput(self) -> int:  # noqa: N802
        return self.schema.max_inputs

    def GetInputDevice(self, index: int, input_device: str | None, op_device: str | None) -> str | None:  # noqa: N802
        """The device input `index` is read from when the op runs on `op_device` and the input is
        on `input_device` (None: not known yet), as DALI answers it."""
        kinds = self.schema.input_kinds
        kind = kinds[index] if 0 <= index < len(kinds) else ""
        kind = kind or ("any" if self.schema.input_devices == "any" else "same")
        if kind == "cpu":
            return "cpu"
        if kind == "any":
            return input_device or op_device
        if kind == "cpu_or_same":
            if input_device is None:
                return op_device
            return "cpu" if op_device in ("cpu", "mixed") else input_device
        return op_device  # the op's device ("mixed" for a mixed op's CPU inputs, as DALI says)

    # -- arguments -----------------------------------------------------------------------------------
    def GetArgumentNames(self) -> list[str]:  # noqa: N802
        return sorted({a.name for a in self.schema.args} | set(_SHARED))

    def HasArgument(self, name: str) -> bool:  # noqa: N802
        return name in _SHARED or self.schema.arg(name) is not None

    def IsTensorArgument(self, name: str) -> bool:  # noqa: N802
        arg = self.schema.arg(self._known(name))
        return bool(arg is not None and arg.tensor)

    def IsArgumentOptional(self, name: str) -> bool:  # noqa: N802
        arg = self.schema.arg(self._known(name))
        return arg is None or not arg.required

    def _known(self, name: str) -> str:
        if not self.HasArgument(name):
            raise KeyError(f"operator {self.name} has no argument {name!r}")
        return name


@functools.lru_cache(maxsize=1)
def _by_name() -> dict[str, tuple[OpSchema, str]]:
    """DALI schema name -> (schema, the current name when the name is a deprecated one)."""
    out: dict[str, tuple[OpSchema, str]] = {}
    for s in all_schemas():
        current = dali_schema_name(s.name, s.class_name)
        out[current] = (s, "")
    for s in all_schemas():
        current = dali_schema_name(s.name, s.class_name)
        for old in s.legacy_names:
            out.setdefault(old, (s, current))
    for old, new in CLASSES.items():
        s = next(x for x in all_schemas() if x.name == new)
        out.setdefault(old.replace(".", "__"), (s, dali_schema_name(s.name, s.class_name)))
    return out


def try_get_schema(name: str) -> DaliSchema | None:
    """The schema DALI names `name` (`Resize`, `readers__File`), or None."""
    found = _by_name().get(name)
    return None if found is None else DaliSchema(found[0], name, found[1])


def get_schema(name: str) -> DaliSchema:
    """The schema DALI names `name`; a KeyError for an op torch_dali does not have."""
    found = try_get_schema(name)
    if found is None:
        raise KeyError(f"no operator schema is named {name!r} (DALI's schema names look like 'Resize', "
                       "'readers__File')")
    return found


def registered_ops(device: str) -> list[str]:
    """DALI's schema names (current and deprecated) of the ops that run on `device` ("cpu", "gpu",
    "mixed"), as DALI's `RegisteredCPUOps()` and its siblings list them."""
    return sorted(name for name, (s, _) in _by_name().items() if device in s.devices)
