"""Generated documentation: the op reference from the schemas (`python -m torch_dali.docs >
docs/ops.md`) and the README's table of knobs from `_knobs` (`python -m torch_dali.docs knobs`)."""
from __future__ import annotations

import sys

from .ops import all_schemas


def _value(v: object) -> str:
    if v is None:
        return "—"
    name = getattr(v, "name", None)
    return f"`types.{name}`" if name and type(v).__module__.endswith("types") else f"`{v!r}`"


def ops_markdown(include_private: bool = False) -> str:
    """One section per op: its fn and class names, devices, inputs, outputs and arguments."""
    out = ["# Operator reference", "",
           "Generated from the op schemas by `python -m torch_dali.docs`; the tests check it is current.", ""]
    for s in sorted(all_schemas(), key=lambda s: s.name):
        if not include_private and (s.name.startswith("_") or not s.impl.__module__.startswith("torch_dali")):
            continue  # test-only and user-registered ops are not part of the reference
        prefix = s.name.rsplit(".", 1)[0] + "." if "." in s.name else ""
        names = [f"`fn.{s.name}`", f"`ops.{prefix}{s.class_name}`"] + [f"`ops.{n}`" for n in s.legacy_names]
        outs = "depends on arguments" if callable(s.num_outputs) else str(s.num_outputs)
        ins = str(s.min_inputs) if s.min_inputs == s.max_inputs else f"{s.min_inputs} to {s.max_inputs}"
        out += [f"## {s.name}", "", s.doc or "", "",
                f"Names: {', '.join(names)}. Devices: {', '.join(s.devices)}. Inputs: {ins}. Outputs: {outs}."
                + (" Random: draws are keyed by (seed, iteration, sample)." if s.random else ""), ""]
        shown = [a for a in s.args if not a.name.startswith("_")]  # internal ones (`_random_state`), as DALI's docs
        if shown:
            out += ["| argument | kind | default | per-sample | meaning |", "| --- | --- | --- | --- | --- |"]
            for a in shown:
                default = "required" if a.required else _value(a.default)
                aliases = f" (alias {', '.join(a.aliases)})" if a.aliases else ""
                doc = a.doc.replace("|", "\\|").replace("\n", " ")
                out.append(f"| `{a.name}`{aliases} | {a.kind} | {default} | {'yes' if a.tensor else ''} | {doc} |")
            out.append("")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    from ._knobs import markdown_table
    sys.stdout.write(markdown_table() if sys.argv[1:] == ["knobs"] else ops_markdown())
