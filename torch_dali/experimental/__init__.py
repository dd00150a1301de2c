"""`torch_dali.experimental` mirrors `nvidia.dali.experimental`: `dynamic` is DALI's dynamic mode
(`import nvidia.dali.experimental.dynamic as ndd`), `multi_crop` a helper built from public ops,
`torchvision` DALI's torchvision-v2-like transforms (docs/torchvision.md)."""
