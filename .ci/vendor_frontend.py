"""Re-vendor the viewer page's third-party front-end code from the npm registry.

The page is plain ES modules served from the Python package, so nobody needs Node to
install or run unotest; only this script (run by a maintainer when a version changes)
needs ``npm``. It fetches each pinned package with ``npm pack``, copies the few files the
page imports into ``unotest/viewer/static/vendor/``, keeps each package's licence text
beside them and writes ``VENDOR.json`` (name, version, licence, and the sha256 of every
file), which ``tests/unotest/test_viewer_vendor.py`` checks against the files.

    python .ci/vendor_frontend.py          # re-vendor the pinned versions
    python .ci/vendor_frontend.py --check  # only verify the files against VENDOR.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "unotest" / "viewer" / "static" / "vendor"


@dataclass(frozen=True)
class Package:
    """One npm package at a pinned version and the files taken from its tarball."""

    name: str
    version: str
    files: dict[str, str]  # path inside the tarball's package/ → name under vendor/
    licence_file: str = "LICENSE"


PACKAGES = (
    Package("preact", "11.2.0", {"dist/preact.mjs": "preact.mjs"}),
    Package("preact", "11.2.0", {"hooks/dist/hooks.mjs": "preact-hooks.mjs"}),
    Package("htm", "3.1.1", {"dist/htm.mjs": "htm.mjs"}),
    Package(
        "@xterm/xterm", "6.0.0", {"lib/xterm.mjs": "xterm.mjs", "css/xterm.css": "xterm.css"}
    ),
    Package("@xterm/addon-fit", "0.11.0", {"lib/addon-fit.mjs": "xterm-addon-fit.mjs"}),
)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _slug(name: str) -> str:
    return name.replace("@", "").replace("/", "-")


def _pack(pkg: Package, work: Path) -> Path:
    """The package's tarball unpacked; ``npm pack`` checks the registry's integrity."""
    out = subprocess.run(
        ["npm", "pack", f"{pkg.name}@{pkg.version}", "--silent"],
        cwd=work, check=True, capture_output=True, text=True,
    ).stdout.strip().splitlines()[-1]
    target = work / _slug(pkg.name)
    with tarfile.open(work / out) as tar:
        tar.extractall(target, filter="data")
    return target / "package"


def vendor() -> dict[str, object]:
    """Copies every file and licence, returns the VENDOR.json document."""
    VENDOR.mkdir(parents=True, exist_ok=True)
    (VENDOR / "licenses").mkdir(exist_ok=True)
    entries: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for pkg in PACKAGES:
            src = _pack(pkg, Path(tmp))
            meta = json.loads((src / "package.json").read_text())
            if meta["version"] != pkg.version:
                raise SystemExit(f"{pkg.name}: npm gave {meta['version']}, pinned {pkg.version}")
            licence_name = f"licenses/{_slug(pkg.name)}-LICENSE.txt"
            shutil.copyfile(src / pkg.licence_file, VENDOR / licence_name)
            entry = entries.setdefault(pkg.name, {
                "name": pkg.name, "version": pkg.version, "license": meta["license"],
                "files": {licence_name: sha256(VENDOR / licence_name)},
            })
            files = entry["files"]
            assert isinstance(files, dict)
            for inside, name in pkg.files.items():
                shutil.copyfile(src / inside, VENDOR / name)
                files[name] = sha256(VENDOR / name)
    return {"version": 1, "packages": list(entries.values())}


def check(vendor: Path = VENDOR) -> list[str]:
    """Every file named in VENDOR.json with its sum, and no file it does not name: what
    differs, one line each."""
    doc = json.loads((vendor / "VENDOR.json").read_text())
    wrong = []
    for pkg in doc["packages"]:
        for name, digest in pkg["files"].items():
            path = vendor / name
            if not path.is_file():
                wrong.append(f"{name}: missing")
            elif sha256(path) != digest:
                wrong.append(f"{name}: sha256 differs from VENDOR.json")
    named = {name for pkg in doc["packages"] for name in pkg["files"]}
    for path in sorted(vendor.rglob("*")):
        name = path.relative_to(vendor).as_posix()
        if path.is_file() and name != "VENDOR.json" and name not in named:
            wrong.append(f"{name}: not named in VENDOR.json")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only, fetch nothing")
    if parser.parse_args().check:
        wrong = check()
        print("\n".join(wrong) or "vendored files match VENDOR.json")
        return 1 if wrong else 0
    doc = vendor()
    (VENDOR / "VENDOR.json").write_text(json.dumps(doc, indent=2) + "\n")
    print(f"vendored {len(doc['packages'])} packages into {VENDOR.relative_to(ROOT)}")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
