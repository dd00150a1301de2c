"""The hand-made mutants of issue 19 (bugs the suite once missed), applied to a copy of the tree.

    python -m tests.reference.mutants NAME [pytest args...]   # from the repository root

copies the repository (git ls-files) to a temporary folder, applies mutant NAME (text edits),
runs pytest there and exits 0 if the tests FAILED (the mutant is killed), 1 if they passed.
docs/mutation.md records the results.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# name: [(file, old text, new text), ...]
MUTANTS: dict[str, list[tuple[str, str, str]]] = {
    "aspect_h_over_w": [
        ("torch_dali/functional/crop_window.py",
         "        w = int(round(math.sqrt(target * ratio)))\n        h = int(round(math.sqrt(target / ratio)))",
         "        w = int(round(math.sqrt(target / ratio)))\n        h = int(round(math.sqrt(target * ratio)))"),
        ("torch_dali/_native/csrc/cpu/crop_windows.c",
         "      const int64_t w = round_even(sqrt(target * ratio));\n      const int64_t h = round_even(sqrt(target / ratio));",
         "      const int64_t w = round_even(sqrt(target / ratio));\n      const int64_t h = round_even(sqrt(target * ratio));"),
    ],
    "never_bottom_right": [
        ("torch_dali/functional/crop_window.py",
         "            y = rng.randint(0, height - h)\n            x = rng.randint(0, width - w)",
         "            y = rng.randint(0, max(0, height - h - 1))\n            x = rng.randint(0, max(0, width - w - 1))"),
        ("torch_dali/_native/csrc/cpu/crop_windows.c",
         "        o[0] = randint(&r, 0, height - h);\n        o[1] = randint(&r, 0, width - w);\n        o[2] = h;",
         "        o[0] = randint(&r, 0, height - h > 0 ? height - h - 1 : 0);\n"
         "        o[1] = randint(&r, 0, width - w > 0 ? width - w - 1 : 0);\n        o[2] = h;"),
    ],
    "yaml_ignores_op_seeds": [
        ("torch_dali/serialization/validate.py",
         "name=name, seed=seed, origin=", "name=name, seed=None, origin="),
    ],
    "cubic_a_minus_0.75": [
        ("torch_dali/functional/resize.py",
         "    cubic = np.where(c > 1, np.float32(-0.5) * c3 + np.float32(2.5) * c2 - np.float32(4) * c + np.float32(2),\n"
         "                     np.float32(1.5) * c3 - np.float32(2.5) * c2 + np.float32(1)).astype(np.float32)",
         "    cubic = np.where(c > 1, np.float32(-0.75) * c3 + np.float32(3.75) * c2 - np.float32(6) * c + np.float32(3),\n"
         "                     np.float32(1.25) * c3 - np.float32(2.25) * c2 + np.float32(1)).astype(np.float32)"),
    ],
}


def apply(root: Path, name: str) -> None:
    for rel, old, new in MUTANTS[name]:
        p = root / rel
        text = p.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"mutant {name}: the text to replace is not found exactly once in {rel}")
        p.write_text(text.replace(old, new))


def main(argv: list[str]) -> int:
    name, pytest_args = argv[0], argv[1:]
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    with tempfile.TemporaryDirectory() as tmp:
        for rel in files:
            src = ROOT / rel
            if src.is_file():
                (Path(tmp) / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, Path(tmp) / rel)
        apply(Path(tmp), name)
        env = dict(os.environ, PYTHONPATH=tmp, TORCH_DALI_EXT_DIR=str(Path(tmp) / ".ext"))
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *pytest_args],
                           cwd=tmp, env=env)
    killed = r.returncode != 0
    print(f"mutant {name}: {'KILLED' if killed else 'SURVIVED'} (pytest exit {r.returncode})")
    return 0 if killed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
