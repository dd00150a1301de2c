import sys
from pathlib import Path

from . import make

if len(sys.argv) != 2:
    sys.exit("usage: python -m conformance.extra_standin DIR")
make(Path(sys.argv[1]))
