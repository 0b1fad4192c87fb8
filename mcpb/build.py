"""Stage and pack the Claude Desktop bundle: ``uv run python mcpb/build.py [OUT.mcpb]``.

The bundle uses the MCPB ``uv`` server type (manifest 0.4): it carries the project as source —
``pyproject.toml``, ``uv.lock``, the package and the recipe of the weights package
(``minilm/``) — and the host's uv installs the locked dependencies on first start. So the
bundle needs no checkout on the user's machine and holds no venv and no weights (those are
hundreds of megabytes and platform-specific); tests, benches and samples stay out.

The folder is staged rather than packed from the repository root so that exactly these files
go in, whatever else a working tree holds. The manifest's version is taken from
``pyproject.toml`` so the two never disagree. ``npx`` (Node 18+) runs the official CLI, which
validates the manifest and writes the zip.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

MCPB_CLI = "@anthropic-ai/mcpb@2.1.2"
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
PROJECT_FILES = ("pyproject.toml", "uv.lock", "README.md")
PROJECT_TREES = ("src/grimoire_beholder", "minilm")
BUNDLE_FILES = ("manifest.json", "server.py")
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", ".venv", "build", "dist", "*.egg-info")
DEFAULT_OUT = ROOT / "dist" / "grimoire-beholder.mcpb"


def stage(dest: Path) -> Path:
    """Copy the bundle's files into the empty or missing folder ``dest``; return it."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, dest / name)
    for tree in PROJECT_TREES:
        shutil.copytree(ROOT / tree, dest / tree, ignore=SKIP)
    for name in BUNDLE_FILES:
        shutil.copy2(HERE / name, dest / name)
    # A host that runs the bundle its own way (mcp_config is optional for the uv type) must
    # not install the dev group either: it needs tests/, which the bundle leaves out.
    with (dest / "pyproject.toml").open("a", encoding="utf-8") as pyproject_file:
        pyproject_file.write("\n[tool.uv]\ndefault-groups = []\n")
    manifest = json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    manifest["version"] = pyproject["project"]["version"]
    (dest / "manifest.json").write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                        encoding="utf-8")
    return dest


def pack(out: Path) -> Path:
    """Stage into a temporary folder, validate and pack it to ``out``; return ``out``."""
    npx = shutil.which("npx")
    if npx is None:
        raise SystemExit("error: packing the bundle needs npx (Node.js 18 or later)")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="grimoire-mcpb-") as scratch:
        staged = stage(Path(scratch) / "bundle")
        for args in (["validate", str(staged / "manifest.json")], ["pack", str(staged), str(out)]):
            # The CLI's chatter goes to stderr: this script's stdout is the bundle's path.
            subprocess.run([npx, "-y", MCPB_CLI, *args], check=True, stdout=sys.stderr)
    return out


def main(argv: list[str]) -> None:
    out = Path(argv[0]).resolve() if argv else DEFAULT_OUT
    print(pack(out))


if __name__ == "__main__":
    main(sys.argv[1:])
