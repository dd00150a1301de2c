"""torchvision.transforms.v2-style transforms over torch_dali (DALI's `experimental.torchvision.v2`)."""
