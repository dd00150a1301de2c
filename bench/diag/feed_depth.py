"""The judge's train_feed.py with the loader's prefetch depth set from FEED_DEPTH (for A/B on the
feed: does a deeper output queue hide the decoder's slow batches beside training?).
   FEED_DEPTH=4 python3 bench/diag/feed_depth.py ROOT td|tdl [steps]
Without FEED_DEPTH it is the judge's script unchanged."""
import os
import runpy
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", ".refbench", "train_feed.py")

depth = os.environ.get("FEED_DEPTH")
if depth:
    from torch_dali.graph import pipeline as _pipeline

    _init = _pipeline.Pipeline.__init__

    def _init_with_depth(self, *args, **kw):
        kw["prefetch_queue_depth"] = int(depth)
        _init(self, *args, **kw)

    _pipeline.Pipeline.__init__ = _init_with_depth
sys.argv = [SCRIPT] + sys.argv[1:]
runpy.run_path(SCRIPT, run_name="__main__")
