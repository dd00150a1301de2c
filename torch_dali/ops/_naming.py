"""DALI's names of an operator: the schema name (`readers__File`, `experimental__readers__Video`),
the class (`ops.readers.File`) and the function (`fn.readers.file`)."""
from __future__ import annotations

# Words DALI keeps whole in its functional names (`BBox` -> `bbox`, not `b_box`).
_WHOLE_WORDS = {"b_box": "bbox", "mx_net": "mxnet", "tf_record": "tfrecord"}


def to_snake_case(name: str) -> str:
    """DALI's class-to-function name rule (`RandomBBoxCrop` -> `random_bbox_crop`): a word starts at
    an upper-case letter that follows a lower-case one or is followed by one (`COCOReader` ->
    `coco_reader`), except at the start or after an underscore; digits join the word before."""
    out = []
    for i, c in enumerate(name):
        if c.isupper() and i > 0 and name[i - 1] != "_":
            follows_lower = name[i - 1].islower()
            lower_next = i + 1 < len(name) and name[i + 1].islower()
            if follows_lower or lower_next:
                out.append("_")
        out.append(c.lower())
    snake = "".join(out)
    for split, whole in _WHOLE_WORDS.items():
        snake = snake.replace(split, whole)
    return snake


def schema_name(namespace: list[str], class_name: str) -> str:
    """`(["readers"], "File")` -> `readers__File`: DALI's schema name of an op."""
    return "__".join([*namespace, class_name])


def op_name(op_schema_name: str, api: str = "fn") -> str:
    """The dotted name of the op `op_schema_name` in DALI's `fn` API (`readers.file`) or `ops` API
    (`readers.File`)."""
    if api not in ("fn", "ops"):
        raise ValueError(f"_op_name: `api` must be 'fn' or 'ops', got {api!r}")
    *namespace, cls = op_schema_name.split("__")
    return ".".join([*namespace, to_snake_case(cls) if api == "fn" else cls])


def class_for(fn_name: str, *candidates: str) -> str:
    """The class part of the schema name DALI gives the function `fn_name`: the first candidate
    class name whose snake case is `fn_name` (so `op_name` gives the function's path back, as in
    DALI), else the CamelCase of `fn_name`."""
    for name in candidates:
        if to_snake_case(name) == fn_name:
            return name
    return "".join(p[:1].upper() + p[1:] for p in fn_name.split("_"))


def dali_schema_name(path: str, class_name: str) -> str:
    """DALI's schema name of the op at functional `path` (`readers.file` -> `readers__File`) whose
    class is `class_name`."""
    *namespace, fn_name = path.split(".")
    return schema_name(namespace, class_for(fn_name, class_name))
