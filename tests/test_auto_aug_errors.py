"""What torch_dali.auto_aug refuses, and the message: the same conditions DALI 2.4 refuses (its
plain `Exception`s are ArgumentError / ArgumentTypeError here, subclasses of ValueError /
TypeError), each message naming the argument and what it takes."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.auto_aug import augmentations as a
from torch_dali.auto_aug import auto_augment as aa
from torch_dali.auto_aug import rand_augment as ra
from torch_dali.auto_aug import trivial_augment as ta
from torch_dali.auto_aug.core import Policy, augmentation, signed_bin
from torch_dali.auto_aug.core._args import MissingArgException, UnusedArgException
from torch_dali.errors import ArgumentError, ArgumentTypeError


def trace(body: Callable[[Any], Any]) -> None:
    """Traces a pipeline whose data is a batch of HWC uint8 images; the errors come at definition."""
    @pipeline_def(batch_size=2, num_threads=1, device_id=None, enable_conditionals=True)
    def pipe():
        return body(fn.external_source(source=lambda: [np.zeros((4, 4, 3), np.uint8)] * 2, batch=True,
                                       layout="HWC"))

    pipe()


@pytest.mark.parametrize("body, error, message", [
    (lambda x: aa.auto_augment(x, "imagenet"), ArgumentError, "`policy_name` must be one of"),
    (lambda x: aa.auto_augment(x, "reduced_image_net", shape=(4, 4)), ArgumentError, "do not give `shape`"),
    (lambda x: aa.auto_augment(x, max_translate_rel=0.5), ArgumentError, "`max_translate_rel` needs the image"),
    (lambda x: aa.auto_augment(x, shape=x.shape(), max_translate_abs=5), ArgumentError,
     "`max_translate_abs` cannot be used with image shapes"),
    (lambda x: aa.apply_auto_augment(aa.get_image_net_policy(use_shape=True), x), ArgumentError,
     "needs the image shape .* as `shape=`"),
    (lambda x: aa.apply_auto_augment(aa.get_image_net_policy(), x, foo=1), UnusedArgException, "`foo` is not taken"),
    (lambda x: ra.rand_augment(x, n=2, m=31), ArgumentError, "the magnitude bin `m` must be an integer in \\[0, 30\\]"),
    (lambda x: ra.rand_augment(x, n=-1, m=3), ArgumentError, "`n` .* must be a non-negative integer"),
    (lambda x: ra.rand_augment(x, n=1, m=3, num_magnitude_bins=0), ArgumentError, "`num_magnitude_bins` must be"),
    (lambda x: ra.rand_augment(x, n=1, m=3, excluded=["blur"]), ArgumentError, "`blur` is in `excluded`"),
    (lambda x: ra.apply_rand_augment([], x, n=1, m=3), ArgumentError, "list of augmentations is empty"),
    (lambda x: ta.trivial_augment_wide(x, excluded=["shear"]), ArgumentError, "`shear` is in `excluded`"),
    (lambda x: ta.apply_trivial_augment([], x), ArgumentError, "list of augmentations is empty"),
    (lambda x: ta.apply_trivial_augment([a.rotate], x, num_magnitude_bins=2.5), ArgumentError,
     "`num_magnitude_bins` must be a positive integer"),
    (lambda x: ta.trivial_augment_wide(x, seed="7"), ArgumentTypeError, "`seed` must be an integer"),
    (lambda x: a.rotate(x, magnitude_bin=3), ArgumentError, "`num_magnitude_bins` is required"),
    (lambda x: a.posterize(x, num_magnitude_bins=5), ArgumentError, "needs `magnitude_bin`"),
    (lambda x: a.posterize(x, magnitude_bin=7, num_magnitude_bins=5), ArgumentError, "out of range \\[0, 4\\]"),
    (lambda x: a.translate_x(x, magnitude_bin=signed_bin(1), num_magnitude_bins=5), MissingArgException,
     "needs the argument\\(s\\) shape"),
    (lambda x: a.solarize_add.augmentation(mag_range=(0, 200))(x, magnitude_bin=4, num_magnitude_bins=5),
     ArgumentError, "the shift must be in \\[0, 128\\)"),
    (lambda x: a.posterize.augmentation(mag_range=np.arange(4))(x, magnitude_bin=1, num_magnitude_bins=5),
     ArgumentError, "lists 4 magnitudes, but the call has num_magnitude_bins=5"),
    (lambda x: a.posterize.augmentation(mag_range=(1, 2, 3))(x, magnitude_bin=1, num_magnitude_bins=5),
     ArgumentError, "must be \\(low, high\\)"),
    (lambda x: a.rotate.augmentation(mag_to_param=lambda m: x)(x, magnitude_bin=signed_bin(1),
                                                                num_magnitude_bins=3),
     ArgumentTypeError, "returned a DataNode"),
    (lambda x: a.rotate.augmentation(mag_to_param=lambda m: [m] * (1 + int(m > 10)))(
        x, magnitude_bin=signed_bin(1), num_magnitude_bins=3), ArgumentError, "the same shape and type"),
    (lambda x: signed_bin(1.5), ArgumentTypeError, "`magnitude_bin` must be an int or a DataNode"),
    (lambda x: signed_bin(1, random_sign=fn.random.coin_flip(dtype=types.INT32), seed=3), ArgumentError,
     "`random_sign` cannot be given together with `seed`"),
])
def test_refused(body: Callable[[Any], Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        trace(body)


def test_unsigned_bin_to_a_negated_augmentation_warns() -> None:
    with pytest.warns(Warning, match="without a sign"):
        trace(lambda x: a.rotate(x, magnitude_bin=2, num_magnitude_bins=5))


def test_rand_augment_with_n_zero_warns_and_returns_the_data() -> None:
    with pytest.warns(Warning, match="n=0"):
        trace(lambda x: ra.rand_augment(x, n=0, m=3))


@pytest.mark.parametrize("make, error, message", [
    (lambda: Policy("p", 0, []), ArgumentError, "`num_magnitude_bins` must be a positive integer"),
    (lambda: Policy("p", 3, "abc"), ArgumentTypeError, "`sub_policies` must be a list or tuple"),
    (lambda: Policy("p", 3, [a.invert]), ArgumentTypeError, "each sub-policy must be a list"),
    (lambda: Policy("p", 3, [[(a.invert, 0.5)]]), ArgumentTypeError, "must be a triple"),
    (lambda: Policy("p", 3, [[(lambda x, p: x, 0.5, None)]]), ArgumentTypeError, "is not an Augmentation"),
    (lambda: Policy("p", 3, [[(a.invert, 1.5, None)]]), ArgumentError, "must be a number in \\[0, 1\\]"),
    (lambda: Policy("p", 3, [[(a.rotate, 0.5, None)]]), ArgumentError, "needs a magnitude bin, got None"),
    (lambda: Policy("p", 3, [[(a.rotate, 0.5, 3)]]), ArgumentError, "must be an integer in \\[0, 2\\]"),
    (lambda: aa.apply_auto_augment(Policy("p", 3, []), None), ArgumentError, "has no sub-policies"),
    (lambda: augmentation(a.rotate), ArgumentTypeError, "already is an augmentation"),
    (lambda: augmentation(5), ArgumentTypeError, "can only decorate a function"),
    (lambda: augmentation(lambda x: x), ArgumentTypeError, "at least two positional arguments"),
    (lambda: augmentation(param_device="tpu")(lambda x, p: x), ArgumentError, "`param_device` must be"),
])
def test_policy_and_decorator_refuse(make: Callable[[], Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        make()


def test_policy_warns_about_an_ignored_magnitude_and_renames_clashing_names() -> None:
    with pytest.warns(UserWarning, match="magnitude bin 2 of `invert` is ignored"):
        Policy("p", 3, [[(a.invert, 0.5, 2)]])
    other = a.rotate.augmentation(mag_range=(0, 5))
    p = Policy("p", 3, [[(a.rotate, 0.5, 1), (other, 0.5, 2)], [(a.invert, 1.0, None)]])
    assert [[aug.name for aug, _, _ in sub] for sub in p.sub_policies] == [["0__rotate", "1__rotate"], ["2__invert"]]
    assert list(p.augmentations) == ["0__rotate", "1__rotate", "2__invert"]
    assert "Policy(name='p', num_magnitude_bins=3" in repr(p) and "1__rotate" in repr(p)
