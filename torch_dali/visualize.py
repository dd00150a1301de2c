"""Looking at pipelines and batches: image grids for notebooks, a text description, graphviz DOT.

    show_images(images, labels, mean=IMAGENET_MEAN, std=IMAGENET_STD)   # one matplotlib figure
    print(describe(pipe))                                               # one line per op
    to_dot(pipe)                                                         # DOT text; render_dot() draws it
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Sequence

import torch

from .tensor_list import TensorList

if TYPE_CHECKING:
    from .graph.node import Node
    from .graph.pipeline import Pipeline


# -- batches as images -----------------------------------------------------------------------------

def _channels(n: int) -> bool:
    return n in (1, 3, 4)


def to_nchw(batch: Any, layout: str | None = None) -> torch.Tensor:
    """A batch (TensorList, NCHW/NHWC tensor, list of CHW/HWC tensors) as one NCHW CPU tensor.
    Samples of different sizes are padded (bottom-right) to the largest."""
    if isinstance(batch, TensorList):
        layout = layout or batch.layout() or None
        samples = batch.as_cpu().samples
    elif isinstance(batch, torch.Tensor):
        samples = list(batch.detach().cpu().unbind(0)) if batch.dim() == 4 else [batch.detach().cpu()]
    else:
        samples = [torch.as_tensor(s).detach().cpu() for s in batch]
    if not samples:
        raise ValueError("show_images: the batch is empty")
    out = []
    for s in samples:
        if s.dim() == 2:
            s = s.unsqueeze(0)
        if s.dim() != 3:
            raise ValueError(f"show_images: expected images of 3 dimensions (CHW or HWC), got shape {tuple(s.shape)}")
        hwc = layout == "HWC" if layout in ("HWC", "CHW") else (_channels(s.shape[-1]) and not _channels(s.shape[0]))
        out.append(s.permute(2, 0, 1) if hwc else s)
    h = max(s.shape[1] for s in out)
    w = max(s.shape[2] for s in out)
    c = max(s.shape[0] for s in out)
    grid = torch.zeros((len(out), c, h, w), dtype=out[0].dtype)
    for i, s in enumerate(out):
        grid[i, : s.shape[0], : s.shape[1], : s.shape[2]] = s
    return grid


def to_uint8(x: torch.Tensor, mean: Sequence[float] | None = None, std: Sequence[float] | None = None) -> torch.Tensor:
    """NCHW images for display: undoes `(x - mean) / std`; floats without mean/std in [0, 1] are
    taken as 0..1 images, other floats as 0..255."""
    if x.dtype == torch.uint8 and mean is None and std is None:
        return x
    x = x.float()
    if mean is not None or std is not None:
        s = torch.tensor(list(std) if std is not None else [1.0], dtype=torch.float32).view(1, -1, 1, 1)
        m = torch.tensor(list(mean) if mean is not None else [0.0], dtype=torch.float32).view(1, -1, 1, 1)
        x = x * s + m
    elif x.numel() and float(x.max()) <= 1.0 and float(x.min()) >= 0.0:
        x = x * 255
    return x.clamp(0, 255).round().to(torch.uint8)


def _label_text(label: Any, names: Sequence[str] | None) -> str:
    t = torch.as_tensor(label).flatten()
    if t.numel() != 1:
        return ",".join(f"{v:g}" for v in t.tolist()[:4])
    v = t.item()
    if names is not None and float(v).is_integer() and 0 <= int(v) < len(names):
        return names[int(v)]
    return str(int(v)) if float(v).is_integer() else f"{v:g}"


def show_images(batch: Any, labels: Any = None, mean: Sequence[float] | None = None,
                std: Sequence[float] | None = None, columns: int = 8, ax: Any = None,
                names: Sequence[str] | None = None, layout: str | None = None) -> Any:
    """Draws a batch as a labelled grid on a matplotlib axis (a new figure when `ax` is None).

    `batch`: a TensorList or a torch tensor (NCHW or NHWC, float or uint8) or a list of images;
    `mean`/`std`: the normalization to undo (CropMirrorNormalize's, on the 0..255 scale);
    `labels`: one per image (TensorList, tensor or list); `names`: class names for integer labels.
    Returns the axis."""
    import matplotlib.pyplot as plt
    from torchvision.utils import make_grid

    x = to_uint8(to_nchw(batch, layout), mean, std)
    if x.shape[1] == 1:
        x = x.expand(-1, 3, -1, -1)
    ncol = max(1, min(columns, x.shape[0]))
    grid = make_grid(x[:, :3], nrow=ncol, padding=2)
    if ax is None:
        nrow = -(-x.shape[0] // ncol)
        _, ax = plt.subplots(figsize=(2 * ncol, 2 * nrow * x.shape[2] / max(1, x.shape[3])))
    ax.imshow(grid.permute(1, 2, 0).numpy())
    ax.axis("off")
    if labels is not None:
        if isinstance(labels, TensorList):
            labels = labels.as_cpu().samples
        elif isinstance(labels, torch.Tensor):
            labels = list(labels.detach().cpu().reshape(labels.shape[0], -1))
        h, w = x.shape[2] + 2, x.shape[3] + 2
        for i, lab in enumerate(list(labels)[: x.shape[0]]):
            ax.text((i % ncol) * w + 6, (i // ncol) * h + 6, _label_text(lab, names), color="yellow",
                    fontsize=8, va="top", bbox=dict(facecolor="black", alpha=0.5, pad=1, linewidth=0))
    return ax


# -- pipelines as text ------------------------------------------------------------------------------

def _fmt(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return value.name
    if callable(value) and hasattr(value, "__qualname__"):
        return f"{getattr(value, '__module__', '?')}:{value.__qualname__}"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_fmt(v) for v in value) + "]"
    return repr(value)


def changed_args(node: "Node") -> dict[str, Any]:
    """A node's constant arguments that differ from the op's defaults (required ones included)."""
    out = {}
    for a in node.schema.args:
        v = node.args.get(a.name, a.default)
        if a.required or v != a.default:
            out[a.name] = v
    return out


def _op(node: "Node") -> str:
    return node.schema.name


def describe(pipeline: "Pipeline") -> str:
    """One line per op: name, op, device, inputs, per-sample argument inputs and changed arguments."""
    graph = pipeline.graph
    nodes = graph.reachable()
    head = (f"Pipeline: batch_size={pipeline.batch_size}, num_threads={pipeline.num_threads}, "
            f"device_id={pipeline.device_id}, seed={pipeline.seed}, {len(nodes)} ops")
    wn = max(len(n.name) for n in nodes)
    wo = max(len(_op(n)) for n in nodes)
    lines = [head]
    for n in nodes:
        ins = ", ".join(d.name for d in n.inputs) or "-"
        parts = [f"{k}={_fmt(v)}" for k, v in changed_args(n).items()]
        parts += [f"{k}=<{d.name}>" for k, d in n.arg_inputs.items()]
        lines.append(f"  {n.name:<{wn}}  {_op(n):<{wo}}  {n.device:<5}  <- {ins:<20}  {'  '.join(parts)}".rstrip())
    lines.append("outputs: " + ", ".join(d.name for d in graph.outputs))
    return "\n".join(lines)


_COLORS = {"cpu": "#dbe9f6", "mixed": "#fde9c9", "gpu": "#d5f0d5"}


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(pipeline: "Pipeline") -> str:
    """The graph as graphviz DOT text: one box per op (coloured by device), edges for inputs,
    dashed edges for per-sample argument inputs."""
    graph = pipeline.graph
    lines = ["digraph pipeline {", "  rankdir=LR;", '  node [shape=box, style="rounded,filled", fontname="Helvetica"];']
    for n in graph.reachable():
        args = [f"{k}={_fmt(v)}" for k, v in changed_args(n).items()]
        short = [a if len(a) <= 40 else a[:37] + "..." for a in args][:4]
        label = '"' + "\\n".join(_q(t)[1:-1] for t in [n.name, f"{_op(n)} [{n.device}]", *short]) + '"'
        lines.append(f"  {_q(n.name)} [label={label}, fillcolor={_q(_COLORS.get(n.device, 'white'))}];")
        for d in n.inputs:
            lines.append(f"  {_q(d.node.name)} -> {_q(n.name)}" + (f" [label={_q('out ' + str(d.index))}];" if d.index else ";"))
        for k, d in n.arg_inputs.items():
            lines.append(f"  {_q(d.node.name)} -> {_q(n.name)} [style=dashed, label={_q(k)}];")
    lines.append('  "outputs" [shape=ellipse, fillcolor="white"];')
    for i, d in enumerate(graph.outputs):
        lines.append(f"  {_q(d.node.name)} -> \"outputs\" [label={_q(str(i))}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_dot(pipeline: "Pipeline", path: str, format: str = "png") -> str:
    """Renders to_dot() with the `graphviz` Python package (not a dependency of torch_dali)."""
    try:
        import graphviz
    except ImportError:
        raise ImportError("render_dot needs the graphviz package (pip install graphviz, plus the "
                          "Graphviz binaries); to_dot() gives the DOT text without it") from None
    return graphviz.Source(to_dot(pipeline)).render(outfile=path, format=format, cleanup=True)
