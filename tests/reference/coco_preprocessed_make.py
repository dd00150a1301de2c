"""Writes tests/reference/coco_preprocessed/<case>/: the preprocessed-annotation folders NVIDIA DALI's
readers.coco saves for the COCO sample (detection_cases.write_coco_sample) under each of PRE_CASES.
Run in a DALI venv from the repository root:  python -m tests.reference.coco_preprocessed_make
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from nvidia.dali import fn, pipeline_def

from . import detection_cases as C

OUT = Path(__file__).with_name("coco_preprocessed")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        images, ann = C.write_coco_sample(Path(tmp))
        for name, kw in C.PRE_CASES.items():
            folder = OUT / name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)

            @pipeline_def(batch_size=1, num_threads=1, device_id=None)
            def pipe():
                return tuple(fn.readers.coco(file_root=str(images), annotations_file=str(ann),
                                             save_preprocessed_annotations=True,
                                             save_preprocessed_annotations_dir=str(folder), **kw))
            p = pipe()
            p.build()  # the save happens when the annotations are parsed
            print(name, sorted(f.name for f in folder.iterdir()))


if __name__ == "__main__":
    main()
