"""Coefficients of the confidence model (see confidence.py): ``confidence_model.json``, written
by ``bench/calibrate_confidence.py``; edit by rerunning the script, not by hand."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

MODELS: dict[str, dict[str, Any]] = json.loads(
    resources.files(__package__).joinpath("confidence_model.json").read_text(encoding="utf-8"))
