# The user's Serialization example (DALI docs), with only its import lines and data path changed.
# Run: python examples/mission/serialization.py  (RECORDIO_DIR points at a folder with train.rec/.idx;
# `torch-dali demo` makes one under demo_output/sample_data/)
import os  # added: the local data path comes from the environment

from torch_dali.pipeline import Pipeline
import torch_dali.ops as ops
import torch_dali.types as types
import numpy as np
import matplotlib.pyplot as plt

base = os.environ.get("RECORDIO_DIR", "demo_output/sample_data") + "/"
idx_files = [base + "train.idx"]
rec_files = [base + "train.rec"]


class SerializedPipeline(Pipeline):
    def __init__(self, batch_size, num_threads, device_id, seed):
        super(SerializedPipeline, self).__init__(batch_size,
                                                 num_threads,
                                                 device_id,
                                                 seed = seed)
        self.input = ops.MXNetReader(path = rec_files, index_path = idx_files)
        self.decode = ops.nvJPEGDecoder(device = "mixed", output_type = types.RGB)
        self.resize = ops.Resize(device = "gpu",
                                 image_type = types.RGB,
                                 interp_type = types.INTERP_LINEAR)
        self.cmnp = ops.CropMirrorNormalize(device = "gpu",
                                            output_dtype = types.FLOAT,
                                            crop = (224, 224),
                                            image_type = types.RGB,
                                            mean = [0., 0., 0.],
                                            std = [1., 1., 1.])
        self.res_uniform = ops.Uniform(range = (256.,480.))

    def define_graph(self):
        inputs, labels = self.input(name="Reader")
        images = self.decode(inputs)
        images = self.resize(images, resize_shorter = self.res_uniform())
        output = self.cmnp(images)
        return (output, labels)

batch_size = 16

pipe = SerializedPipeline(batch_size=batch_size, num_threads=2, device_id = 0, seed = 12)

s = pipe.serialize()

pipe2 = Pipeline(batch_size = batch_size, num_threads = 2, device_id = 0, seed = 12)

pipe2.deserialize_and_build(s)

pipe.build()
original_pipe_out = pipe.run()
serialized_pipe_out = pipe2.run()

def check_difference(batch_1, batch_2):
    return [np.sum(np.abs(batch_1.at(i) - batch_2.at(i))) for i in range(batch_size)]

original_images, _ = original_pipe_out
serialized_images, _ = serialized_pipe_out

result = check_difference(original_images.asCPU(), serialized_images.asCPU())
print(result)
