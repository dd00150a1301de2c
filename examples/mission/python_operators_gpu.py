# The user's Python Operators example with its Python ops moved to the GPU (device="gpu"):
# PythonFunction then hands the function CuPy arrays, TorchPythonFunction CUDA tensors, and
# DLTensorPythonFunction DLPack capsules of CUDA memory. edit_images picks NumPy or CuPy from its
# input (the only change to the user's functions); everything else is the original example.
# Run on a CUDA machine: IMAGE_DIR=... python examples/mission/python_operators_gpu.py
import os

import numpy as np
import torch
import torch.utils.dlpack as torch_dlpack
import torchvision.transforms as transforms

import torch_dali.ops as ops
import torch_dali.plugin.pytorch as dalitorch
import torch_dali.types as types
from torch_dali.pipeline import Pipeline


def edit_images(image1, image2):
    try:
        import cupy
        xp = cupy.get_array_module(image1)
    except ImportError:
        xp = np
    assert image1.shape == image2.shape
    h, w, c = image1.shape
    y, x = xp.ogrid[0:h, 0:w]
    mask = (x - w / 2) ** 2 + (y - h / 2) ** 2 > h * w / 9
    result1 = xp.copy(image1)
    result1[mask] = image2[mask]
    result2 = xp.copy(image2)
    result2[mask] = image1[mask]
    return result1, result2


image_dir = os.environ.get("IMAGE_DIR", "demo_output/sample_data/images")


class CommonPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, image_dir):
        super().__init__(batch_size, num_threads, device_id, seed=99)
        self.input1 = ops.FileReader(file_root=image_dir, random_shuffle=True)
        self.input2 = ops.FileReader(file_root=image_dir, random_shuffle=True)
        self.decode = ops.ImageDecoder(device='mixed', output_type=types.RGB)
        self.resize = ops.Resize(resize_x=300, resize_y=300, device="gpu")

    def load(self):
        jpegs1, labels = self.input1()
        jpegs2, labels = self.input2()
        im1, im2 = self.decode([jpegs1, jpegs2])
        return self.resize([im1, im2])


class PythonFuncPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, image_dir):
        super().__init__(batch_size, num_threads, device_id, image_dir)
        self.edit_images = ops.PythonFunction(function=edit_images, num_outputs=2, device="gpu")

    def define_graph(self):
        images1, images2 = self.load()
        return self.edit_images(images1, images2)


transform = transforms.Compose([transforms.ToPILImage(), transforms.RandomPerspective(p=1.),
                                transforms.ToTensor()])


def perspective(t):
    return transform(t.cpu()).transpose(2, 0).transpose(0, 1).to(t.device)


def dlpack_manipulation(dlpacks):
    tensors = [torch_dlpack.from_dlpack(dlpack) for dlpack in dlpacks]
    output = [(tensor.to(torch.float32) / 255.).sqrt() for tensor in tensors]
    output.reverse()
    return [torch_dlpack.to_dlpack(tensor) for tensor in output]


class TorchFuncPipeline(CommonPipeline):
    def __init__(self, batch_size, num_threads, device_id, image_dir):
        super().__init__(batch_size, num_threads, device_id, image_dir)
        self.norm = ops.CropMirrorNormalize(std=255., mean=0., device="gpu")
        self.perspective = dalitorch.TorchPythonFunction(function=perspective, device="gpu")
        self.sqrt_color = ops.DLTensorPythonFunction(function=dlpack_manipulation, device="gpu")

    def define_graph(self):
        images, _ = self.load()
        return self.perspective(self.norm(images)), self.sqrt_color(images)


if __name__ == "__main__":
    pipe = PythonFuncPipeline(4, 4, 0, image_dir)
    pipe.build()
    ims1, ims2 = pipe.run()
    print("PythonFunction on", ims1.device, [tuple(t.shape) for t in ims1])
    tp = TorchFuncPipeline(4, 4, 0, image_dir)
    tp.build()
    x, y = tp.run()
    print("TorchPythonFunction on", x.device, x.at(0).shape, "DLTensorPythonFunction on", y.device, y.at(0).shape)
