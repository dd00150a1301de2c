"""Bytes in: files and records read from the host (`host_io`, `recordio`), image headers parsed
without decoding (`headers`), encoded images decoded (`decode` on the CPU, `jpeg_roi` for regions,
`png` with its chunk checks, `tiff` for the TIFFs PIL cannot take whole, `nvjpeg` on the GPU), the readers' data formats (`npy`, `tarindex`,
`tfexample` and `caffe` over `protowire`, `lmdb`). Everything that touches untrusted bytes lives
here, with its limits; the pixels it returns are finished by the pure-torch `functional.image`."""
