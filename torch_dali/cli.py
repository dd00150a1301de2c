"""The `torch-dali` command."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torch-dali", description="torch_dali: GPU data pipelines with DALI's API")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="build the sample dataset, run the training pipeline, write a PNG grid")
    demo.add_argument("--out", default="demo_output", help="folder for the dataset, grid and YAML")
    demo.add_argument("--batch-size", type=int, default=32)
    demo.add_argument("--batches", type=int, default=10)
    demo.add_argument("--threads", type=int, default=2)
    demo.add_argument("--images-per-class", type=int, default=24)
    demo.set_defaults(func=cmd_demo)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
