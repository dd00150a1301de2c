"""The functional API of `torchvision.transforms.v2.functional`'s kind: each call transforms one
PIL image or tensor ([C, H, W], or [..., C, H, W] for several) at once, through the dynamic mode."""
from .color import rgb_to_grayscale, to_grayscale
from .centercrop import center_crop
from .crop import crop, resized_crop
from .flips import horizontal_flip, vertical_flip
from .gaussian_blur import gaussian_blur
from .image_metadata import get_dimensions, get_image_size, get_size
from .normalize import normalize
from .pad import pad
from .resize import resize
from .totensor import pil_to_tensor, to_pil_image, to_tensor

__all__ = ["center_crop", "crop", "gaussian_blur", "get_dimensions", "get_image_size", "get_size",
           "horizontal_flip", "normalize", "pad", "pil_to_tensor", "resize", "resized_crop", "rgb_to_grayscale",
           "to_grayscale", "to_pil_image", "to_tensor", "vertical_flip"]
