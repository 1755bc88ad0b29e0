#!/usr/bin/env python3
"""wheelhouse.py - tiny hand-made wheels standing in for PyPI and for the nemo:25.11 image's own packages.

Used by tests/e2e/33-setup-dfm-pip.sh (no PyPI, no container here): DIR/index gets the wheels an index would
serve for NVIDIA's `pip install --upgrade diffusers==0.35.1` and `pip install easydict imageio imageio-ffmpeg`
(DFM f8c1c09 examples/megatron/recipes/wan/README_perf_test.md:47-49), DIR/image the ones the image already has.
The dependency shapes are real pip decisions, the versions made up: diffusers needs a newer huggingface-hub than
the image's (an upgrade pip must make), numpy/Pillow/safetensors/requests are satisfied by the image (pip must
keep them; `pip install --target` would not), easydict/imageio/imageio-ffmpeg are new.
Usage: wheelhouse.py DIR
"""
import base64
import hashlib
import os
import sys
import zipfile


def wheel(folder, name, version, requires=()):
    os.makedirs(folder, exist_ok=True)
    mod = name.replace("-", "_")
    info = "%s-%s.dist-info" % (mod, version)
    files = {
        "%s/__init__.py" % mod: "__version__ = %r\n" % version,
        info + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n%s" % (
            name, version, "".join("Requires-Dist: %s\n" % r for r in requires)),
        info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: wheelhouse.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = ""
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\n" % (path, digest, len(text))
    files[info + "/RECORD"] = record + info + "/RECORD,,\n"
    with zipfile.ZipFile(os.path.join(folder, "%s-%s-py3-none-any.whl" % (mod, version)), "w") as z:
        for path, text in files.items():
            z.writestr(path, text)


out = sys.argv[1]
image = os.path.join(out, "image")
for name, version in (("numpy", "1.26.4"), ("Pillow", "11.0.0"), ("huggingface-hub", "0.20.0"),
                      ("safetensors", "0.4.5"), ("requests", "2.32.3"), ("filelock", "3.16.1")):
    wheel(image, name, version)
index = os.path.join(out, "index")
wheel(index, "diffusers", "0.35.1", ("huggingface-hub>=0.34.0", "numpy", "Pillow", "safetensors>=0.3.1",
                                     "requests", "filelock"))
for name, version in (("numpy", "2.3.1"), ("Pillow", "11.3.0"), ("huggingface-hub", "0.35.3"),
                      ("safetensors", "0.6.2"), ("requests", "2.32.5"), ("filelock", "3.19.1")):
    wheel(index, name, version)
wheel(index, "easydict", "1.13")
wheel(index, "imageio", "2.37.0", ("numpy", "Pillow>=8.3.2"))
wheel(index, "imageio-ffmpeg", "0.6.0")
