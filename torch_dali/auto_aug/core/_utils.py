"""What AutoAugment, RandAugment and TrivialAugment share: the translation augmentations for a
shape-relative or absolute offset range, and `select` with a helpful error for a missing `shape`."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ...errors import ArgumentError, ArgumentTypeError
from ._args import MissingArgException
from ._augmentation import Augmentation
from ._select import select


def max_translate_hw(max_translate: Any) -> tuple[Any, Any]:
    """(height, width) limits from one number or a pair."""
    if isinstance(max_translate, (tuple, list)):
        if len(max_translate) != 2:
            raise ArgumentError(f"the translation limit must be a number or (height, width), got {max_translate!r}")
        return max_translate[0], max_translate[1]
    return max_translate, max_translate


def parse_validate_offset(use_shape: Any, max_translate_abs: Any = None, max_translate_rel: Any = None,
                          default_translate_abs: Any = 250, default_translate_rel: Any = 1.0) -> tuple[Any, Any]:
    """The (height, width) translation limits: relative ones with `use_shape`, absolute otherwise."""
    if not isinstance(use_shape, bool):
        raise ArgumentTypeError(f"`use_shape` must be True or False, got {use_shape!r}")
    if use_shape:
        if max_translate_abs is not None:
            raise ArgumentError("`max_translate_abs` cannot be used with image shapes; use `max_translate_rel`")
        return max_translate_hw(default_translate_rel if max_translate_rel is None else max_translate_rel)
    if max_translate_rel is not None:
        raise ArgumentError("`max_translate_rel` needs the image shapes (`shape`); without them use "
                            "`max_translate_abs`")
    return max_translate_hw(default_translate_abs if max_translate_abs is None else max_translate_abs)


def get_translations(use_shape: bool, default_translate_abs: Any, default_translate_rel: Any,
                     max_translate_abs: Any = None, max_translate_rel: Any = None) -> list[Augmentation]:
    """[translate_x, translate_y] with their magnitude ranges set to the limits."""
    from .. import augmentations as a
    height, width = parse_validate_offset(use_shape, max_translate_abs, max_translate_rel,
                                          default_translate_abs, default_translate_rel)
    tx, ty = (a.translate_x, a.translate_y) if use_shape else (a.translate_x_no_shape, a.translate_y_no_shape)
    return [tx.augmentation((0, width), True), ty.augmentation((0, height), True)]


def pretty_select(augmentations: Sequence[Augmentation], aug_ids: Any, op_kwargs: dict[str, Any],
                  auto_aug_name: str, ref_suite_name: str) -> Any:
    """`select(augmentations, aug_ids, **op_kwargs)`, explaining a missing `shape`."""
    from .. import augmentations as a
    try:
        return select(augmentations, aug_ids, **op_kwargs)
    except MissingArgException as e:
        if e.missing_args != ["shape"] or e.augmentation.op not in (a.translate_x.op, a.translate_y.op):
            raise
        raise ArgumentError(
            f"{auto_aug_name}: the augmentation `{e.augmentation.name}` needs the image shape (height, width, ...: "
            f"HWC) as `shape=`; `fn.peek_image_shape` gives it for encoded images. Or use the translations that "
            f"do not need it (`translate_x_no_shape` / `translate_y_no_shape`), as `{ref_suite_name}` does "
            "without `use_shape`.") from None


def checked_names(suite: Sequence[Augmentation], excluded: Optional[Sequence[str]], what: str) -> list[Augmentation]:
    """`suite` without the augmentations named in `excluded` (every name must be in the suite)."""
    names = [aug.name for aug in suite]
    for name in excluded or ():
        if name not in names:
            raise ArgumentError(f"`{name}` is in `excluded`, but the {what} suite has no augmentation of that "
                                f"name; it has: {', '.join(names)}")
    return [aug for aug in suite if aug.name not in (excluded or ())]
