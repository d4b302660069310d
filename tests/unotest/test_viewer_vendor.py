"""The page's vendored front-end code and how the wheel carries it (issue 15, item 1).

No Node at install time: Preact, htm and xterm.js are files in the package, pinned,
with their licences and sha256 sums in ``VENDOR.json`` (written by
``.ci/vendor_frontend.py``), and ``pyproject.toml``'s package-data takes every file of
``unotest/viewer/static/`` into the wheel.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "unotest" / "viewer" / "static"
VENDOR = STATIC / "vendor"
SCRIPT = ROOT / ".ci" / "vendor_frontend.py"


def vendor_doc() -> dict[str, list[dict[str, object]]]:
    return json.loads((VENDOR / "VENDOR.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("vendor_frontend", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["vendor_frontend"] = module
    spec.loader.exec_module(module)
    return module


def test_every_vendored_file_has_the_sha256_vendor_json_names() -> None:
    doc = vendor_doc()
    named: set[str] = set()
    for pkg in doc["packages"]:
        files = pkg["files"]
        assert isinstance(files, dict)
        for name, digest in files.items():
            data = (VENDOR / name).read_bytes()
            assert hashlib.sha256(data).hexdigest() == digest, name
            named.add(name)
    on_disk = {
        p.relative_to(VENDOR).as_posix() for p in VENDOR.rglob("*") if p.is_file()
    } - {"VENDOR.json"}
    assert on_disk == named


def test_each_package_is_pinned_with_its_licence_text_beside_it() -> None:
    names = set()
    for pkg in vendor_doc()["packages"]:
        names.add(pkg["name"])
        assert re.fullmatch(r"\d+\.\d+\.\d+", str(pkg["version"])), pkg
        assert pkg["license"] in ("MIT", "Apache-2.0"), pkg
        files = pkg["files"]
        assert isinstance(files, dict)
        licences = [n for n in files if n.startswith("licenses/")]
        assert len(licences) == 1, pkg
        text = (VENDOR / licences[0]).read_text(encoding="utf-8")
        assert ("MIT License" in text or "Permission is hereby granted" in text
                or "Apache License" in text), licences[0]
    assert names == {"preact", "htm", "@xterm/xterm", "@xterm/addon-fit"}


def test_the_script_pins_the_versions_vendor_json_records() -> None:
    pinned = {(p.name, p.version) for p in script().PACKAGES}
    recorded = {(str(p["name"]), str(p["version"])) for p in vendor_doc()["packages"]}
    assert pinned == recorded


def test_the_scripts_check_passes_here_and_catches_a_changed_or_unlisted_file(
    tmp_path: Path,
) -> None:
    checked = subprocess.run(
        [sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    copy = tmp_path / "vendor"
    shutil.copytree(VENDOR, copy)
    with (copy / "htm.mjs").open("a", encoding="utf-8") as f:
        f.write("\n// changed\n")
    (copy / "extra.js").write_text("export {};\n", encoding="utf-8")
    wrong = script().check(copy)
    assert wrong == [
        "htm.mjs: sha256 differs from VENDOR.json",
        "extra.js: not named in VENDOR.json",
    ]


def test_the_import_map_names_vendored_files() -> None:
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    found = re.search(r'<script type="importmap">(.*?)</script>', html, re.S)
    assert found is not None
    imports = json.loads(found.group(1))["imports"]
    assert {"preact", "preact/hooks", "htm"} <= set(imports)
    for target in imports.values():
        assert target.startswith("/static/vendor/")
        assert (STATIC / target.removeprefix("/static/")).is_file(), target


def wheel_package_data() -> set[str]:
    """What setuptools puts in the wheel as ``unotest``'s package data: its own
    ``build_py.find_data_files`` on pyproject.toml's ``[tool.setuptools.package-data]``
    (the step ``bdist_wheel`` runs; no build, no network)."""
    setuptools_dist = pytest.importorskip("setuptools.dist")
    pyprojecttoml = pytest.importorskip("setuptools.config.pyprojecttoml")
    dist = setuptools_dist.Distribution()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pyprojecttoml.apply_configuration(dist, str(ROOT / "pyproject.toml"))
    build_py = dist.get_command_obj("build_py")
    build_py.ensure_finalized()
    build_py.manifest_files = {}  # package-data alone, not a MANIFEST.in
    return {Path(f).as_posix() for f in build_py.find_data_files("unotest", str(ROOT / "unotest"))}


def test_the_wheel_takes_every_file_of_the_static_folder() -> None:
    data = {str(Path(f).relative_to(ROOT).as_posix()) for f in wheel_package_data()}
    static = {
        p.relative_to(ROOT).as_posix() for p in STATIC.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert static, "no static files found"
    assert static - data == set()
    assert "unotest/viewer/static/index.html" in data
    assert "unotest/viewer/static/vendor/VENDOR.json" in data
