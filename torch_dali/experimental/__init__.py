"""`torch_dali.experimental` mirrors `nvidia.dali.experimental`: Python helpers built from public ops
(`multi_crop`). DALI's dynamic mode is `torch_dali.eager`; its torchvision adaptor is not here."""
