"""Regenerate the registry fixtures from real torch_npu wheels (run once; needs the network).

    pip download --no-deps torch-npu==2.7.1 torch-npu==2.13.0 -d /tmp/wheels   # one at a time
    python tests/data/torch_npu_registry/extract.py /tmp/wheels/torch_npu-*.whl

Each fixture keeps, per yaml file the wheel ships under torch_npu/csrc/aten/, the registering
sections (supported, autograd, quant, custom, custom_autograd) with operator names only (schemas
dropped) and the structured_delegate links; cannenv.model.registry reads them like the originals.
"""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
SECTIONS = ("supported", "autograd", "quant", "custom", "custom_autograd")


def slim(doc: dict) -> dict:
    out: dict = {}
    for section in SECTIONS:
        items = doc.get(section) or []
        kept = []
        for e in items:
            if isinstance(e, str):
                kept.append(e)
                continue
            name = e["func"].split("(", 1)[0].strip()
            if "structured_delegate" in e:
                kept.append({"func": name, "structured_delegate": e["structured_delegate"]})
            else:
                kept.append(name)
        if kept:
            out[section] = kept
    return out


for wheel in sys.argv[1:]:
    version = Path(wheel).name.split("-")[1]
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.startswith("torch_npu/csrc/aten/npu_native_functions") and name.endswith(".yaml"):
                doc = yaml.safe_load(zf.read(name))
                dest = HERE / version / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                head = (
                    f"# extracted from {Path(wheel).name} ({name}), operator names only; see ../extract.py\n"
                )
                dest.write_text(head + yaml.safe_dump(slim(doc), sort_keys=False, width=200))
            elif name.endswith(".dist-info/METADATA") and name.startswith("torch_npu-"):
                # the identifying header lines only (the long description is not needed)
                lines = zf.read(name).decode().splitlines()
                keep = [ln for ln in lines if ln.split(":")[0] in ("Metadata-Version", "Name", "Version")]
                dest = HERE / version / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text("\n".join(keep) + "\n")
