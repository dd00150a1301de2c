"""torch_dali.experimental.torchvision (DALI's `nvidia.dali.experimental.torchvision`) against DALI 2.4.

EXPECTED holds DALI 2.4's outputs (shape, dtype or PIL mode, the first 16 hex digits of the
sha256 of the bytes; the sum for floats) for the same calls, computed once on the CPU with DALI's
venv (its Compose there needs one stand-in: DALI asks torch for the current CUDA stream when a
torch tensor is fed, which fails without a driver; the stand-in answers "no stream").
SAME_AS_TORCHVISION lists the cases whose bytes torchvision 0.29.1 also gives; the others differ
from torchvision in DALI too (nearest resampling, antialiasing, an odd amount of center-crop
padding, float rounding of blur / normalize), and torch_dali follows DALI.
"""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from PIL import Image

import torch_dali.experimental.torchvision as tv
import torch_dali.experimental.torchvision.v2.functional as F

REPO = Path(__file__).resolve().parents[1]


def digest(x):
    if isinstance(x, list):  # several PIL images: their bytes in order
        arrs = [np.asarray(i) for i in x]
        return ((len(x), *arrs[0].shape), "list:" + x[0].mode, _sha(b"".join(a.tobytes() for a in arrs)))
    if isinstance(x, Image.Image):
        a = np.asarray(x)
        return (a.shape, x.mode, _sha(a.tobytes()))
    a = np.ascontiguousarray(x.cpu().numpy())
    if a.dtype.kind == "f":
        return (a.shape, str(a.dtype), _sha(a.tobytes()), round(float(a.astype(np.float64).sum()), 3))
    return (a.shape, str(a.dtype), _sha(a.tobytes()))


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()[:16]


def pil(mode, h, w, seed=0):
    rng = np.random.default_rng(seed)
    shape = (h, w) if mode == "L" else (h, w, {"RGB": 3, "RGBA": 4}[mode])
    return Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8), mode=mode)


def ten(shape, dtype=torch.uint8):
    return (torch.arange(int(np.prod(shape))) % 251).to(dtype).reshape(shape)


def make_cases(tv, F):
    """name -> call; `tv` / `F` are the transforms and functional modules (DALI's or ours)."""
    def C(ops, x, **kw):
        return tv.Compose(ops, **kw)(x)

    I = tv.InterpolationMode
    cases = {
        "fn_crop_pad": lambda: F.crop(ten((3, 8, 10)), -1, -2, 6, 8),
        "fn_crop_pil": lambda: F.crop(pil("RGB", 8, 10), 1.5, 2.5, 4.0, 5.0),
        "fn_pad_pil_fill": lambda: F.pad(pil("RGB", 4, 5), [2, 1], fill=7),
        "fn_center_crop_pil": lambda: F.center_crop(pil("RGB", 7, 9), [4, 5]),
        "fn_center_crop_pad": lambda: F.center_crop(ten((3, 5, 6)), [8, 9]),
        "fn_resize_tensor": lambda: F.resize(ten((3, 16, 20)), 8),
        "fn_resize_pil_max": lambda: F.resize(pil("RGB", 30, 50), 12, max_size=16),
        "fn_resize_nearest": lambda: F.resize(ten((3, 9, 13)), [5, 7], interpolation=I.NEAREST, antialias=False),
        "fn_resized_crop": lambda: F.resized_crop(ten((2, 3, 16, 20)), 2, 3, 10, 12, [5, 6], antialias=False),
        "fn_blur": lambda: F.gaussian_blur(ten((1, 9, 9), torch.float32) / 251.0, 3, 1.0),
        "fn_normalize": lambda: F.normalize(ten((3, 4, 4), torch.float32), [1.0, 2.0, 3.0], [0.5, 2.0, 4.0]),
        "fn_gray1": lambda: F.to_grayscale(pil("RGB", 6, 7)),
        "fn_gray3": lambda: F.rgb_to_grayscale(pil("RGB", 6, 7), 3),
        "fn_hflip": lambda: F.horizontal_flip(pil("RGBA", 3, 4)),
        "fn_vflip": lambda: F.vertical_flip(ten((2, 1, 3, 4))),
        "fn_to_tensor": lambda: F.to_tensor(pil("L", 4, 5)),
        "fn_to_pil_float": lambda: F.to_pil_image(ten((3, 4, 4), torch.float32) / 300.0),
        "c_resize_pil": lambda: C([tv.Resize(10)], pil("RGB", 23, 31)),
        "c_resize_pil_max": lambda: C([tv.Resize(10, max_size=12)], pil("RGB", 23, 31)),
        "c_resize_tensor_tall": lambda: C([tv.Resize(7, antialias=False)], ten((3, 29, 13))),
        "c_resize_none_max": lambda: C([tv.Resize(None, max_size=9)], ten((3, 29, 13))),
        "c_resize_lanczos": lambda: C([tv.Resize([6, 8], interpolation=1)], pil("RGB", 12, 17)),
        "c_resize_cubic_up": lambda: C([tv.Resize(20, interpolation=I.BICUBIC)], ten((3, 9, 13), torch.float32)),
        "c_pad_reflect": lambda: C([tv.Pad([1, 2, 3, 1], padding_mode="reflect")], pil("L", 5, 6)),
        "c_pad_fill": lambda: C([tv.Pad(2, fill=9)], ten((3, 4, 5))),
        "c_randomcrop_pad": lambda: C([tv.RandomCrop((6, 7), padding=1, fill=(1, 2, 3))], pil("RGB", 4, 5)),
        "c_randomcrop_symmetric": lambda: C([tv.RandomCrop((6, 7), padding=1, padding_mode="symmetric")],
                                            ten((3, 4, 5))),
        "c_randomcrop_ifneeded": lambda: C([tv.RandomCrop((6, 7), pad_if_needed=True, padding_mode="edge")],
                                           ten((3, 6, 7))),
        "c_gray1": lambda: C([tv.Grayscale()], pil("RGB", 9, 11)),
        "c_gray3": lambda: C([tv.Grayscale(3)], pil("RGB", 9, 11)),
        "c_gray_l3": lambda: C([tv.Grayscale(3)], pil("L", 9, 11)),
        "c_rgray": lambda: C([tv.RandomGrayscale(p=1.0)], pil("RGB", 9, 11)),
        "c_rgray0": lambda: C([tv.RandomGrayscale(p=0.0)], pil("RGB", 9, 11)),
        "c_norm": lambda: C([tv.Normalize([0.5, 1.0, 2.0], [2.0, 3.0, 4.0])], ten((2, 3, 4, 5), torch.float32)),
        "c_norm_pil": lambda: C([tv.Normalize([10.0, 20.0, 30.0], [200.0, 300.0, 400.0]), tv.ToPureTensor()],
                                pil("RGB", 4, 5)),
        "c_blur": lambda: C([tv.GaussianBlur(5, 1.5)], ten((1, 3, 9, 9), torch.float32) / 251.0),
        "c_blur_pil": lambda: C([tv.GaussianBlur(3, 0.8)], pil("RGB", 8, 9)),
        "c_apply": lambda: C([tv.RandomApply([tv.Pad(1), tv.RandomVerticalFlip(1.0)], p=1.0)], pil("RGB", 4, 5)),
        "c_apply0": lambda: C([tv.RandomApply([tv.Pad(1)], p=0.0)], pil("RGB", 4, 5)),
        "c_topil": lambda: C([tv.RandomHorizontalFlip(1.0), tv.ToPILImage()], ten((2, 3, 4, 5)), batch_size=2),
        "c_pil_to_tensor": lambda: C([tv.RandomVerticalFlip(1.0), tv.PILToTensor()], pil("RGBA", 4, 5)),
        "c_cj_fixed": lambda: C([tv.ColorJitter(brightness=(1.3, 1.3), contrast=(0.7, 0.7), saturation=(1.2, 1.2))],
                                pil("RGB", 6, 7)),
        "c_rrc_identity": lambda: C([tv.RandomResizedCrop((8, 10), scale=(1.0, 1.0), ratio=(1.25, 1.25),
                                                          interpolation=I.NEAREST, antialias=False)],
                                    pil("RGB", 8, 10)),
    }
    for m in ("constant", "edge", "reflect", "symmetric"):
        cases[f"fn_pad_{m}"] = lambda m=m: F.pad(ten((1, 1, 5, 5)), [1, 2, 3, 1], padding_mode=m)
    for s in range(-5, 6):  # image minus window: negative pads, odd amounts round as DALI does
        cases[f"cc_slack{s}"] = lambda s=s: C([tv.CenterCrop([7, 6])], ten((2, 3, 7 + s, 6 + s)), batch_size=2)
    return cases


CASES = make_cases(tv, F)

EXPECTED = {
    "c_apply": ((6, 7, 3), 'RGB', '6d4075bf4c3a2074'),
    "c_apply0": ((4, 5, 3), 'RGB', '764810c211a63dbe'),
    "c_blur": ((1, 3, 9, 9), 'float32', '7dd1ebd0f63bf24c', 117.143),
    "c_blur_pil": ((8, 9, 3), 'RGB', '4805337ffc4dac4d'),
    "c_cj_fixed": ((6, 7, 3), 'RGB', 'facb12f49b1992fd'),
    "c_gray1": ((9, 11), 'L', '30995c86a668756f'),
    "c_gray3": ((9, 11, 3), 'RGB', 'a05afb00d5863f9b'),
    "c_gray_l3": ((9, 11, 3), 'RGB', '7f39d6a7fb03f9e3'),
    "c_norm": ((2, 3, 4, 5), 'float32', '601ce9153b8cfc4f', 2335.0),
    "c_norm_pil": ((3, 4, 5), 'float32', '8c7b35587117ae41', 23.578),
    "c_pad_fill": ((3, 8, 9), 'uint8', '9bd5e7949ea35ec9'),
    "c_pad_reflect": ((8, 10), 'L', 'ab27c2361fb899ce'),
    "c_pil_to_tensor": ((4, 4, 5), 'uint8', 'e206c5f30f8a9972'),
    "c_randomcrop_ifneeded": ((3, 6, 7), 'uint8', '5dda7cb7c2282a55'),
    "c_randomcrop_pad": ((6, 7, 3), 'RGB', '41ce2831bdaf2fb7'),
    "c_randomcrop_symmetric": ((3, 6, 7), 'uint8', '7a28e81c031c957f'),
    "c_resize_cubic_up": ((3, 20, 28), 'float32', '6331932eda6978df', 173747.079),
    "c_resize_lanczos": ((6, 8, 3), 'RGB', '5578398bcc906715'),
    "c_resize_none_max": ((3, 9, 4), 'uint8', '730872894b499e9d'),
    "c_resize_pil": ((10, 13, 3), 'RGB', '4b7f6c4a34bd7129'),
    "c_resize_pil_max": ((9, 12, 3), 'RGB', '543085403ceffbd4'),
    "c_resize_tensor_tall": ((3, 15, 7), 'uint8', '0cef45fb054e9fa7'),
    "c_rgray": ((9, 11, 3), 'RGB', 'a05afb00d5863f9b'),
    "c_rgray0": ((9, 11, 3), 'RGB', 'b78d64d458810500'),
    "c_rrc_identity": ((8, 10, 3), 'RGB', 'a0ed34978f3da95e'),
    "c_topil": ((2, 4, 5, 3), 'list:RGB', '696441258f25eb20'),
    "cc_slack-1": ((2, 3, 7, 6), 'uint8', 'd28ab69d57dfd414'),
    "cc_slack-2": ((2, 3, 7, 6), 'uint8', '89d98b06d4640de0'),
    "cc_slack-3": ((2, 3, 7, 6), 'uint8', 'c7f9f356074165cf'),
    "cc_slack-4": ((2, 3, 7, 6), 'uint8', 'ff25c284a56b8f8f'),
    "cc_slack-5": ((2, 3, 7, 6), 'uint8', 'd15cfded4c4ba339'),
    "cc_slack0": ((2, 3, 7, 6), 'uint8', '2532a2bf0a389dda'),
    "cc_slack1": ((2, 3, 7, 6), 'uint8', '010436bf85194f37'),
    "cc_slack2": ((2, 3, 7, 6), 'uint8', '04bdf1c2763c8e3d'),
    "cc_slack3": ((2, 3, 7, 6), 'uint8', '3751697d28bb512d'),
    "cc_slack4": ((2, 3, 7, 6), 'uint8', '6a5b8a66503e4d2f'),
    "cc_slack5": ((2, 3, 7, 6), 'uint8', 'b2876681a3efa1f7'),
    "fn_blur": ((1, 9, 9), 'float32', 'e1e8573ee6c97a71', 12.908),
    "fn_center_crop_pad": ((3, 8, 9), 'uint8', '731662d2f43c72dc'),
    "fn_center_crop_pil": ((4, 5, 3), 'RGB', '18bebec824fc6bb0'),
    "fn_crop_pad": ((3, 6, 8), 'uint8', 'c206e834a8a58214'),
    "fn_crop_pil": ((4, 6, 3), 'RGB', 'b92b5b19f6eb21e7'),
    "fn_gray1": ((6, 7), 'L', 'dccd9f81818ec312'),
    "fn_gray3": ((6, 7, 3), 'RGB', 'cf5891283e88703a'),
    "fn_hflip": ((3, 4, 4), 'RGBA', '9ba7e4fac17105d6'),
    "fn_normalize": ((3, 4, 4), 'float32', '085bf77f1558245a', 526.0),
    "fn_pad_constant": ((1, 1, 8, 9), 'uint8', '59766e41fb5b1ee8'),
    "fn_pad_edge": ((1, 1, 8, 9), 'uint8', 'aeb1a03b1ee7e44e'),
    "fn_pad_pil_fill": ((6, 9, 3), 'RGB', '49d45718ebb21a15'),
    "fn_pad_reflect": ((1, 1, 8, 9), 'uint8', '025b89cfeb50bf9b'),
    "fn_pad_symmetric": ((1, 1, 8, 9), 'uint8', '20026394438c63fa'),
    "fn_resize_nearest": ((3, 5, 7), 'uint8', 'd92fd221fe222461'),
    "fn_resize_pil_max": ((9, 16, 3), 'RGB', '03b921e5ac0e0f9f'),
    "fn_resize_tensor": ((3, 8, 10), 'uint8', '23af64a06abe868b'),
    "fn_resized_crop": ((2, 3, 5, 6), 'uint8', '657531e6d6669f86'),
    "fn_to_pil_float": ((4, 4, 3), 'RGB', '898be4a917324f6f'),
    "fn_to_tensor": ((1, 4, 5), 'float32', '545cae670ee34683', 12.047),
    "fn_vflip": ((2, 1, 3, 4), 'uint8', '3a1893433dcc68dd'),
}

SAME_AS_TORCHVISION = {
    "c_apply", "c_apply0", "c_blur_pil", "c_gray1", "c_gray_l3", "c_pad_fill", "c_pad_reflect",
    "c_pil_to_tensor", "c_randomcrop_ifneeded", "c_randomcrop_pad", "c_randomcrop_symmetric",
    "c_rgray0", "c_rrc_identity", "c_topil", "cc_slack-2", "cc_slack-4", "cc_slack0", "cc_slack1",
    "cc_slack2", "cc_slack3", "cc_slack4", "cc_slack5", "fn_center_crop_pil", "fn_crop_pad",
    "fn_crop_pil", "fn_gray1", "fn_hflip", "fn_normalize", "fn_pad_constant", "fn_pad_edge",
    "fn_pad_pil_fill", "fn_pad_reflect", "fn_pad_symmetric", "fn_to_pil_float", "fn_to_tensor",
    "fn_vflip",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_dali_2_4(name):
    assert digest(CASES[name]()) == EXPECTED[name]


@pytest.mark.parametrize("make, error, words", [
    (lambda: tv.CenterCrop([0, 5]), ValueError, "positive"),
    (lambda: tv.CenterCrop({"bad": 1}), TypeError, "size"),
    (lambda: tv.Resize(480, max_size=100), ValueError, "max_size"),
    (lambda: tv.Resize([256, 256], max_size=512), ValueError, "max_size"),
    (lambda: tv.Resize(10, interpolation=tv.InterpolationMode.NEAREST_EXACT), NotImplementedError,
     "interpolation mode"),
    (lambda: tv.Resize(10, interpolation=99), ValueError, "pil code"),
    (lambda: tv.RandomResizedCrop(3, scale=[1, 0.5]), ValueError, "scale"),
    (lambda: tv.RandomResizedCrop(3, ratio="bad"), TypeError, "ratio"),
    (lambda: tv.RandomCrop(3, pad_if_needed="yes"), TypeError, "pad_if_needed"),
    (lambda: tv.RandomCrop(3, padding=[1.0]), ValueError, "padding"),
    (lambda: tv.RandomCrop(3, padding=1, fill={1: 2}), TypeError, "fill"),
    (lambda: tv.RandomCrop(3, pad_if_needed=True, padding_mode="bad"), ValueError, "padding_mode"),
    (lambda: tv.Pad(1, padding_mode="wrap"), ValueError, "padding_mode"),
    (lambda: tv.ColorJitter(hue=0.6), ValueError, "hue"),
    (lambda: tv.ColorJitter(brightness=(1.5, 0.5)), ValueError, "brightness"),
    (lambda: tv.Grayscale(2), ValueError, "num_output_channels"),
    (lambda: tv.GaussianBlur(4), ValueError, "odd"),
    (lambda: tv.GaussianBlur(3, (2.0, 0.1)), ValueError, "sigma"),
    (lambda: tv.Normalize([0.0], [0.0]), ValueError, "std"),
    (lambda: tv.Normalize([0.0], [1.0], inplace=True), NotImplementedError, "inplace"),
    (lambda: tv.RandomApply([], p=1.5), ValueError, "probability"),
    (lambda: F.crop(ten((3, 8, 10)), 0.5, 0, 1, 1), TypeError, "must be an integer"),
    (lambda: F.crop(pil("RGB", 8, 10), "0", 0, 1, 1), TypeError, "real numbers"),
    (lambda: F.crop([1, 2], 0, 0, 1, 1), TypeError, "support"),
    (lambda: F.crop(ten((3, 8, 10)), 0, 0, 0, 1), ValueError, "must be"),
    (lambda: F.normalize(pil("RGB", 4, 4), [0.5], [0.5]), TypeError, "tensor"),
    (lambda: F.to_pil_image(ten((2, 8, 8))), ValueError, "channels"),
    (lambda: F.get_size(torch.zeros(10)), TypeError, "2 dimensions"),
    # inputs DALI 2.4 takes neither: more than [N, C, H, W]; PIL modes without an HWC array
    (lambda: F.resize(ten((2, 2, 3, 8, 10)), 4), ValueError, r"\[N, C, H, W\]"),
    (lambda: F.crop(ten((2, 2, 3, 8, 10)), 1, 1, 3, 4), ValueError, r"\[N, C, H, W\]"),
    (lambda: tv.Compose([tv.Pad(1)])(ten((2, 1, 3, 4, 5))), RuntimeError, "shape"),
    (lambda: tv.Compose([tv.Pad(1)])(ten((4, 5))), RuntimeError, "shape"),
    (lambda: tv.Compose([tv.Pad(1)])(pil("RGB", 4, 5).convert("P")), RuntimeError, "mode 'P'"),
    (lambda: tv.Compose([tv.Pad(1)])(pil("RGB", 4, 5).convert("LA")), ValueError, "2 channels"),
])
def test_refusals_as_dali(make, error, words):
    # the same exception types as DALI 2.4 (its test files' expectations); the messages are ours
    with pytest.raises(error, match=f"(?i){words}"):
        make()


def test_compose_checks_its_input():
    flip = tv.Compose([tv.RandomHorizontalFlip(1.0)], batch_size=1)
    with pytest.raises(TypeError):
        flip([pil("RGB", 2, 2)])
    with pytest.raises(RuntimeError, match="batch_size"):  # DALI: more samples than the batch size
        flip(ten((5, 5, 5, 3)))
    with pytest.raises(TypeError):  # first called on a tensor: tensors only
        flip(pil("RGB", 2, 2))
    with pytest.raises(RuntimeError, match="Compose"):  # transforms run inside a Compose only
        tv.Resize(3)(ten((3, 4, 4)))


def test_output_markers_and_mismatched_normalize():
    img = pil("RGBA", 5, 6)
    as_tensor = tv.Compose([tv.PILToTensor()])(img)
    assert torch.equal(as_tensor, F.pil_to_tensor(img)) and as_tensor.shape == (4, 5, 6)
    assert isinstance(tv.Compose([tv.ToPureTensor(), tv.ToPILImage()])(img), Image.Image)  # the last decides
    out = tv.Compose([tv.ToPILImage()])(ten((2, 3, 4, 4)))
    assert isinstance(out, list) and len(out) == 2 and out[0].mode == "RGB"
    with pytest.raises(RuntimeError):  # two means for three channels: the pipeline refuses (as DALI's)
        tv.Compose([tv.Normalize([1.0, 2.0], [1.0, 1.0])])(ten((3, 2, 2), torch.float32))


def test_nvidia_dali_name_resolves_under_the_shim():
    code = ("from conformance import shim; shim.install()\n"
            "import nvidia.dali.experimental.torchvision as tv, torch_dali\n"
            "import nvidia.dali.experimental.torchvision.v2.randomcrop as rc\n"
            "from nvidia.dali.experimental.torchvision.v2.functional.crop import resized_crop\n"
            "from nvidia.dali.experimental.torchvision.v2.operator import Operator, adjust_input\n"
            "assert tv.Compose is torch_dali.experimental.torchvision.Compose and rc.fn is torch_dali.fn\n"
            "assert not hasattr(tv, 'ToTensor') and shim.real_dali_leaks() == []\n")
    res = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]


def test_compose_module_helpers_as_dali():
    from torch_dali import TensorListCPU
    from torch_dali.experimental.torchvision.v2 import compose
    batch = TensorListCPU([np.ones((2, 3), np.uint8)] * 2)
    assert compose.to_torch_tensor((batch,)).shape == (2, 2, 3)  # a 1-tuple of outputs: its batch, stacked
    assert [t.shape for t in compose.to_torch_tensor((batch, batch))] == [(2, 2, 3)] * 2
    assert compose.DEFAULT_BATCH_SIZE == 16


def test_random_choices_are_per_sample():
    # RandomApply / RandomGrayscale decide per sample (pipeline conditionals), as DALI's coin flips do
    x = ten((16, 3, 4, 5))
    flipped = F.horizontal_flip(x)
    out = tv.Compose([tv.RandomApply([tv.RandomHorizontalFlip(1.0)], p=0.5)], seed=3)(x)
    took = [torch.equal(o, f) for o, f in zip(out, flipped)]
    assert all(t or torch.equal(o, s) for t, o, s in zip(took, out, x)) and 0 < sum(took) < 16
    gray = tv.Compose([tv.RandomGrayscale(p=0.5)], batch_size=1, seed=3)
    # gray through hsv(saturation=0): channels within 1 of each other (DALI's YIQ round trip rounds so too)
    spreads = {int(np.ptp(np.asarray(gray(pil("RGB", 4, 5, seed=1))).astype(int), axis=-1).max()) <= 1
               for _ in range(12)}
    assert spreads == {True, False}
