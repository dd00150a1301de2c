"""`ndd.checkpoint`: saving and restoring the positions of stateful dynamic-mode objects (readers
and `ndd.random.RNG`s) together.

`Checkpoint.register(obj, name=None)` tracks an object (anonymous ones get keys `__op_0`,
`__op_1`... in registration order); `collect()` takes every tracked object's state; `serialize()` /
`deserialize()` turn the states into JSON and back (format 2: `{"version": 2, "states": {key:
{"state": str, "type": class name or null}}}`); `save(pattern)` / `load(pattern)` do it through
numbered files (`pattern` holds one `{seq}` field). A loaded state reaches its object when the
object is registered (or at `restore()`), after its class name is checked.
"""
from __future__ import annotations

import glob as _glob
import json
import os
import re
import string
from typing import Any, NamedTuple

from ...io.bounded_file import FileTooLarge, NotRegularFile, read_regular_file
from ...io.write_aside import write_aside

_FORMAT = 2
_AUTO = "__op_"
MAX_BYTES = 64 << 20  # positions and counters; anything larger is not a checkpoint (as checkpointing.py)


class _Entry(NamedTuple):
    state: Any
    type_name: str | None


def _split_pattern(pattern: str) -> tuple[str, str, str]:
    """(text before `{seq...}`, the field as written, text after); ValueError without exactly one."""
    pieces = list(string.Formatter().parse(pattern))
    fields = [(lit, f, spec) for lit, f, spec, _ in pieces if f is not None]
    if len(fields) != 1 or fields[0][1] != "seq":
        raise ValueError(f"checkpoint file pattern {pattern!r} must hold exactly one `{{seq}}` field "
                         "(e.g. 'ckpt_{seq:04d}.json') and no other")
    idx = [p[1] for p in pieces].index("seq")
    before = "".join(p[0] for p in pieces[: idx + 1])
    after = "".join(p[0] for p in pieces[idx + 1:])
    return before, "seq", after


def _numbered_files(pattern: str) -> list[tuple[int, str]]:
    before, _, after = _split_pattern(pattern)
    rx = re.compile(re.escape(before) + r"(\d+)" + re.escape(after) + r"\Z")
    found = []
    for path in _glob.glob(_glob.escape(before) + "*" + _glob.escape(after)):
        m = rx.match(path)
        if m:
            found.append((int(m.group(1)), path))
    return sorted(found)


class Checkpoint:
    """The states of a set of registered readers and RNGs (see the module's doc)."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forgets every registered object and state."""
        self._ops: dict[str, Any] = {}
        self._keys_by_id: dict[int, str] = {}
        self._states: dict[str, _Entry] = {}
        self._dirty: set[str] = set()  # states not yet given to their object
        self._complete = False
        self._loaded = False
        self._next_seq: int | None = None

    @property
    def is_complete(self) -> bool:
        """True after `collect()` (until `deserialize`/`load`)."""
        return self._complete

    @property
    def is_loaded(self) -> bool:
        """True after `deserialize()`/`load()` (until `collect`)."""
        return self._loaded

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._ops)

    def __len__(self) -> int:
        return len(self._ops)

    def __contains__(self, name: object) -> bool:
        return str(name) in self._ops

    def register(self, op: Any, name: str | None = None) -> str:
        """Tracks `op` (a reader or an RNG) under `name` (or the next `__op_N` key); a pending
        state for that key is applied to it at once. Returns the key."""
        if not (callable(getattr(op, "get_state", None)) and callable(getattr(op, "set_state", None))):
            raise TypeError(f"Checkpoint.register: {type(op).__name__} has no get_state/set_state")
        switch_on = getattr(op, "enable_checkpointing", None)
        if callable(switch_on):  # a reader: its get_state() needs it, as in DALI 2.4
            switch_on()
        prev = self._keys_by_id.get(id(op))
        if name is None:
            if prev is not None:
                self._apply(prev)
                return prev
            if self._complete:
                raise RuntimeError("Checkpoint.register: this checkpoint was completed by collect(); no new "
                                   "object can join it (call clear() first)")
            key = f"{_AUTO}{len(self._ops)}"
            if self._loaded and key not in self._states:
                raise KeyError(f"Loaded checkpoint has no state for the key {key!r} (objects registered "
                               "without a name must come in the order they were saved in; name them instead)")
        else:
            key = str(name)
            if not key:
                raise ValueError("Checkpoint.register: the name must not be empty")
            if key.startswith(_AUTO):
                raise ValueError(f"Checkpoint.register: names starting with {_AUTO!r} are kept for unnamed objects")
            if prev is not None and prev != key:
                raise RuntimeError(f"Checkpoint.register: this object is registered as {prev!r} already, "
                                   f"not as {key!r}")
            old = self._ops.get(key)
            if old is not None and old is not op and type(old) is not type(op):
                raise TypeError(f"Cannot replace operator {key!r}: the registered one is "
                                f"{type(old).__qualname__!r}, the new one {type(op).__qualname__!r}")
            if old is None:
                if self._complete:
                    raise RuntimeError(f"Checkpoint.register: this checkpoint was completed by collect(); "
                                       f"{key!r} cannot join it (call clear() first)")
                if self._loaded and key not in self._states:
                    raise KeyError(f"Checkpoint.register: the loaded checkpoint has no state for {key!r}")
            if old is not None:
                self._keys_by_id.pop(id(old), None)
        self._ops[key] = op
        self._keys_by_id[id(op)] = key
        self._apply(key)
        return key

    def _apply(self, key: str) -> None:
        if key not in self._dirty:
            return
        entry, op = self._states[key], self._ops[key]
        if entry.type_name is not None and entry.type_name != type(op).__qualname__:
            raise TypeError(f"Type mismatch for {key!r}: the state is one of a {entry.type_name!r}, the "
                            f"registered object a {type(op).__qualname__!r}")
        op.set_state(entry.state)
        self._dirty.discard(key)

    def get_state(self, name: str) -> Any:
        """The state held for `name` (None before collect/load/set_state); KeyError if unregistered."""
        key = str(name)
        if key not in self._ops:
            raise KeyError(f"Checkpoint.get_state: nothing is registered as {key!r}")
        entry = self._states.get(key)
        return None if entry is None else entry.state

    def set_state(self, name: str, value: Any, op_type: Any = None) -> None:
        """Holds `value` as the state for `name`, to be applied when that object is registered (or
        at `restore()`); `op_type` (a class or its name) is checked against the object then."""
        key = str(name)
        if self._complete and key not in self._ops:
            raise KeyError(f"Checkpoint.set_state: nothing is registered as {key!r}")
        if op_type is None or isinstance(op_type, str):
            type_name = op_type
        elif isinstance(op_type, type):
            type_name = op_type.__qualname__
        else:
            raise TypeError(f"Checkpoint.set_state: op_type must be a class or a class name, got {op_type!r}")
        self._states[key] = _Entry(value, type_name)
        self._dirty.add(key)

    def _check_no_orphans(self, what: str) -> None:
        orphans = sorted(set(self._states) - set(self._ops))
        if orphans:
            raise RuntimeError(f"Checkpoint.{what}: states {orphans} have no corresponding registered ops")

    def collect(self) -> None:
        """Takes the state of every registered object; the checkpoint is then complete."""
        self._check_no_orphans("collect")
        self._states = {k: _Entry(op.get_state(), type(op).__qualname__) for k, op in self._ops.items()}
        self._dirty.clear()
        self._complete, self._loaded = True, False

    def restore(self) -> None:
        """Gives every pending state to its registered object (nothing to do without states)."""
        if not self._states:
            return
        self._check_no_orphans("restore")
        missing = sorted(set(self._ops) - set(self._states))
        if missing:
            raise RuntimeError(f"Checkpoint.restore: the states are incomplete: none for {missing}")
        for key in sorted(self._dirty):
            self._apply(key)

    def serialize(self) -> str:
        """The states as a JSON string (RuntimeError when there are none)."""
        if not self._states:
            raise RuntimeError("Checkpoint.serialize: the checkpoint is empty (collect() or set_state() first)")
        return json.dumps({"version": _FORMAT, "states": {k: {"state": str(e.state), "type": e.type_name}
                                                          for k, e in self._states.items()}})

    def deserialize(self, data: str) -> None:
        """Replaces the states with those of `data` (from `serialize`); they are applied as their
        objects get registered."""
        try:
            payload = json.loads(data)
        except RecursionError:  # "[[[[..." nested past the interpreter's stack
            raise ValueError("Checkpoint.deserialize: not a checkpoint (JSON nested too deeply)") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("states"), dict):
            raise ValueError("Checkpoint.deserialize: not a checkpoint (no `states` mapping)")
        if payload.get("version") != _FORMAT:
            raise ValueError(f"Checkpoint.deserialize: format version {payload.get('version')!r} is not "
                             f"supported (this one reads version {_FORMAT})")
        states: dict[str, _Entry] = {}
        for key, entry in payload["states"].items():
            if not isinstance(entry, dict) or "state" not in entry:
                raise ValueError(f"Invalid checkpoint entry for {key!r}: expected a dict with a `state`")
            type_name = entry.get("type")
            if type_name is not None and not isinstance(type_name, str):
                raise ValueError(f"Invalid `type` in the entry for {key!r}: {type_name!r} is not a class name")
            states[key] = _Entry(entry["state"], type_name)
        self._states = states
        self._dirty = set(states)
        self._complete, self._loaded = False, True

    def save(self, filename: str) -> str:
        """Writes `serialize()` to `filename` with `{seq}` replaced by the next free number (after
        the highest existing one); returns the path."""
        _split_pattern(filename)
        seq = self._next_seq
        if seq is None:
            seq = max((s for s, _ in _numbered_files(filename)), default=-1) + 1
        path = filename.format(seq=seq)
        while os.path.exists(path):
            seq += 1
            path = filename.format(seq=seq)
        data = self.serialize()
        folder = os.path.dirname(path)
        if folder:
            os.makedirs(folder, exist_ok=True)
        write_aside(path, data.encode("utf-8"))  # a link planted at a guessable temporary name is not followed
        self._next_seq = seq + 1
        return path

    def load(self, filename: str) -> str:
        """Reads the highest-numbered file matching `filename` (with `{seq}`); returns its path."""
        found = _numbered_files(filename)
        if not found:
            raise FileNotFoundError(f"Checkpoint.load: no file matches {filename!r}")
        seq, path = found[-1]
        try:  # a regular file of bounded size only: a FIFO in its place blocked open() for ever
            data = read_regular_file(path, MAX_BYTES)
        except NotRegularFile:
            raise ValueError(f"Checkpoint.load: {path} is not a regular file") from None
        except FileTooLarge as e:
            raise ValueError(f"Checkpoint.load: {path} holds {e.size} bytes, more than a checkpoint may "
                             f"({MAX_BYTES})") from None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError(f"Checkpoint.load: {path} is not UTF-8 text") from None
        self.deserialize(text)
        self._next_seq = seq + 1
        return path


def current() -> Checkpoint:
    """The checkpoint of the current `EvalContext` (`EvalContext.current().checkpoint`)."""
    from ._eval import EvalContext

    return EvalContext.current().checkpoint
