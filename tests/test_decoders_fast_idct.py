"""`use_fast_idct=True` of the image decoders: DALI 2.4's CPU decoder then decodes JPEGs with
libjpeg's JDCT_IFAST (up to 5 off the default IDCT on most pixels), except a JPEG whose EXIF
orientation it applies, which keeps the default IDCT. torch_dali ignored the argument. The digests
are sha256 prefixes of DALI 2.4's outputs for these bytes (a 24x40 4:2:0 JPEG, quality 80, and the
same with EXIF orientation 6)."""
from __future__ import annotations

import base64
import hashlib

import numpy as np
import pytest

from torch_dali import fn, pipeline_def, types
from torch_dali.io import jpeg_roi

PLAIN = (
    "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAYEBQYFBAYGBQYHBwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwg"
    "IyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYaKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgo"
    "KCgoKCgoKCgoKCgoKCj/wAARCAAYACgDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAA"
    "AgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6"
    "Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXG"
    "x8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREA"
    "AgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5"
    "OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPE"
    "xcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oADAMBAAIRAxEAPwDwGPSGkmkH3WG5t7RlMYGQOvHcc4zk9cDO"
    "xpmjylUjkYswUgIQFYHbkDA5xyR9ffGeyh0KSIyHCI4VVdZCzAE8j5hgjAKjPX3JrpLXw46QiK4lBYHIDxAqNqnjIUEnJ6kY"
    "5HBrnwX+2JLuebgs7UXa+5wlloYCRm4eOZduSq9RycAA8Z6enUjGTxs6doO4qCpjctlmkTAUEZ3cepBA+hPciu4XTRaxlPKP"
    "mMSoADHbk4O5gCc59MZBHTtes9Gu5d6E+Q7/ADARjkcbyMcEsPlyPx/3euv9QozdJrnn2j09Xt8tX3PtcvzmUveTsv6/p9Di"
    "pNDZFLXBZMsQqn07be2CeOmPl/Mrv7HQYooyk8TxIvzMWyG25GCwXkYO7k8cdM8UVwznScrckIvs56/ofZ4fO/cW7+//AD/M"
    "qWWiBmLpwoBUhidwOeoPUjHGMg8Z9c7sOnCOygh8rMnCgsh6AZOTnkZ56d1wPQorxcLi6tDLalSm7SSWvq0v1P5Sy/E1Z14w"
    "b0/4f/I1LTRIxFvYIRypypACjrk59iRg9+ema1NN0t4sxRlHiBH3R8o5wSOCASce/fjsUVliJzw9GjRpOyne7W+jS36eZ9rl"
    "mJqNybd7f5F620KKORC7OJU2jyQPlGcZGAflXj/PGCiivExeJrU6sqNGXJGDaVkune6ep9jRxVV01Jvc/9k="
)
ORIENTED = (
    "/9j/4AAQSkZJRgABAQAAAQABAAD/4QAiRXhpZgAATU0AKgAAAAgAAQESAAMAAAABAAYAAAAAAAD/2wBDAAYEBQYFBAYGBQYH"
    "BwYIChAKCgkJChQODwwQFxQYGBcUFhYaHSUfGhsjHBYWICwgIyYnKSopGR8tMC0oMCUoKSj/2wBDAQcHBwoIChMKChMoGhYa"
    "KCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCgoKCj/wAARCAAYACgDASIAAhEBAxEB/8QA"
    "HwAAAQUBAQEBAQEAAAAAAAAAAAECAwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKB"
    "kaEII0KxwRVS0fAkM2JyggkKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWG"
    "h4iJipKTlJWWl5iZmqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QA"
    "HwEAAwEBAQEBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEI"
    "FEKRobHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6goOE"
    "hYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3+Pn6/9oA"
    "DAMBAAIRAxEAPwDwGPSGkmkH3WG5t7RlMYGQOvHcc4zk9cDOxpmjylUjkYswUgIQFYHbkDA5xyR9ffGeyh0KSIyHCI4VVdZC"
    "zAE8j5hgjAKjPX3JrpLXw46QiK4lBYHIDxAqNqnjIUEnJ6kY5HBrnwX+2JLuebgs7UXa+5wlloYCRm4eOZduSq9RycAA8Z6e"
    "nUjGTxs6doO4qCpjctlmkTAUEZ3cepBA+hPciu4XTRaxlPKPmMSoADHbk4O5gCc59MZBHTtes9Gu5d6E+Q7/ADARjkcbyMcE"
    "sPlyPx/3euv9QozdJrnn2j09Xt8tX3PtcvzmUveTsv6/p9DipNDZFLXBZMsQqn07be2CeOmPl/Mrv7HQYooyk8TxIvzMWyG2"
    "5GCwXkYO7k8cdM8UVwznScrckIvs56/ofZ4fO/cW7+//AD/MqWWiBmLpwoBUhidwOeoPUjHGMg8Z9c7sOnCOygh8rMnCgsh6"
    "AZOTnkZ56d1wPQorxcLi6tDLalSm7SSWvq0v1P5Sy/E1Z14wb0/4f/I1LTRIxFvYIRypypACjrk59iRg9+ema1NN0t4sxRlH"
    "iBH3R8o5wSOCASce/fjsUVliJzw9GjRpOyne7W+jS36eZ9rlmJqNybd7f5F620KKORC7OJU2jyQPlGcZGAflXj/PGCiivExe"
    "JrU6sqNGXJGDaVkune6ep9jRxVV01Jvc/9k="
)

# (input, decoder) -> {use_fast_idct: (shape, sha256 prefix of DALI 2.4's output)}
DALI = {
    ("plain", "rgb"): {False: ((24, 40, 3), "b0367a103ac0273e"), True: ((24, 40, 3), "8460be015bf2f517")},
    ("plain", "gray"): {False: ((24, 40, 1), "223f13a700d5d88e"), True: ((24, 40, 1), "923a1c4ca92e6a06")},
    ("plain", "crop"): {False: ((10, 13, 3), "2a842439afa5da21"), True: ((10, 13, 3), "693286daf125fa92")},
    ("oriented", "rgb"): {False: ((40, 24, 3), "46a68adc05cca8f9"), True: ((40, 24, 3), "46a68adc05cca8f9")},
    ("oriented", "gray"): {False: ((40, 24, 1), "cc78ea32afc316df"), True: ((40, 24, 1), "cc78ea32afc316df")},
    ("oriented", "crop"): {False: ((10, 13, 3), "6047598c258a82ff"), True: ((10, 13, 3), "6047598c258a82ff")},
}

_DECODERS = {
    "rgb": lambda e, fast: fn.decoders.image(e, use_fast_idct=fast),
    "gray": lambda e, fast: fn.decoders.image(e, use_fast_idct=fast, output_type=types.GRAY),
    "crop": lambda e, fast: fn.decoders.image_crop(e, use_fast_idct=fast, crop=(10, 13), crop_pos_x=0.7,
                                                   crop_pos_y=0.4),
}


@pytest.mark.skipif(not jpeg_roi.available(), reason="libjpeg is not available to build the JPEG decoder")
@pytest.mark.parametrize("fast", [False, True])
@pytest.mark.parametrize("key", list(DALI))
def test_fast_idct_matches_dali(key, fast):
    name, label = key
    data = np.frombuffer(base64.b64decode(PLAIN if name == "plain" else ORIENTED), dtype=np.uint8)

    @pipeline_def(batch_size=1, num_threads=1, device_id=None)
    def pipe():
        return _DECODERS[label](fn.external_source(source=lambda: [data], batch=True), fast)

    p = pipe()
    p.build()
    out = np.asarray(p.run()[0][0])
    shape, digest = DALI[key][fast]
    assert out.shape == shape
    assert hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()[:16] == digest
