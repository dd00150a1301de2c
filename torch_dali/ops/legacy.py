"""DALI's deprecated spellings of ops that still run in DALI 2.4 code: `fn.file_reader`,
`fn.image_decoder`, `fn.uniform`, `fn.experimental.decoders.image`, `ops.NormalDistribution`...
Each is the current op under its old name (and warns once that it is deprecated, as DALI does).
Top-level class names (`ops.FileReader`) are the schemas' `legacy_names`; this table holds the
functional names and the class names that live in a namespace. DALI's `hidden.*` names are its
internals, not API, and are left out."""
from __future__ import annotations

# old functional name -> current op
FN = {
    "file_reader": "readers.file", "mxnet_reader": "readers.mxnet", "caffe_reader": "readers.caffe",
    "caffe2_reader": "readers.caffe2", "coco_reader": "readers.coco", "numpy_reader": "readers.numpy",
    "tfrecord_reader": "readers.tfrecord", "sequence_reader": "readers.sequence",
    "image_decoder": "decoders.image", "image_decoder_crop": "decoders.image_crop",
    "image_decoder_random_crop": "decoders.image_random_crop", "image_decoder_slice": "decoders.image_slice",
    "experimental.decoders.image": "decoders.image", "experimental.decoders.image_crop": "decoders.image_crop",
    "experimental.decoders.image_random_crop": "decoders.image_random_crop",
    "experimental.decoders.image_slice": "decoders.image_slice",
    "experimental.peek_image_shape": "peek_image_shape",
    "coin_flip": "random.coin_flip", "normal_distribution": "random.normal", "uniform": "random.uniform",
    "transform_translation": "transforms.translation",
    "audio_decoder": "decoders.audio", "nemo_asr_reader": "readers.nemo_asr",
    "experimental.audio_resample": "audio_resample",
}
# old class name in a namespace (or without a schema entry) -> current op
CLASSES = {
    "experimental.decoders.Image": "decoders.image", "experimental.decoders.ImageCrop": "decoders.image_crop",
    "experimental.decoders.ImageRandomCrop": "decoders.image_random_crop",
    "experimental.decoders.ImageSlice": "decoders.image_slice",
    "experimental.PeekImageShape": "peek_image_shape", "NormalDistribution": "random.normal",
    "experimental.AudioResample": "audio_resample",
}
