"""Inputs each op is probed on, and the arguments it needs to run (all as expressions evaluated in
the child; `files` names small files the child writes first). Ops not listed try `FALLBACK`."""
from __future__ import annotations

# input name -> (sample expression, layout)
INPUTS: dict[str, tuple[str, str]] = {
    "img": ("(np.arange(240) % 251).astype(np.uint8).reshape(8, 10, 3)", "HWC"),
    "imgf": ("(np.arange(240, dtype=np.float32) / 240).reshape(8, 10, 3)", "HWC"),
    "seq": ("(np.arange(720) % 251).astype(np.uint8).reshape(3, 8, 10, 3)", "FHWC"),
    "sq": ("np.ones((1, 8, 3), np.uint8)", ""),
    "audio": ("np.sin(np.arange(400, dtype=np.float32) / 7)", ""),
    "spec": ("(np.arange(170, dtype=np.float32) % 13 + 1).reshape(17, 10)", ""),
    "bbox": ("np.array([[0.1, 0.1, 0.5, 0.5], [0.2, 0.3, 0.9, 0.8]], np.float32)", ""),
    "labels": ("np.array([1, 2], np.int32)", ""),
    "coords": ("np.array([[0.1, 0.2], [0.5, 0.7], [0.9, 0.3]], np.float32)", ""),
    "bayer": ("(np.arange(80) % 251).astype(np.uint8).reshape(8, 10)", "HW"),
    "mask": ("np.pad(np.ones((4, 4), np.int32), 2)", ""),
    "scal": ("np.array(0.5, np.float32)", ""),
    "n5": ("np.array(5, np.int32)", ""),
    "shape": ("np.array([8, 10, 3], np.int64)", ""),
    "filt": ("np.full((3, 3), 1 / 9, np.float32)", ""),
    "mtx": ("np.array([[1, 0, 1], [0, 1, 2]], np.float32)", ""),
    "mask_ids": ("np.array([0], np.int32)", ""),
    "polygons": ("np.array([[0, 0, 3]], np.int32)", ""),
    "vertices": ("np.array([[0.1, 0.1], [0.5, 0.1], [0.5, 0.5]], np.float32)", ""),
    "jpeg": ("np.fromfile('probe.jpg', np.uint8)", ""),
    "wav": ("np.fromfile('probe.wav', np.uint8)", ""),
    "npy": ("np.fromfile('probe.npy', np.uint8)", ""),
    "path": ("np.frombuffer(b'probe.npy', np.uint8)", ""),
}

# op -> (inputs, {argument: expression})
SETUPS: dict[str, tuple[list[str], dict[str, str]]] = {
    "audio_resample": (["audio"], {"scale": "0.5"}),
    "batch_permutation": ([], {}),
    "bb_flip": (["bbox"], {}),
    "bbox_paste": (["bbox"], {"ratio": "2.0"}),
    "bbox_rotate": (["bbox"], {"angle": "30.0", "input_shape": "[10, 8]"}),
    "box_encoder": (["bbox", "labels"], {"anchors": "[0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0]"}),
    "cast": (["img"], {"dtype": "types.FLOAT"}),
    "cast_like": (["img", "imgf"], {}),
    "cat": (["img", "img"], {}),
    "clahe": (["img"], {"clip_limit": "2.0", "tiles_x": "2", "tiles_y": "2"}),
    "color_space_conversion": (["img"], {"image_type": "types.RGB", "output_type": "types.BGR"}),
    "constant": ([], {"fdata": "[1.0, 2.0]", "shape": "[2]"}),
    "coord_flip": (["coords"], {}),
    "coord_transform": (["coords"], {}),
    "crop": (["img"], {"crop": "[4, 4]"}),
    "debayer": (["bayer"], {"blue_position": "[0, 0]"}),
    "decoders.audio": (["wav"], {}),
    "decoders.image": (["jpeg"], {}),
    "decoders.image_crop": (["jpeg"], {"crop": "[4, 4]"}),
    "decoders.image_random_crop": (["jpeg"], {}),
    "decoders.image_slice": (["jpeg"], {"rel_start": "[0.1, 0.1]", "rel_shape": "[0.5, 0.5]"}),
    "decoders.numpy": (["npy"], {}),
    "element_extract": (["seq"], {"element_map": "[0]"}),
    "erase": (["img"], {"anchor": "[1, 1]", "shape": "[2, 2]", "axis_names": "'HW'"}),
    "expand_dims": (["img"], {"axes": "[0]"}),
    "external_source": ([], {"source": "(lambda: [np.ones((2, 2), np.float32)] * 2)"}),
    "filter": (["img", "filt"], {}),
    "full": (["scal"], {"shape": "[2, 3]"}),
    "full_like": (["img", "scal"], {}),
    "gaussian_blur": (["img"], {"sigma": "1.0"}),
    "get_property": (["img"], {"key": "'layout'"}),
    "io.file.read": (["path"], {}),
    "mel_filter_bank": (["spec"], {}),
    "mfcc": (["spec"], {}),
    "multi_paste": (["img"], {"in_ids": "[0, 1]"}),
    "nonsilent_region": (["audio"], {}),
    "normalize": (["imgf"], {}),
    "one_hot": (["labels"], {"num_classes": "5"}),
    "ones": ([], {"shape": "[2]"}),
    "paste": (["img"], {"ratio": "2.0", "fill_value": "[0, 0, 0]"}),
    "peek_image_shape": (["jpeg"], {}),
    "per_frame": (["seq"], {}),
    "permute_batch": (["img"], {"indices": "[1, 0]"}),
    "power_spectrum": (["audio"], {}),
    "preemphasis_filter": (["audio"], {}),
    "random.beta": ([], {}), "random.choice": (["n5"], {}), "random.coin_flip": ([], {}),
    "random.normal": ([], {}), "random.uniform": ([], {}),
    "random_bbox_crop": (["bbox"], {}),
    "random_crop_generator": (["shape"], {}),
    "random_resized_crop": (["img"], {"size": "[4, 4]"}),
    "reductions.std_dev": (["imgf", "scal"], {}),
    "reductions.variance": (["imgf", "scal"], {}),
    "reshape": (["img"], {"shape": "[80, 3]"}),
    "resize": (["img"], {"size": "[4, 4]"}),
    "resize_crop_mirror": (["img"], {"resize_x": "6", "resize_y": "6", "crop": "[4, 4]"}),
    "roi_random_crop": (["img"], {"crop_shape": "[4, 4, 3]", "roi_start": "[1, 1, 0]", "roi_end": "[6, 6, 3]"}),
    "rotate": (["img"], {"angle": "30.0"}),
    "segmentation.random_mask_pixel": (["mask"], {}),
    "segmentation.random_object_bbox": (["mask"], {}),
    "segmentation.select_masks": (["mask_ids", "polygons", "vertices"], {}),
    "sequence_rearrange": (["seq"], {"new_order": "[2, 1, 0]"}),
    "slice": (["img"], {"rel_start": "[0.1, 0.1]", "rel_shape": "[0.5, 0.5]"}),
    "spectrogram": (["audio"], {}),
    "squeeze": (["sq"], {"axes": "[0]"}),
    "stack": (["img", "img"], {}),
    "tensor_resize": (["imgf"], {"sizes": "[4, 5, 3]"}),
    "to_decibels": (["spec"], {}),
    "transforms.combine": (["mtx", "mtx"], {}),
    "transforms.crop": ([], {}),
    "transforms.rotation": ([], {"angle": "30.0"}),
    "transforms.scale": ([], {"scale": "[2.0, 2.0]"}),
    "transforms.shear": ([], {"shear": "[0.1, 0.2]"}),
    "transforms.translation": ([], {"offset": "[1.0, 2.0]"}),
    "transpose": (["img"], {"perm": "[1, 0, 2]"}),
    "warp_affine": (["img"], {"matrix": "[1.0, 0.0, 0.5, 0.0, 1.0, 0.5]"}),
    "zeros": ([], {"shape": "[2]"}),
}

FALLBACK: list[tuple[list[str], dict[str, str]]] = [(["img"], {}), (["imgf"], {}), (["audio"], {}), ([], {})]

# needs files or streams the sweep does not make (video, readers): left out, counted
SKIP = ("readers.", "experimental.readers.", "experimental.inputs.", "decoders.video", "dump_image")


def candidates(op: str) -> list[tuple[list[str], dict[str, str]]]:
    return [SETUPS[op]] if op in SETUPS else FALLBACK


def write_files() -> None:
    """The encoded inputs (JPEG, WAV, .npy) in the current folder, written with NumPy alone."""
    import struct

    import numpy as np
    np.save("probe.npy", np.arange(6, dtype=np.float32).reshape(2, 3))
    pcm = (np.sin(np.arange(800) / 5) * 20000).astype("<i2").tobytes()
    hdr = b"RIFF" + struct.pack("<I", 36 + len(pcm)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 1, 16000,
                                                                               32000, 2, 16)
    with open("probe.wav", "wb") as f:
        f.write(hdr + b"data" + struct.pack("<I", len(pcm)) + pcm)
    with open("probe.jpg", "wb") as f:
        f.write(bytes.fromhex(_JPEG_HEX))


# a 16x16 RGB baseline JPEG (made once with Pillow; kept as hex so the children need no encoder)
_JPEG_HEX = (
    "ffd8ffe000104a46494600010100000100010000ffdb0043000302020302020303030304030304050805050404050a07"
    "0706080c0a0c0c0b0a0b0b0d0e12100d0e110e0b0b1016101113141515150c0f171816141812141514ffdb0043010304"
    "0405040509050509140d0b0d141414141414141414141414141414141414141414141414141414141414141414141414"
    "1414141414141414141414141414ffc00011080010001003012200021101031101ffc4001f0000010501010101010100"
    "000000000000000102030405060708090a0bffc400b5100002010303020403050504040000017d010203000411051221"
    "31410613516107227114328191a1082342b1c11552d1f02433627282090a161718191a25262728292a3435363738393a"
    "434445464748494a535455565758595a636465666768696a737475767778797a838485868788898a9293949596979899"
    "9aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4c5c6c7c8c9cad2d3d4d5d6d7d8d9dae1e2e3e4e5e6e7e8e9eaf1"
    "f2f3f4f5f6f7f8f9faffc4001f0100030101010101010101010000000000000102030405060708090a0bffc400b51100"
    "020102040403040705040400010277000102031104052131061241510761711322328108144291a1b1c109233352f015"
    "6272d10a162434e125f11718191a262728292a35363738393a434445464748494a535455565758595a63646566676869"
    "6a737475767778797a82838485868788898a92939495969798999aa2a3a4a5a6a7a8a9aab2b3b4b5b6b7b8b9bac2c3c4"
    "c5c6c7c8c9cad2d3d4d5d6d7d8d9dae2e3e4e5e6e7e8e9eaf2f3f4f5f6f7f8f9faffda000c03010002110311003f00f3"
    "6d77e1f7ecf9e136b11a5d87883c68270e646d0f4268c5b636e03fdacc19dd938d9bbee9ce38cebe89a77c12f97fe2dc"
    "78ff00ff0005363ffc975ee967a2fc71bcb19ede1f01781ac65963644bab7d22ecc9092301d43dd32961d46e56191c82"
    "38af3fd660f8adf0db55834cf177c6af0c785b529611731d9eb569a1d9ccf1166512049205254b230dd8c6548ec69a4d"
    "68c5656bdcffd9"
)
