"""Coefficients of the confidence model (see confidence.py), written by
``bench/calibrate_confidence.py``; edit by rerunning the script, not by hand."""

from __future__ import annotations

from typing import Any

MODELS: dict[str, dict[str, Any]] = {
    "hybrid:convex": {
        "features": [
            "fused_top",
            "fused_gap",
            "agreement",
            "cos_top",
            "cos_gap",
            "kw_gap",
            "coverage"
        ],
        "mean": [
            0.694198,
            0.142304,
            0.584615,
            0.587901,
            0.074463,
            0.253671,
            0.672229
        ],
        "scale": [
            0.099437,
            0.100599,
            0.492788,
            0.121094,
            0.063825,
            0.181681,
            0.222634
        ],
        "coef": [
            0.721025,
            0.478848,
            0.024143,
            0.004497,
            0.442192,
            0.292492,
            0.836894
        ],
        "intercept": 3.483697,
        "fit": {
            "questions": 260,
            "positives": 235,
            "top_k": 5,
            "variant": "ctx"
        }
    },
    "hybrid:rrf": {
        "features": [
            "fused_top",
            "fused_gap",
            "agreement",
            "cos_top",
            "cos_gap",
            "kw_gap",
            "coverage"
        ],
        "mean": [
            0.032422,
            0.0012,
            0.584615,
            0.587901,
            0.074463,
            0.253671,
            0.652948
        ],
        "scale": [
            0.001134,
            0.001588,
            0.492788,
            0.121094,
            0.063825,
            0.181681,
            0.227281
        ],
        "coef": [
            0.542675,
            -0.044736,
            -0.028534,
            0.47644,
            0.437777,
            0.874532,
            0.847726
        ],
        "intercept": 3.306518,
        "fit": {
            "questions": 260,
            "positives": 233,
            "top_k": 5,
            "variant": "ctx"
        }
    },
    "vector": {
        "features": [
            "fused_top",
            "fused_gap",
            "agreement",
            "cos_top",
            "cos_gap",
            "kw_gap",
            "coverage"
        ],
        "mean": [
            0.587901,
            0.074876,
            0.0,
            0.587901,
            0.074463,
            0.0,
            0.580598
        ],
        "scale": [
            0.121094,
            0.063814,
            1.0,
            0.121094,
            0.063825,
            1.0,
            0.270952
        ],
        "coef": [
            0.189231,
            0.110831,
            0.0,
            0.189231,
            0.948902,
            0.0,
            0.688512
        ],
        "intercept": 2.442758,
        "fit": {
            "questions": 260,
            "positives": 219,
            "top_k": 5,
            "variant": "ctx"
        }
    },
    "keyword": {
        "features": [
            "fused_top",
            "fused_gap",
            "agreement",
            "cos_top",
            "cos_gap",
            "kw_gap",
            "coverage"
        ],
        "mean": [
            1.0,
            0.254458,
            0.0,
            0.0,
            0.0,
            0.253671,
            0.683921
        ],
        "scale": [
            1.0,
            0.181537,
            1.0,
            1.0,
            1.0,
            0.181681,
            0.211673
        ],
        "coef": [
            0.0,
            0.616767,
            0.0,
            0.0,
            0.0,
            0.512268,
            0.806958
        ],
        "intercept": 2.719966,
        "fit": {
            "questions": 260,
            "positives": 228,
            "top_k": 5,
            "variant": "ctx"
        }
    }
}
