"""Coefficients of the confidence model (see confidence.py): ``confidence_model.json``, written
by ``bench/calibrate_confidence.py``; edit by rerunning the script, not by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Read beside this module (importlib.resources' reader costs a search ~5 CPU-ms to import).
MODELS: dict[str, dict[str, Any]] = json.loads(
    Path(__file__).with_name("confidence_model.json").read_text(encoding="utf-8"))
