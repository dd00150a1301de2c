"""`readers.coco` (DALI's COCOReader): images of a COCO data set with their boxes, labels, masks, ids.

Outputs, in DALI 2.4's order: the encoded image (uint8, (size,)), boxes (float32, (n, 4): [x, y, w,
h], or [l, t, r, b] with `ltrb`; relative with `ratio`), labels (int32, (n,)), then with
`polygon_masks` polygons (int32, (p, 3): object, first vertex, end vertex) and vertices (float32,
(v, 2)), or with `pixelwise_masks` a mask (int32, (H, W, 1), HWC: each pixel the label of the object
covering it), then with `image_ids` the image id (int32, (1,)). The annotation file is parsed by
torch_dali.io.coco (untrusted input: bounded, checked field by field). `save_preprocessed_annotations`
keeps the parsed annotations as a folder of binary lists in DALI's layout, which
`preprocessed_annotations` reads back without parsing the JSON (torch_dali.io.coco_preprocessed).

Images are read from `file_root`/file_name; a file_name leading outside `file_root` (absolute, or
`..`) is refused unless `allow_outside_root=True` (an addition; DALI reads it). Sharding, shuffling
and padding are the other readers' (see `_base`).
"""
from __future__ import annotations

import os
from typing import Any

import torch

from ...errors import ArgumentError, DataError
from ...io import coco as C
from ...io import coco_preprocessed as P
from ...tensor_list import TensorList
from .._operator import BatchContext
from .._registry import register
from .._schema import Arg, OpSchema
from ._base import READER_ARGS, ReaderBase
from ._multi import outside
from ._storage import read_file_bytes


class CocoReader(ReaderBase):
    """Parses the annotations once (at build, or first use with `lazy_init`); reads images on threads."""

    def _check_args(self) -> None:
        a = self.args
        if a["file_root"] is None:
            raise ArgumentError(f"{self.name}: `file_root` (the folder of the images) is required")
        given = self.node.explicit
        if a["preprocessed_annotations"]:
            # the saved annotations have these applied already (DALI refuses them too)
            for k in ("annotations_file", "skip_empty", "ratio", "ltrb", "images", "size_threshold",
                      "save_preprocessed_annotations", "save_preprocessed_annotations_dir"):
                if k in given:
                    raise ArgumentError(f"{self.name}: `{k}` cannot be given with `preprocessed_annotations` "
                                        "(the saved annotations were made with their parse options)")
        elif not a["annotations_file"]:
            raise ArgumentError(f"{self.name}: `annotations_file` (the COCO JSON file) or "
                                "`preprocessed_annotations` (a folder a save wrote) is required")
        if ("save_preprocessed_annotations" in given) != ("save_preprocessed_annotations_dir" in given) or \
                (a["save_preprocessed_annotations"] and not a["save_preprocessed_annotations_dir"]):
            raise ArgumentError(f"{self.name}: give `save_preprocessed_annotations` and "
                                "`save_preprocessed_annotations_dir` (a folder) together")
        self.polygon_out = bool(a["polygon_masks"] or a["masks"])
        self.pixelwise = bool(a["pixelwise_masks"])
        if self.polygon_out and self.pixelwise:
            raise ArgumentError(f"{self.name}: `polygon_masks` and `pixelwise_masks` cannot be used together")
        if self.shuffle and self.after_epoch:
            raise ArgumentError(f"{self.name}: `random_shuffle` cannot be used with shuffle_after_epoch")
        self._samples: list[C.CocoSample] = []

    def _describe_source(self) -> str:
        if self.args["preprocessed_annotations"]:
            return f"the preprocessed annotations {self.args['preprocessed_annotations']} list no images"
        return f"{self.args['annotations_file']} lists no images (with skip_empty: none with objects)"

    def _list(self) -> int:
        a = self.args
        masks = self.polygon_out or self.pixelwise
        if a["preprocessed_annotations"]:
            self._samples = P.load(a["preprocessed_annotations"], masks, self.pixelwise, bool(a["image_ids"]))
            self._check_inside_root(a["preprocessed_annotations"])
            return len(self._samples)
        images = a["images"]
        opts = C.CocoOptions(ltrb=a["ltrb"], ratio=a["ratio"], size_threshold=a["size_threshold"],
                             include_iscrowd=a["include_iscrowd"], skip_empty=a["skip_empty"],
                             avoid_class_remapping=a["avoid_class_remapping"],
                             polygons=masks, rles=self.pixelwise,
                             images=None if images is None else ([images] if isinstance(images, str) else list(images)))
        self._samples = C.parse(a["annotations_file"], opts)
        self._check_inside_root(a["annotations_file"])
        if a["save_preprocessed_annotations"]:
            P.save(self._samples, a["save_preprocessed_annotations_dir"], masks, self.pixelwise, bool(a["image_ids"]))
        return len(self._samples)

    def _check_inside_root(self, listed_in: str) -> None:
        a = self.args
        if not a["allow_outside_root"]:
            for s in self._samples:
                if outside(s.file_name, a["file_root"]):
                    raise DataError(f"{self.name}: {listed_in}: image file_name {s.file_name!r} "
                                    f"(id {s.image_id}) is outside file_root {a['file_root']} "
                                    "(allow_outside_root=True reads it anyway)")

    def _path(self, index: int) -> str:
        return os.path.join(self.args["file_root"], self._samples[index].file_name)

    def _load(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        # the label slot carries the sample's index: annotations are assembled per batch from it
        return read_file_bytes(self._path(index), self.name), torch.tensor(index)

    def _source(self, index: int) -> str:
        return self._path(index)

    def _info(self, index: int) -> str:
        """DALI 2.4's source_info(): the image's file_name as the annotations list it."""
        return self._samples[index].file_name

    def run_batch(self, ctx: BatchContext, inputs: list[TensorList], args: dict[str, list[Any]]) -> list[TensorList]:
        if self.may_skip:  # the base's skipping path yields (data, index) pairs
            data, idx = super().run_batch(ctx, inputs, args)
            indices = [int(t) for t in idx]
            return self._assemble(indices, [(d, None) for d in data])
        return super().run_batch(ctx, inputs, args)

    def _assemble(self, indices: list[int], rows: list[tuple[Any, ...]]) -> list[TensorList]:
        samples = [self._samples[i] for i in indices]
        outs = [TensorList([r[0] for r in rows]),
                TensorList([torch.from_numpy(s.boxes) for s in samples]),
                TensorList([torch.from_numpy(s.labels) for s in samples])]
        if self.polygon_out:
            scale = 2 if self.args["masks"] and not self.args["polygon_masks"] else 1  # legacy: coordinates
            polys = []
            for s in samples:
                p = torch.from_numpy(s.polygons.copy())
                p[:, 1:] *= scale
                polys.append(p)
            outs += [TensorList(polys), TensorList([torch.from_numpy(s.vertices) for s in samples])]
        if self.pixelwise:
            from ...io.coco_masks import pixelwise_mask
            rel = bool(self.args["ratio"])
            outs.append(TensorList([pixelwise_mask(s, relative=rel) for s in samples], "HWC"))
        if self.args["image_ids"]:
            outs.append(TensorList([torch.tensor([s.image_id], dtype=torch.int32) for s in samples]))
        return outs

    def output_layout(self, index: int) -> str:
        return "HWC" if self.pixelwise and index == 3 else ""


def _outputs(args: dict[str, Any]) -> int:
    polygons = bool(args.get("polygon_masks") or args.get("masks"))
    return 3 + 2 * polygons + bool(args.get("pixelwise_masks")) + bool(args.get("image_ids"))


register(OpSchema(
    name="readers.coco", impl=CocoReader, legacy_names=("COCOReader",), devices=("cpu",),
    class_name_override="COCO", min_inputs=0, max_inputs=0, num_outputs=_outputs,
    doc="Reads a COCO data set: encoded images with boxes, labels (and polygons + vertices, or "
        "pixel-wise masks, and image ids), images in the order of their ids.",
    args=READER_ARGS + (
        Arg("file_root", "str", None, "folder of the images (file_name in the JSON is relative to it)"),
        Arg("annotations_file", "str", "", "the COCO annotations JSON file"),
        Arg("ltrb", "bool", False, "boxes as [left, top, right, bottom] (else [x, y, width, height])"),
        Arg("ratio", "bool", False, "boxes and polygon vertices relative to the image size"),
        Arg("size_threshold", "float", 0.1, "objects whose box width or height is below this are left out"),
        Arg("skip_empty", "bool", False, "leave out images with no objects"),
        Arg("include_iscrowd", "bool", True, "keep annotations marked iscrowd=1"),
        Arg("avoid_class_remapping", "bool", False, "labels are the category ids (else 1..number of categories "
            "in the order of `categories`)"),
        Arg("polygon_masks", "bool", False, "output polygons and vertices"),
        Arg("masks", "bool", False, "deprecated polygon_masks: polygon ends count coordinates, not vertices"),
        Arg("pixelwise_masks", "bool", False, "output a pixel-wise mask of labels (H, W, 1)"),
        Arg("image_ids", "bool", False, "output each image's id", aliases=("save_img_ids",)),
        Arg("images", "strs", None, "the file names to read, in this order (default: all, by image id)"),
        Arg("allow_outside_root", "bool", False, "read file names leading outside file_root (an addition)"),
        Arg("preprocessed_annotations", "str", "", "a folder of annotations a save wrote (DALI's layout, "
            "either library's), read instead of `annotations_file`", aliases=("meta_files_path",)),
        Arg("save_preprocessed_annotations", "bool", False, "after parsing `annotations_file`, save the "
            "parsed annotations into `save_preprocessed_annotations_dir` (DALI's layout)",
            aliases=("dump_meta_files",)),
        Arg("save_preprocessed_annotations_dir", "str", "", "the folder the preprocessed annotations are "
            "saved into (made if missing; the layout's files there are replaced)",
            aliases=("dump_meta_files_path",)),
    ),
))
