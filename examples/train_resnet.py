"""One training loop, two loaders: torch.utils.data.DataLoader or torch_dali.DataLoader (--loader).

    python examples/train_resnet.py --loader torch_dali --data demo_output/sample_data/images
    python examples/train_resnet.py --loader torch --data demo_output/sample_data/images
    torchrun --nproc-per-node 2 examples/train_resnet.py --loader torch_dali --data ...   # DDP

The loop is the same for both: only `make_loader` differs. Under torchrun each rank reads its own
shard (the same index sets DistributedSampler would give), and `set_epoch` is called the same way.
"""
from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
import torchvision

MEAN = [0.485, 0.456, 0.406]
STD = [0.229, 0.224, 0.225]


def make_loader(kind: str, data: str, batch_size: int, workers: int, device: torch.device):
    if kind == "torch":
        from torchvision import transforms
        tf = transforms.Compose([transforms.RandomResizedCrop(224), transforms.RandomHorizontalFlip(),
                                 transforms.ToTensor(), transforms.Normalize(MEAN, STD)])
        ds = torchvision.datasets.ImageFolder(data, transform=tf)
        sampler = torch.utils.data.DistributedSampler(ds) if dist.is_initialized() else None
        return torch.utils.data.DataLoader(ds, batch_size=batch_size, shuffle=sampler is None, sampler=sampler,
                                           num_workers=workers, pin_memory=device.type == "cuda"), sampler

    import torch_dali
    from torch_dali import fn, pipeline_def, types

    @pipeline_def(num_threads=workers, seed=42)
    def train():
        jpegs, labels = fn.readers.file(file_root=data, random_shuffle=True, name="Reader")
        images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB)
        images = fn.random_resized_crop(images, size=(224, 224))
        images = fn.crop_mirror_normalize(images, mirror=fn.random.coin_flip(),
                                          mean=[m * 255 for m in MEAN], std=[s * 255 for s in STD])
        return images, labels

    loader = torch_dali.DataLoader(train, batch_size=batch_size, device=device)
    return loader, loader  # torch_dali.DataLoader has set_epoch itself


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--loader", choices=["torch", "torch_dali"], default="torch_dali")
    ap.add_argument("--data", required=True, help="a folder of class folders of images")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: no limit)")
    args = ap.parse_args()

    if "RANK" in os.environ and not dist.is_initialized():
        dist.init_process_group("nccl" if torch.cuda.is_available() else "gloo")
    rank = dist.get_rank() if dist.is_initialized() else 0
    if torch.cuda.is_available():
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")

    loader, sampler = make_loader(args.loader, args.data, args.batch_size, args.workers, device)
    num_classes = len([d for d in os.listdir(args.data) if os.path.isdir(os.path.join(args.data, d))])
    model = torchvision.models.resnet18(num_classes=num_classes).to(device)
    if dist.is_initialized():
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    step = 0
    for epoch in range(args.epochs):
        if sampler is not None:
            sampler.set_epoch(epoch)
        t0, seen = time.perf_counter(), 0
        for images, labels in loader:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            loss = torch.nn.functional.cross_entropy(model(images), labels)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            seen += images.shape[0]
            step += 1
            if args.max_steps and step >= args.max_steps:
                break
        if rank == 0:
            print(f"epoch {epoch}: loss {loss.item():.3f}, {seen / (time.perf_counter() - t0):.0f} images/s "
                  f"on rank 0 ({args.loader})")
    if dist.is_initialized():
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
