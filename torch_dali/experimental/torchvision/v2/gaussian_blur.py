"""`GaussianBlur`: `fn.gaussian_blur` (reflect-101 borders, as torchvision's reflect padding) with
a fixed sigma or one drawn per sample from a (min, max) range."""
from __future__ import annotations

from typing import Any, Literal, Sequence

from .... import fn
from .operator import ArgumentValidateRule, Operator, ValidateIfPositive, ValidateIfRange


class _ValidateKernel(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, kernel_size: Any, **_: Any) -> None:
        ValidateIfPositive.verify(values=kernel_size, name="kernel_size")
        is_seq = isinstance(kernel_size, Sequence) and not isinstance(kernel_size, str)
        if not (isinstance(kernel_size, int) or is_seq) or (is_seq and not all(isinstance(k, int) for k in kernel_size)):
            raise ValueError(f"kernel_size must be an int or a sequence of ints, got {kernel_size!r}")
        if any(k % 2 == 0 for k in ([kernel_size] if isinstance(kernel_size, int) else kernel_size)):
            raise ValueError(f"kernel_size values must be odd, got {kernel_size}")


class _ValidateSigma(ArgumentValidateRule):
    @classmethod
    def verify(cls, *, sigma: Any, **_: Any) -> None:
        if isinstance(sigma, str) or not isinstance(sigma, (int, float, Sequence)):
            raise ValueError(f"sigma must be a number or a (min, max) pair, got {type(sigma).__name__}")
        if isinstance(sigma, Sequence) and len(sigma) != 2:
            raise ValueError(f"a sigma range must hold two values (min, max), got {len(sigma)}")
        ValidateIfPositive.verify(values=sigma, name="sigma")
        if isinstance(sigma, Sequence):
            ValidateIfRange.verify(values=sigma, name="sigma")


class GaussianBlur(Operator):
    """Blurs with a `kernel_size` Gaussian window of standard deviation `sigma` (a number, or a
    (min, max) range drawn from per sample)."""

    arg_rules = (_ValidateKernel, _ValidateSigma)

    def __init__(self, kernel_size: int | Sequence[int], sigma: Any = (0.1, 2.0),
                 device: Literal["cpu", "gpu"] = "cpu", seed: int = -1) -> None:
        super().__init__(device=device, kernel_size=kernel_size, sigma=sigma)
        self.kernel_size = kernel_size
        self.sigma = (sigma, sigma) if isinstance(sigma, (int, float)) else sigma
        self.seed = seed

    def _kernel(self, data_input: Any) -> Any:
        if self.sigma[0] == self.sigma[1]:
            sigma: Any = self.sigma[0]
        else:
            seed = {} if self.seed == -1 else {"seed": self.seed}
            sigma = fn.random.uniform(range=self.sigma, **seed)
        return fn.gaussian_blur(data_input, window_size=self.kernel_size, sigma=sigma, device=self.device)
