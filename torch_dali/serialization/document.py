"""Reading a pipeline YAML document: one safe loader, one set of limits, each refusal with its line.

A pipeline file is a page of plain values. Before anything is built, the text is streamed once as
YAML events and refused at the first event past a limit, so no document is expanded, nested or
counted without bound: the file size (checked before reading), aliases (none: `*x` could expand
without bound), nesting depth, the number of values, and the tags (plain strings, numbers,
booleans, null, lists and mappings only: no `!!binary`, `!!python/...`, `!!set`, timestamps or
merge keys). Only then is the document constructed, with each mapping's line and each key's line.
"""
from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from ..errors import SerializationError
from ..io.bounded_file import FileTooLarge, NotRegularFile, read_regular_file

MAX_BYTES = 4 * 2**20  # a pipeline is a page of text; long file lists belong in a file_list
MAX_DEPTH = 32  # a pipeline nests about 6 deep (ops, an op, its args, a list of lists)
MAX_NODES = 100_000  # values (scalars, lists, mappings) in one document
# int() of 4300+ digits raises ValueError, a float's overflows, and YAML 1.1's base-60 numbers
# (1:59:59...) take quadratic time to construct (4 MiB of them: minutes)
MAX_NUMBER_CHARS = 100

_TOO_DEEP = f"nested too deeply to be a pipeline (at most {MAX_DEPTH} levels)"
_CORE = "tag:yaml.org,2002:"
_TAGS = {_CORE + t for t in ("str", "int", "float", "bool", "null", "seq", "map")}
_NUMBERS = {_CORE + "int", _CORE + "float"}
# libyaml when PyYAML has it: linear time on any input (the pure-Python scanner is quadratic in the
# flow nesting it looks ahead over); both give the same values and marks.
_Base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Mapping(dict):
    """A YAML mapping that remembers its line (`line`) and the line of each key (`key_lines`)."""

    __slots__ = ("line", "key_lines")

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[Any, int] = {}


class _Loader(_Base):
    """A safe loader without the implicit tags a pipeline never means: a date-like string stays a
    string, `<<` and `=` are plain keys."""

    yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag in _TAGS]
        for first, resolvers in _Base.yaml_implicit_resolvers.items()
    }

    def construct_line_mapping(self, node: yaml.Node) -> Mapping:
        if not isinstance(node, yaml.MappingNode):
            raise yaml.constructor.ConstructorError(None, None, "expected a mapping", node.start_mark)
        out = Mapping(node.start_mark.line + 1)
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(None, None, "a key must be a plain value",
                                                        key_node.start_mark)
            if key in out:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {key!r} appears twice in one mapping (first on line "
                    f"{out.key_lines[key]})", key_node.start_mark)
            out[key] = self.construct_object(value_node, deep=True)
            out.key_lines[key] = line
        return out


_Loader.add_constructor(_CORE + "map", _Loader.construct_line_mapping)


def _problem(error: yaml.YAMLError) -> str:
    if isinstance(error, yaml.reader.ReaderError):
        return f"unacceptable character {error.character!r}: {error.reason}"
    return str(getattr(error, "problem", None) or error)


def _line(error: yaml.YAMLError, text: str) -> int | str:
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    if mark is not None:
        return mark.line + 1
    position = getattr(error, "position", None)  # a ReaderError: an unprintable character
    return text.count("\n", 0, position) + 1 if isinstance(position, int) else "?"


def _refuse(source: str, line: int | str, message: str) -> SerializationError:
    return SerializationError(f"{source} line {line}: {message}")


def _scan(text: str, source: str) -> None:
    """One pass over the YAML events, stopping at the first one past a limit."""
    loader = _Loader(text)
    depth = nodes = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.AliasEvent):
                raise _refuse(source, event.start_mark.line + 1, f"YAML aliases (*{event.anchor}) are not "
                              "allowed in a pipeline file; write the value out")
            if not isinstance(event, (yaml.ScalarEvent, yaml.CollectionStartEvent, yaml.CollectionEndEvent)):
                continue
            if isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
                continue
            line = event.start_mark.line + 1
            tag = event.tag
            if tag not in (None, "!") and tag not in _TAGS:
                shown = "!!" + tag[len(_CORE):] if tag.startswith(_CORE) else tag
                raise _refuse(source, line, f"the YAML tag {shown} is not allowed in a pipeline file (only "
                              "plain strings, numbers, booleans, null, lists and mappings)")
            if isinstance(event, yaml.ScalarEvent) and len(event.value) > MAX_NUMBER_CHARS \
                    and loader.resolve(yaml.ScalarNode, event.value, event.implicit) in _NUMBERS:
                raise _refuse(source, line, f"a number of {len(event.value)} characters is too long "
                              f"for a pipeline file (at most {MAX_NUMBER_CHARS})")
            nodes += 1
            if nodes > MAX_NODES:
                raise _refuse(source, line, f"more than {MAX_NODES} values: too large to be a pipeline")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise _refuse(source, line, _TOO_DEEP)
    except yaml.YAMLError as e:
        if "maximum nesting depth" in _problem(e):  # libyaml's own bound (1000) met while scanning ahead
            raise _refuse(source, _line(e, text), _TOO_DEEP) from None
        raise _refuse(source, _line(e, text), f"not valid YAML: {_problem(e)}") from None
    finally:
        loader.dispose()


def decode(data: str | bytes, source: str) -> str:
    """The text of a document, refused before parsing when it is too large or not UTF-8."""
    if len(data) > MAX_BYTES:
        raise SerializationError(f"{source}: {len(data)} {'bytes' if isinstance(data, bytes) else 'characters'} "
                                 f"is more than a pipeline file may hold ({MAX_BYTES})")
    if isinstance(data, str):
        return data
    if data[:1] and data[0] < 0x09:  # no text starts so; DALI's protobuf PipelineDef starts 0x08
        raise SerializationError(f"{source}: binary data, not a YAML pipeline (DALI's serialize() writes a "
                                 "protobuf, which torch_dali cannot read): build the pipeline from its Python "
                                 "definition under torch_dali and serialize it there")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise SerializationError(f"{source} line {line}: not UTF-8 text (byte {e.start}: {e.reason}); a "
                                 "pipeline file is UTF-8") from None


def read_file(path: str | os.PathLike[str]) -> str:
    """A pipeline file's text. Only a regular file is read (never a FIFO or a device, which could
    block or never end), its size checked before reading and the read bounded (`io.bounded_file`)."""
    source = str(path)
    try:
        data = read_regular_file(Path(path), MAX_BYTES)
    except NotRegularFile:
        raise SerializationError(f"{source}: not a regular file") from None
    except FileTooLarge as e:
        raise SerializationError(f"{source}: {e.size} bytes is more than a pipeline file may hold "
                                 f"({MAX_BYTES})") from None
    except OSError as e:
        raise SerializationError(f"cannot read pipeline file {source}: {e.strerror}") from None
    return decode(data, source)


def parse(text: str | bytes, source: str) -> Any:
    """The document in `text` (mappings as `Mapping`), or a SerializationError naming the line."""
    text = decode(text, source)
    _scan(text, source)
    loader = _Loader(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as e:
        raise _refuse(source, _line(e, text), f"not valid YAML: {_problem(e)}") from None
    finally:
        loader.dispose()


def plain(value: Any) -> Any:
    """`value` with each Mapping as a plain dict (depth is bounded by MAX_DEPTH)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
