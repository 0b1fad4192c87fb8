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
            "coverage",
            "coverage_all",
            "paged",
            "same_book"
        ],
        "mean": [
            0.681556,
            0.131516,
            0.393333,
            0.543645,
            0.053657,
            0.200226,
            0.562816,
            0.748592,
            0.286667,
            0.751556
        ],
        "scale": [
            0.154574,
            0.117029,
            0.48849,
            0.143656,
            0.056289,
            0.172526,
            0.251709,
            0.204685,
            0.452204,
            0.298827
        ],
        "coef": [
            0.939893,
            0.581311,
            0.604054,
            0.70683,
            0.9107,
            0.781832,
            0.460309,
            0.277749,
            0.416291,
            0.586905
        ],
        "intercept": 2.705043,
        "fit": {
            "questions": 450,
            "positives": 318,
            "top_k": 5,
            "sets": [
                "squad",
                "books",
                "markdown"
            ]
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
            "coverage",
            "coverage_all",
            "paged",
            "same_book"
        ],
        "mean": [
            0.033451,
            0.002345,
            0.393333,
            0.543645,
            0.053657,
            0.200226,
            0.559862,
            0.748293,
            0.286667,
            0.745778
        ],
        "scale": [
            0.003225,
            0.002505,
            0.48849,
            0.143656,
            0.056289,
            0.172526,
            0.25506,
            0.206761,
            0.452204,
            0.305349
        ],
        "coef": [
            1.072054,
            -0.378945,
            0.785706,
            1.209269,
            0.544468,
            1.16157,
            0.041966,
            0.372741,
            0.678831,
            0.474734
        ],
        "intercept": 2.320719,
        "fit": {
            "questions": 450,
            "positives": 317,
            "top_k": 5,
            "sets": [
                "squad",
                "books",
                "markdown"
            ]
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
            "coverage",
            "coverage_all",
            "paged",
            "same_book"
        ],
        "mean": [
            0.571575,
            0.073372,
            0.0,
            0.543645,
            0.053657,
            0.0,
            0.496301,
            0.671172,
            0.286667,
            0.779111
        ],
        "scale": [
            0.161516,
            0.075082,
            1.0,
            0.143656,
            0.056289,
            1.0,
            0.285634,
            0.247925,
            0.452204,
            0.289995
        ],
        "coef": [
            0.582127,
            1.13265,
            0.0,
            0.621006,
            0.256847,
            0.0,
            1.044801,
            0.68092,
            0.178861,
            0.521796
        ],
        "intercept": 1.977776,
        "fit": {
            "questions": 450,
            "positives": 306,
            "top_k": 5,
            "sets": [
                "squad",
                "books",
                "markdown"
            ]
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
            "coverage",
            "coverage_all",
            "paged",
            "same_book"
        ],
        "mean": [
            1.04757,
            0.233196,
            0.0,
            0.0,
            0.0,
            0.200226,
            0.582723,
            0.805615,
            0.286667,
            0.647111
        ],
        "scale": [
            0.09014,
            0.197858,
            1.0,
            1.0,
            1.0,
            0.172526,
            0.238718,
            0.185878,
            0.452204,
            0.311987
        ],
        "coef": [
            0.329268,
            0.454357,
            0.0,
            0.0,
            0.0,
            0.790174,
            0.834895,
            0.408362,
            0.306137,
            0.984119
        ],
        "intercept": 1.620664,
        "fit": {
            "questions": 450,
            "positives": 304,
            "top_k": 5,
            "sets": [
                "squad",
                "books",
                "markdown"
            ]
        }
    }
}
