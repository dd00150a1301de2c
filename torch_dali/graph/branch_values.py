"""What an `if` on a DataNode (`enable_conditionals`) leaves in a variable only one branch set:
a value whose every use is an error naming the variable and the branch that must set it.

Made by `torch_dali.conditionals` when it merges the branches; checked where values enter the
graph (op inputs and arguments, pipeline outputs). Here, below the ops, so that they can check
without importing the conditionals (which build on the ops)."""
from __future__ import annotations

from typing import Any

from ..errors import GraphError


class BranchOutputError(GraphError, RuntimeError):
    """A variable or return set in only one branch of an `if` on a DataNode, then used (a
    RuntimeError, as DALI raises it, and a GraphError)."""


class SetInOneBranch:
    """A variable an `if` on a DataNode set in only one branch: any use of it is an error."""

    __slots__ = ("name", "branch", "kind")

    def __init__(self, name: str, branch: str, kind: str = "variable") -> None:
        self.name, self.branch, self.kind = name, branch, kind

    def error(self) -> BranchOutputError:
        other = "else" if self.branch == "if" else "if"
        if self.kind == "return":
            return BranchOutputError(f"`if` on a DataNode: only the `{other}` branch returns; the `{self.branch}` branch "
                              "must also have a return statement")
        if self.kind == "item":
            return BranchOutputError(f"`if` on a DataNode: '{self.name}' (an item or attribute) is set in the "
                                     f"`{other}` branch only; set it in the `{self.branch}` branch too (or before "
                                     "the `if`)")
        return BranchOutputError(f"`if` on a DataNode: '{self.name}' is set in the `{other}` branch only and used "
                          f"afterwards; '{self.name}' must also be initialized in the `{self.branch}` branch (or "
                          "before the `if`)")

    def __getattr__(self, item: str) -> Any:
        raise self.error()

    def __bool__(self) -> bool:
        raise self.error()

    def __repr__(self) -> str:
        return f"<'{self.name}': set in one branch only>"


class Unmerged(SetInOneBranch):
    """A variable whose two branch values cannot be merged (other nestings, or values that are not
    data), which nothing reads after the `if`: DALI merges only the variables read afterwards, so
    such a temporary is no error; using it is one (the merge's own)."""

    __slots__ = ("cause",)

    def __init__(self, name: str, cause: Exception) -> None:
        super().__init__(name, "if")
        self.cause = cause

    def error(self) -> Exception:  # type: ignore[override]
        return type(self.cause)(*self.cause.args)

    def __repr__(self) -> str:
        return f"<'{self.name}': branch values that do not merge>"


def check_defined(value: Any) -> Any:
    """Raises the error of a variable set in one branch only (used on op inputs and pipeline outputs)."""
    if isinstance(value, SetInOneBranch):
        raise value.error()
    return value
