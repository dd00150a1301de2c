"""The `torch-dali` command."""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

from . import _knobs

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2

IMAGENET_MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
IMAGENET_STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def training_pipeline(file_root: str, batch_size: int, num_threads: int, device_id: int | None, seed: int):
    """The ImageNet-style training pipeline the demo and benchmarks run."""
    import torch

    from . import fn, pipeline_def, types

    gpu = device_id is not None and torch.cuda.is_available()

    @pipeline_def(batch_size=batch_size, num_threads=num_threads, device_id=device_id, seed=seed)
    def train():
        jpegs, labels = fn.readers.file(file_root=file_root, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed" if gpu else "cpu", output_type=types.RGB)
        images = fn.random_resized_crop(images, size=(224, 224))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(), mean=IMAGENET_MEAN,
                                          std=IMAGENET_STD, dtype=types.FLOAT, output_layout="CHW")
        return images, labels

    return train()


def save_grid(images, labels, path: str, mean=IMAGENET_MEAN, std=IMAGENET_STD, names=None) -> None:
    """A PNG grid of a normalized NCHW batch, de-normalized for viewing, labels written on top."""
    import torch
    from PIL import Image, ImageDraw
    from torchvision.utils import make_grid

    x = images.detach().float().cpu()
    m = torch.tensor(mean).view(1, -1, 1, 1)
    s = torch.tensor(std).view(1, -1, 1, 1)
    x = (x * s + m).clamp(0, 255).to(torch.uint8)
    ncol = min(8, x.shape[0])
    grid = make_grid(x, nrow=ncol, padding=2)
    im = Image.fromarray(grid.permute(1, 2, 0).numpy())
    draw = ImageDraw.Draw(im)
    h, w = x.shape[2] + 2, x.shape[3] + 2
    for i, lab in enumerate(labels.flatten().tolist()[: x.shape[0]]):
        text = names[int(lab)] if names else str(int(lab))
        draw.text(((i % ncol) * w + 6, (i // ncol) * h + 4), text, fill=(255, 255, 0))
    im.save(path)


def cmd_demo(args: argparse.Namespace) -> int:
    import torch

    from .pipeline import Pipeline
    from .sample_data import make_sample_dataset, photo_names

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    data = make_sample_dataset(out / "sample_data", images_per_class=args.images_per_class, seed=0)
    n_images = args.images_per_class * len(photo_names())
    device_id = 0 if torch.cuda.is_available() else None
    print(f"sample dataset: {n_images} JPEGs in {len(photo_names())} class folders + RecordIO at {out / 'sample_data'}")
    print(f"device: {'cuda:0' if device_id is not None else 'cpu'}, threads: {args.threads}")

    pipe = training_pipeline(data["images"], args.batch_size, args.threads, device_id, seed=12)
    pipe.build()
    images, labels = pipe.run()  # warm-up: first batch (thread start, caches)
    t0 = time.perf_counter()
    for _ in range(args.batches):
        images, labels = pipe.run()
    batch = images.as_tensor()
    if batch.is_cuda:
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(f"training pipeline (decode, random-resized-crop 224, flip, normalize): "
          f"{args.batches * args.batch_size / dt:,.0f} images/s over {args.batches} batches of {args.batch_size}")
    grid = out / "batch.png"
    save_grid(batch, labels.as_tensor(), str(grid), names=photo_names())
    print(f"one batch written to {grid}")

    text = pipe.serialize()
    (out / "pipeline.yaml").write_text(text)
    again = Pipeline.deserialize(serialized_pipeline=text)
    again.build()
    fresh = training_pipeline(data["images"], args.batch_size, args.threads, device_id, seed=12)
    fresh.build()
    a, b = fresh.run()[0].as_tensor(), again.run()[0].as_tensor()
    same = bool(torch.equal(a.cpu(), b.cpu()))
    print(f"pipeline saved as YAML to {out / 'pipeline.yaml'}; reloaded copy gives identical batches: {same}")
    for p in (pipe, again, fresh):
        p.shutdown()
    return EXIT_OK if same else EXIT_FAIL



# -- YAML configs: run, validate, show, bench ----------------------------------------------------------

class UsageError(Exception):
    """A bad config, override or data path: reported in one message, exit code 2."""


def _load(args: argparse.Namespace, check_data: bool = True):
    """The config with --data, --set, --batch-size, --allow-module and --allow-function applied (unbuilt)."""
    from . import configs
    from .errors import TorchDaliError

    try:
        overrides = dict(configs.parse_set(item) for item in args.set)
        pipe = configs.load(args.config, data=args.data, batch_size=args.batch_size, overrides=overrides,
                            allow_modules=args.allow_module, allow_functions=args.allow_function)
    except TorchDaliError as e:
        raise UsageError(str(e)) from None
    missing = configs.missing_data(pipe) if check_data else []
    if missing:
        raise UsageError("\n".join(missing) + "\nthe shipped configs hold placeholder paths: pass --data PATH "
                         "(or --set NODE.ARG=VALUE)")
    return pipe


def _batch_len(outs) -> int:
    return len(outs[0]) if outs else 0


def _sync(outs) -> None:
    import torch
    if any(o.is_cuda for o in outs):
        torch.cuda.synchronize()


def cmd_run(args: argparse.Namespace) -> int:
    pipe = _load(args)
    if args.save_config:
        pipe.serialize(filename=args.save_config)
        print(f"resolved config (overrides applied) written to {args.save_config}")
    pipe.build()
    t0 = time.perf_counter()
    t_first = t0
    steady = 0
    images = 0
    try:
        for i in range(args.batches):
            outs = pipe.run()
            n = _batch_len(outs)
            images += n
            now = time.perf_counter()
            if i == 0:
                _sync(outs)
                now = t_first = time.perf_counter()
            else:
                steady += n
            rate = steady / (now - t_first) if i > 0 and now > t_first else images / max(now - t0, 1e-9)
            sys.stderr.write(f"\rbatch {i + 1}/{args.batches}  {rate:,.1f} images/s")
            sys.stderr.flush()
        _sync(outs)
        t_end = time.perf_counter()
    except KeyboardInterrupt:
        # stopping waits (boundedly) for the op running now; a second Ctrl-C stops the wait
        sys.stderr.write("\ninterrupted: stopping the pipeline (Ctrl-C again to stop waiting)")
        raise
    finally:
        sys.stderr.write("\n")
        pipe.shutdown()
    dt = t_end - t0
    rate = steady / (t_end - t_first) if steady else images / dt
    print(f"{args.config}: {args.batches} batches, {images} images in {dt:.2f} s: {rate:,.1f} images/s "
          f"(after the first batch, which took {t_first - t0:.2f} s)")
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from . import configs, visualize

    try:
        problems = configs.check(args.config, args.allow_module, args.allow_function)
    except Exception as e:  # noqa: BLE001 - a missing file, say
        raise UsageError(str(e)) from None
    if problems:
        for p in problems:
            print(p, file=sys.stderr)
        print(f"{args.config}: {len(problems)} problem{'s' if len(problems) > 1 else ''}", file=sys.stderr)
        return EXIT_USAGE
    pipe = _load(args, check_data=False)
    print(f"{configs.find(args.config)}: OK")
    print(visualize.describe(pipe))
    for line in configs.missing_data(pipe):
        print(f"note: {line} (pass --data PATH to run it)")
    return EXIT_OK


def _normalization(pipe) -> tuple[list[float] | None, list[float] | None, str]:
    """The mean/std that undo the last CropMirrorNormalize (with its scale and shift), if any."""
    nodes = [n for n in pipe.graph.reachable() if n.schema.name == "crop_mirror_normalize"]
    if not nodes:
        return None, None, ""
    n = nodes[-1]
    if "mean" in n.arg_inputs or "std" in n.arg_inputs:
        return None, None, ""
    as_list = (lambda v: [float(x) for x in v] if isinstance(v, (list, tuple)) else [float(v)])
    mean, std = as_list(n.args.get("mean", 0.0)), as_list(n.args.get("std", 1.0))
    scale, shift = float(n.args.get("scale", 1.0)), float(n.args.get("shift", 0.0))
    if len(mean) != len(std):
        mean, std = (mean * len(std), std) if len(mean) == 1 else (mean, std * len(mean))
    eff_std = [s / scale for s in std]
    return [m - shift * s for m, s in zip(mean, eff_std)], eff_std, n.name


def _class_names(pipe) -> list[str] | None:
    for n in pipe.graph.reachable():
        root = n.args.get("file_root") if n.schema.name == "readers.file" else None
        if root and not n.args.get("file_list") and not n.args.get("files") and Path(root).is_dir():
            return sorted(p.name for p in Path(root).iterdir() if p.is_dir())
    return None


def cmd_show(args: argparse.Namespace) -> int:
    import torch

    from .visualize import to_nchw, to_uint8

    pipe = _load(args)
    try:
        outs = pipe.run()
        mean, std, where = _normalization(pipe)
        x = to_uint8(to_nchw(outs[0]), mean, std)[: args.max_images]
        labels = torch.empty(0)
        if len(outs) > 1:
            lab = outs[1].as_cpu().samples[: x.shape[0]]
            labels = torch.stack([t.flatten()[0] if t.numel() else torch.tensor(-1) for t in lab])
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        save_grid(x, labels, str(out), mean=[0.0], std=[1.0], names=_class_names(pipe))
    finally:
        pipe.shutdown()
    how = f"de-normalized with {where}'s mean/std" if where else "no CropMirrorNormalize: shown as is"
    print(f"{x.shape[0]} images of one batch written to {out} ({how})")
    return EXIT_OK


class _Progress:
    """Bench's phases on stderr: a line as each starts, the batch count as it goes (in place on a
    terminal, else a line every few seconds), and a closing line with batches and seconds."""

    def __init__(self, name: str, total: int) -> None:
        self.name, self.total = name, total
        self.tty = sys.stderr.isatty()
        self.t0 = self.last = time.perf_counter()
        sys.stderr.write(f"torch-dali bench: {name}: {total} batches ...\n")
        sys.stderr.flush()

    def step(self, done: int) -> None:
        now = time.perf_counter()
        if self.tty:
            sys.stderr.write(f"\r  batch {done}/{self.total}")
        elif now - self.last >= 5.0:
            sys.stderr.write(f"  batch {done}/{self.total} ({now - self.t0:.0f} s)\n")
            self.last = now
        else:
            return
        sys.stderr.flush()

    def close(self) -> None:
        done = f"{self.total}/{self.total} batches in {time.perf_counter() - self.t0:.1f} s"
        sys.stderr.write(f"\r  {done}\n" if self.tty else f"  {done}\n")
        sys.stderr.flush()


def cmd_bench(args: argparse.Namespace) -> int:
    from .executor.plan import Plan

    pipe = _load(args)
    n = args.batches
    try:  # 1. throughput as a training loop sees it: the normal executor (stages overlap, prefetching)
        sys.stderr.write("torch-dali bench: building the pipeline and making a first batch (the first run "
                         "may compile the C helpers) ...\n")
        sys.stderr.flush()
        t_build = time.perf_counter()
        pipe.build()
        _sync(pipe.run())
        sys.stderr.write(f"  ready in {time.perf_counter() - t_build:.1f} s\n")
        progress = _Progress("[1/2] throughput, the pipeline as a training loop runs it", n)
        t0 = time.perf_counter()
        images = 0
        for i in range(n):
            outs = pipe.run()
            images += _batch_len(outs)
            progress.step(i + 1)
        _sync(outs)
        rate = images / (time.perf_counter() - t0)
        progress.close()
        graph, bs, threads, device_id = pipe.graph, pipe.batch_size, pipe.num_threads, pipe.device_id
        strict = pipe.strict_device
    finally:
        pipe.shutdown()
    # 2. per-op time: a plan of the same graph run step by step, synchronously, each op timed
    plan = Plan(graph, bs, threads, device_id, strict)
    try:
        timer = plan.time_ops()
        plan.run(0)
        timer.reset()
        progress = _Progress("[2/2] per-op profile, each op run and timed on its own", n)
        t0 = time.perf_counter()
        for it in range(1, n + 1):
            outs = plan.run(it)
            progress.step(it)
        _sync(outs)
        total = time.perf_counter() - t0
        progress.close()
    finally:
        plan.close()
    device = f"cuda:{plan.cuda.index}" if plan.cuda is not None else "cpu"
    print(f"{args.config}: batches of {bs}, {threads} threads, {device}")
    print(f"throughput: {rate:,.1f} images/s over {n} batches: the normal executor, as a training loop "
          "gets it (stages on their own threads, batches prefetched, work of several batches overlapping)")
    per = {name: s / n * 1e3 for name, s in timer.seconds.items()}
    slow = max(per, key=per.get)
    whole = total / n * 1e3
    wn = max(len("op"), *(len(x.name) for x in plan.nodes))
    wo = max(len("kind"), *(len(x.schema.name) for x in plan.nodes))
    print(f"\nper-op profile: {whole:.1f} ms per batch for all ops run one after another, each timed on "
          "its own (GPU work waited for after each op); it says where the time goes, not how fast "
          "the pipeline runs:")
    print(f"  {'op':<{wn}}  {'kind':<{wo}}  {'device':<10}  {'ms/batch':>9}  {'share':>6}")
    for node in plan.nodes:
        ran = plan.ops[node.id].device.type
        dev = node.device if ran == "cuda" or node.device == "cpu" else f"{node.device}(cpu)"
        mark = "  <- slowest" if node.name == slow else ""
        print(f"  {node.name:<{wn}}  {node.schema.name:<{wo}}  {dev:<10}  {per[node.name]:9.2f}  "
              f"{100 * per[node.name] / max(whole, 1e-9):5.1f}%{mark}")
    print(f"slowest stage: {slow} ({next(x.schema.name for x in plan.nodes if x.name == slow)}), "
          f"{per[slow]:.2f} ms/batch, {100 * per[slow] / max(whole, 1e-9):.0f}% of the profiled time")
    return EXIT_OK


def _config_args(p: argparse.ArgumentParser, data: bool = True) -> None:
    from .configs import available

    names = ", ".join(available())
    p.add_argument("config", help="a pipeline YAML file" + (f", or a shipped config: {names}" if names else ""))
    if data:
        p.add_argument("--data", metavar="PATH", help="point the reader at PATH: readers.file -> file_root (a "
                       "folder of class folders); readers.mxnet -> a .rec file (its .idx beside it) or a "
                       "folder of .rec/.idx pairs")
    p.add_argument("--set", action="append", default=[], metavar="NODE.ARG=VALUE",
                   help="override an op argument (value read as YAML), e.g. Reader.random_shuffle=false, "
                   "or a pipeline setting, e.g. num_threads=4; repeatable")
    p.add_argument("--allow-module", action="append", default=[], metavar="MODULE",
                   help="let the YAML name the Python functions defined in MODULE (that module only, "
                   "`def` functions only); repeatable")
    p.add_argument("--allow-function", action="append", default=[], metavar="MODULE:NAME",
                   help="let the YAML name MODULE:NAME, whatever it is (you vouch for it); repeatable")
    p.add_argument("--batch-size", type=int, default=None, help="override the config's batch size")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="torch-dali", description="torch_dali: GPU data pipelines with DALI's API",
                                     epilog="exit codes: 0 ok, 1 runtime failure, 2 usage or validation error")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build the sample dataset, run the training pipeline, write a PNG grid")
    demo.add_argument("--out", default="demo_output", help="folder for the dataset, grid and YAML")
    demo.add_argument("--batch-size", type=int, default=32)
    demo.add_argument("--batches", type=int, default=10)
    demo.add_argument("--threads", type=int, default=2)
    demo.add_argument("--images-per-class", type=int, default=24)
    demo.set_defaults(func=cmd_demo)

    run = sub.add_parser("run", help="run a YAML pipeline for N batches, showing images/s")
    _config_args(run)
    run.add_argument("--batches", type=int, default=10, help="how many batches to run (default 10)")
    run.add_argument("--save-config", metavar="FILE", help="write the config with overrides applied to FILE")
    run.set_defaults(func=cmd_run)

    val = sub.add_parser("validate", help="check a YAML pipeline; every problem is reported with its line")
    _config_args(val)
    val.set_defaults(func=cmd_validate)

    show = sub.add_parser("show", help="write a labelled PNG grid of one batch")
    _config_args(show)
    show.add_argument("--out", default="grid.png", help="the PNG to write (default grid.png)")
    show.add_argument("--max-images", type=int, default=64, help="at most this many images (default 64)")
    show.set_defaults(func=cmd_show)

    bench = sub.add_parser("bench", help="throughput as a training loop gets it, then a per-op profile "
                           "naming the slowest op")
    _config_args(bench)
    bench.add_argument("--batches", type=int, default=20, help="batches to time (default 20)")
    bench.set_defaults(func=cmd_bench)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2): returned, so main() can be called in-process
        return e.code if isinstance(e.code, int) else (EXIT_OK if e.code is None else EXIT_USAGE)
    if args.command == "demo":
        return int(args.func(args))
    for key in ("batches", "batch_size", "max_images"):
        value = getattr(args, key, None)
        if value is not None and value < 1:
            print(f"torch-dali {args.command}: --{key.replace('_', '-')} must be >= 1, got {value}", file=sys.stderr)
            return EXIT_USAGE
    def warn(message, category, *_a, **_k) -> None:
        print(f"torch-dali {args.command}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.showwarning = warn
            return int(args.func(args))
    except UsageError as e:
        print(f"torch-dali {args.command}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"\ntorch-dali {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # noqa: BLE001 - a runtime failure: one clear message, exit 1
        print(f"torch-dali {args.command}: failed: {type(e).__name__}: {e}", file=sys.stderr)
        if _knobs.get("TORCH_DALI_TRACEBACK"):
            raise
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
