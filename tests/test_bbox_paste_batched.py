"""bbox_paste's one-pass batch (`bbox_paste_batch`) against the per-sample `bbox_paste` it
replaced in the op: byte-identical boxes for many random batches and arguments."""
import numpy as np
import torch

import torch_dali.functional.detection as K


def test_batch_equals_per_sample():
    rs = np.random.RandomState(0)
    for trial in range(300):
        n = rs.randint(1, 9)
        shapes = [(rs.randint(0, 30), 4) if rs.randint(5) else (4,) for _ in range(n)]
        samples = [torch.from_numpy(rs.uniform(0, 1, s).astype(np.float32)) for s in shapes]
        ratios = [float(rs.choice([1.0, 1.5, 2.0, 3.7, 4.0])) if rs.randint(3) else float(rs.uniform(1, 10))
                  for _ in range(n)]
        px = [float(rs.uniform(0, 1)) if rs.randint(4) else float(rs.choice([0.0, 1.0])) for _ in range(n)]
        py = [float(rs.uniform(0, 1)) for _ in range(n)]
        ltrb = bool(trial % 2)
        got = K.bbox_paste_batch(samples, ltrb, ratios, px, py)
        for g, s, r, x, y in zip(got, samples, ratios, px, py):
            want = K.bbox_paste(s, ltrb, r, x, y)
            assert g.shape == want.shape and g.dtype == torch.float32
            assert g.numpy().tobytes() == want.numpy().tobytes()
    assert K.bbox_paste_batch([], True, [], [], []) == []
