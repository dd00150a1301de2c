"""Per-epoch images/s of one reference row over many epochs in one process (DALI code, run with
NVIDIA DALI or torch_dali): whether a library's speed is steady or dips now and then, which a
3-epoch judge row cannot tell from noise. Prints one JSON line per run.
    [GC=off|freeze] python3 bench/diag/epoch_steady.py LIB ROOT [KIND] [EPOCHS]   (LIB: nvidia.dali | torch_dali)
GC=off disables Python's garbage collector after the build, GC=freeze moves every object made so far
out of its reach (gc.freeze): whether collections of a large heap stall the pipeline's threads."""
import importlib, json, os, sys, time

import torch

MEAN = [0.485 * 255, 0.456 * 255, 0.406 * 255]
STD = [0.229 * 255, 0.224 * 255, 0.225 * 255]


def main():
    lib, root = sys.argv[1], sys.argv[2]
    kind = sys.argv[3] if len(sys.argv) > 3 else "fused"
    epochs = int(sys.argv[4]) if len(sys.argv) > 4 else 12
    nd = importlib.import_module(lib)
    plugin = importlib.import_module(lib + ".plugin.pytorch")
    fn, types = nd.fn, nd.types
    torch.empty(1, device="cuda")

    @nd.pipeline_def(batch_size=256, num_threads=os.cpu_count(), device_id=0, seed=1, prefetch_queue_depth=2)
    def p():
        jpegs, labels = fn.readers.file(file_root=root, random_shuffle=True, name="Reader")
        if kind == "fused":
            images = fn.decoders.image_random_crop(jpegs, device="mixed", output_type=types.RGB, hw_decoder_load=1.0)
            images = fn.resize(images, resize_x=224, resize_y=224)
        else:
            images = fn.decoders.image(jpegs, device="mixed", output_type=types.RGB, hw_decoder_load=0.65)
            images = fn.random_resized_crop(images, size=[224, 224])
        images = fn.crop_mirror_normalize(images, dtype=types.FLOAT, output_layout="CHW", mean=MEAN, std=STD,
                                          mirror=fn.random.coin_flip(probability=0.5))
        return images, labels
    pipe = p()
    pipe.build()
    import gc
    gcmode = os.environ.get("GC", "")
    if gcmode == "off":
        gc.disable()
    elif gcmode == "freeze":
        gc.freeze()
    it = plugin.DALIGenericIterator(pipe, ["data", "label"], reader_name="Reader",
                                    last_batch_policy=plugin.LastBatchPolicy.DROP, auto_reset=True)
    per, waits = [], []
    for e in range(epochs + 1):
        torch.cuda.synchronize()
        t = time.perf_counter()
        n = 0
        last = t
        for out in it:
            n += out[0]["data"].shape[0]
            now = time.perf_counter()
            if e:
                waits.append(now - last)  # host time from one batch to the next
            last = now
        torch.cuda.synchronize()
        if e:  # the first epoch warms up
            per.append(round(n / (time.perf_counter() - t)))
        elif lib == "torch_dali":
            pipe.executor.reset_stage_stats()
    s = sorted(per)
    w = sorted(waits)
    gaps = {"median_ms": round(1000 * w[len(w) // 2], 2), "p90_ms": round(1000 * w[int(len(w) * 0.9)], 2),
            "max5_ms": [round(1000 * v, 1) for v in w[-5:]],
            "over_3x_median": sum(1 for v in w if v > 3 * w[len(w) // 2]), "batches": len(w)}
    print(json.dumps({"what": f"epoch_steady_{kind}", "lib": lib, "gc": os.environ.get("GC", ""),
                      "gc_counts": gc.get_stats()[2]["collections"], "per_epoch_img_s": per,
                      "median": s[len(s) // 2], "min": s[0], "max": s[-1], "batch_gaps": gaps,
                      "stages": pipe.executor.stage_stats() if lib == "torch_dali" else None}), flush=True)


if __name__ == "__main__":
    main()
