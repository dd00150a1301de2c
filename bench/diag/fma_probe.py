"""Does torch.addcmul on CUDA round as one fused multiply-add? Compares it (and a*b+c) with
functional.filters.fma32 (the float64 emulation the filter spec runs) on random float32 values,
and times both.   python3 bench/diag/fma_probe.py  -> one JSON line."""
import json
import time

import torch

from torch_dali.functional.filters import fma32


def main():
    g = torch.Generator(device="cuda").manual_seed(0)
    n = 1 << 24
    acc, x, w = (torch.randn(n, device="cuda", generator=g) * s for s in (100.0, 1.0, 3.0))
    ref = fma32(acc, x, w)
    add = torch.addcmul(acc, x, w)
    plain = acc + x * w
    rec = dict(what="fma_probe", n=n, addcmul_mismatch=int((add != ref).sum()),
               plain_mismatch=int((plain != ref).sum()))
    for name, f in (("fma32_ms", lambda: fma32(acc, x, w)), ("addcmul_ms", lambda: torch.addcmul(acc, x, w))):
        f(); torch.cuda.synchronize(); t = time.perf_counter()
        for _ in range(20):
            f()
        torch.cuda.synchronize()
        rec[name] = round((time.perf_counter() - t) / 20 * 1e3, 3)
    print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
