"""Where a project is (the nearest folder holding ``unotest/`` or
``unotest.config.yaml``) and the paths derived from its root (:class:`Project`).

Apart from :mod:`runner.project.index` (which re-exports both) so that code that needs no
syntax tree imports neither the parser nor Lark: :mod:`runner.collection.prelaunch`, run
from ``cli.main`` before anything else, and a collection's orchestrator, whose
workers parse what they run. Only the standard library, the protocol's constants and
the error tree are imported.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runner import protocol
from runner.errors import UsageError

if TYPE_CHECKING:
    from dsl.errors import Diagnostic

__all__ = [
    "CONFIG_FILE",
    "HOOKS_FILE",
    "SCENARIO_SUFFIX",
    "Project",
    "case_problem",
    "collections_dir",
    "find_project_root",
    "hooks_key",
    "is_helper_file",
    "is_project_dir",
    "misnamed_config_warnings",
    "problem_order",
    "split_case_name",
]

SCENARIO_SUFFIX = ".test.js"
HOOKS_FILE = "_hooks.js"
"""A folder's hooks (``dsl.scenario.HOOKS_FILE``, named here for code without the parser)."""
_CASE_SUFFIX = re.compile(r"(.+)\[([^\[\]/]+)\]", re.DOTALL)


def hooks_key(folder: str) -> str:
    """The name a folder's ``_hooks.js`` goes by in ``--break`` and ``.debugger.json``:
    ``shop/_hooks`` (``_hooks`` for ``unotest/e2e/`` itself), as a helper goes by
    ``_helpers/<name>``."""
    return "/".join(filter(None, (folder, HOOKS_FILE.removesuffix(".js"))))


def split_case_name(name: str) -> tuple[str, str | None]:
    """A case of a parameterised scenario, ``shop/pay[visa]``, as its file's scenario
    name and the case's (``shop/pay``, ``visa``); any other name with no case. Here, so
    that every path derived from a scenario's name finds its file without the parser."""
    match = _CASE_SUFFIX.fullmatch(name)
    if match is None:
        return name, None
    return match.group(1), match.group(2)


def case_problem(name: str, cases: dict[str, list[str]]) -> str | None:
    """Why ``name`` is no scenario when its file is a parameterised one (``cases``: each
    one's case names): it names the file, which runs once per case, or a case it does
    not have (with a did-you-mean). One sentence with the cases to choose from; None
    when ``name`` has nothing to do with a parameterised scenario."""
    base, case = split_case_name(name)
    if base not in cases or (case is not None and case in cases[base]):
        return None
    names = [f"{base}[{c}]" for c in cases[base]]
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    if case is None:
        return (
            f"'{base}' runs once per case of its CASES: name one, e.g. '{names[0]}' "
            f"(its cases: {shown}); a collection listing '{base}' runs them all"
        )
    # The case's name against the others (the file's name, the same in all, would make
    # every case look close).
    by_lower = {c.lower(): c for c in cases[base]}
    import difflib  # here: only a name that is not found pays its import

    close = difflib.get_close_matches(case.lower(), list(by_lower), n=1, cutoff=0.6)
    hint = f" (did you mean '{base}[{by_lower[close[0]]}]'?)" if close else ""
    return f"'{base}' has no case '{case}'{hint}; its cases: {shown}"


CONFIG_FILE = "unotest.config.yaml"

_MISNAMED_CONFIG_FILES = (
    "unotest.config.yml",
    f"{protocol.UNOTEST_DIR}/unotest.config.yaml",
    f"{protocol.UNOTEST_DIR}/unotest.config.yml",
)
"""Where users put a configuration that unotest never reads (project-relative)."""


def misnamed_config_warnings(root: Path) -> list[str]:
    """One warning per configuration file at ``root`` that is not read: a ``.yml`` one,
    or one inside ``unotest/`` (the run then uses the defaults, and fails far from the
    cause, e.g. without a baseURL)."""
    warnings: list[str] = []
    has_config = (root / CONFIG_FILE).is_file()
    for name in _MISNAMED_CONFIG_FILES:
        try:
            if not (root / name).is_file():
                continue
        except OSError:
            continue
        if has_config:
            fix = f"merge it into {CONFIG_FILE} and delete it"
        elif "/" not in name:
            fix = "rename it"
        else:
            fix = "move it to the project folder" + (", renamed" if name.endswith(".yml") else "")
        where = " in the project folder (next to unotest/)" if "/" in name else ""
        warnings.append(
            f"{name} is ignored: the configuration file is {CONFIG_FILE}{where} ({fix})"
        )
    return warnings


def _misnamed_hint(folders: tuple[Path, ...]) -> str:
    """`` (DIR/unotest.config.yml is there: rename it ...)`` for the nearest folder
    holding a configuration file that does not make it a project."""
    for folder in folders:
        try:
            misnamed = (folder / _MISNAMED_CONFIG_FILES[0]).is_file()
        except OSError:
            continue
        if misnamed:
            return (
                f" ({os.path.join(folder, _MISNAMED_CONFIG_FILES[0])} is there: rename it to "
                f"{CONFIG_FILE})"
            )
    return ""


def is_project_dir(path: Path) -> bool:
    if (path / CONFIG_FILE).is_file():
        return True
    marker = path / protocol.UNOTEST_DIR
    # A `unotest/` that is a Python package is unotest's own source tree, not a project.
    return marker.is_dir() and not (marker / "__init__.py").exists()


def find_project_root(
    start: Path, override: Path | None = None, *, new_project_ok: bool = False
) -> Path:
    """The nearest ancestor holding ``unotest/`` or ``unotest.config.yaml``.

    ``override`` (``--root``) must be such a project, unless ``new_project_ok`` (the
    MCP server and the viewer may start in an empty folder and write its first files)."""
    if override is not None:
        root = override.expanduser().resolve()
        if not root.is_dir():
            raise UsageError(f"--root {override}: no such directory")
        if not new_project_ok and not is_project_dir(root):
            # Checking or listing an empty folder said "ok: 0 scenarios": a CI gate
            # pointed at the wrong folder passed.
            raise UsageError(
                f"--root {override}: no unotest project there (no unotest/ folder nor "
                f"unotest.config.yaml){_misnamed_hint((root,))}; create one with "
                f"'unotest init {override}'"
            )
        return root
    here = start.resolve()
    for candidate in (here, *here.parents):
        if is_project_dir(candidate):
            return candidate
    raise UsageError(
        f"no unotest project found in {here} or above it{_misnamed_hint((here, *here.parents))}: "
        "run inside a project "
        "(a folder with unotest/ or unotest.config.yaml), pass --root DIR, "
        "or create one with 'unotest init'"
    )


def collections_dir(root: Path) -> Path:
    """The folder of the project's collection files (``Project.collections_dir``)."""
    return root / protocol.UNOTEST_DIR / protocol.E2E_SUBDIR / protocol.COLLECTIONS_SUBDIR


@functools.lru_cache(maxsize=64)
def _real_root(root: Path) -> str:
    """A project root with its links resolved (a project's root does not move while a
    process works in it)."""
    return os.path.realpath(root)


@dataclass(frozen=True)
class Project:
    """Paths of one project; every path the product touches is derived here."""

    root: Path

    @property
    def unotest_dir(self) -> Path:
        return self.root / protocol.UNOTEST_DIR

    @property
    def e2e_dir(self) -> Path:
        return self.unotest_dir / protocol.E2E_SUBDIR

    @property
    def helpers_dir(self) -> Path:
        return self.e2e_dir / protocol.HELPERS_SUBDIR

    @property
    def collections_dir(self) -> Path:
        return collections_dir(self.root)

    @property
    def runs_dir(self) -> Path:
        return self.unotest_dir / protocol.RUNS_SUBDIR

    def scenario_file(self, name: str) -> str:
        """Where scenario ``name``'s file is (or would be), project-relative; a case's is
        its parameterised scenario's file."""
        base, _ = split_case_name(name)
        return self.relative(self.e2e_dir / f"{base}{SCENARIO_SUFFIX}")

    def scenario_name_of(self, rel: str) -> str:
        """The scenario name of a project-relative scenario file (its path under e2e/
        without the suffix); a path elsewhere is returned as it is."""
        e2e = self.relative(self.e2e_dir) + "/"
        inner = rel[len(e2e) :] if rel.startswith(e2e) else rel
        return inner.removesuffix(SCENARIO_SUFFIX)

    def hooks_files_over(self, name: str) -> list[str]:
        """The ``_hooks.js`` files whose hooks would run around scenario ``name`` (they
        may not exist), outer first, project-relative: one in each of its folders."""
        folders = split_case_name(name)[0].split("/")[:-1]
        e2e = self.relative(self.e2e_dir)
        return ["/".join([e2e, *folders[:depth], HOOKS_FILE]) for depth in range(len(folders) + 1)]

    def collection_file(self, name: str) -> str:
        """Where collection ``name``'s file is (or would be), project-relative."""
        return self.relative(self.collections_dir / f"{name}.yaml")

    def relative(self, path: Path) -> str:
        """Project-relative POSIX path, the form every artifact uses."""
        # os.path on strings: Path.resolve() (twice per call) was a fifth of loading a
        # project of 10,000 scenarios.
        real, real_root = os.path.realpath(path), _real_root(self.root)
        if real.startswith(real_root + os.sep):
            return real[len(real_root) + 1 :].replace(os.sep, "/")
        if real == real_root:
            return "."
        # A link to a file outside the project: named where the link is, in the project.
        for root in (self.root.resolve(), self.root.absolute()):
            try:
                return Path(os.path.abspath(path)).relative_to(root).as_posix()
            except ValueError:
                continue
        return path.as_posix()


# --- the order problems are listed in ---------------------------------------------------
# Wherever they are listed (``check``, ``e2e``, ``collection``, the index and its cache,
# MCP ``check``): helper files' problems first, then by place. A helper file that does
# not parse leaves its functions out of the helper table, so every scenario calling them
# fails too ("'note' is not a function, helper or built-in"): the helper's own error is
# the cause, and is the one to read first. Here, without the parser, so that the index
# cache sorts the same way.


def is_helper_file(file: str) -> bool:
    """A helper file's path: a ``.js`` file that is not a scenario (``*.test.js``)."""
    return file.endswith(".js") and not file.endswith(SCENARIO_SUFFIX)


def problem_order(d: Diagnostic) -> tuple[bool, str, int, int]:
    """The sort key: helper files' problems first, then by file, line and column."""
    return (not is_helper_file(d.file), d.file, d.line, d.col)
