"""A collection file (``unotest/e2e/_collections/<name>.yaml``) read and checked: its
``description:``, ``scenarios:`` and ``setup:`` scenarios, and the browser context's
keys it sets for its scenarios (:class:`CollectionUse`), each problem one sentence at
its line and column with its source line.

The file is plain data: ``yaml.safe_load`` only, a ``!!python/...`` tag is refused,
never executed, and anchors are not expanded into copies (a "billion laughs" file stays
small). The context keys are checked by the config's own checks
(``runner.project.emulation.SettingChecks``), so a key takes and refuses the same
values in either file.

:class:`CollectionUse` is a collection's setup scenarios and context keys in the JSON
form the index cache keeps and a worker's run order carries
(:meth:`CollectionUse.to_json`): the values as the file wrote them and their places,
checked again where they are used (:meth:`CollectionUse.from_json`), so every process
holds what one set of checks made of them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol, TypedDict, TypeVar

import yaml

from dsl.errors import Diagnostic
from runner import protocol
from runner.errors import ConfigError
from runner.project.config_file import Places, places_of, show, yaml_flow_too_deep
from runner.project.emulation import USE_KEYS, Emulation, SettingChecks, StorageState
from runner.text import did_you_mean, has_control_character, show_name

__all__ = [
    "MAX_COLLECTION_DEPTH",
    "CollectionUse",
    "CollectionUseJSON",
    "parse_collection",
    "scenario_name_problem",
]

_T = TypeVar("_T")


class CollectionUseJSON(TypedDict):
    """A :class:`CollectionUse` as a run order carries it: the file, its setup
    scenarios, the values of its context keys as the file wrote them, and their places
    (``[line, col]`` by dotted name, and ``key:`` plus the name for a key's own)."""

    file: str
    setup: list[str]
    values: dict[str, object]
    places: dict[str, list[int]]


@dataclass(frozen=True)
class CollectionUse:
    """A collection's own settings for every context its scenarios run in, and its
    setup scenarios: ``given`` holds the keys it sets, which override the config's
    (``runner.project.config.with_collection``); the others are the config's."""

    file: str
    setup: tuple[str, ...] = ()
    given: frozenset[str] = frozenset()
    viewport: tuple[int, int] | None = None
    emulation: Emulation = field(default_factory=Emulation)
    storage_state: StorageState | None = None
    values: Mapping[str, object] = field(default_factory=dict, compare=False)
    places: Places = field(default_factory=dict, compare=False)

    @classmethod
    def read(
        cls, checks: SettingChecks, data: Mapping[object, object], setup: Sequence[str] = ()
    ) -> CollectionUse:
        """The context keys of a collection's mapping ``data``, checked by ``checks``
        (an empty value is not set, as in the config)."""
        values = {key: data[key] for key in USE_KEYS if data.get(key) is not None}
        storage = values.get("storageState")
        return cls(
            file=checks.file,
            setup=tuple(setup),
            given=frozenset(values),
            viewport=checks.viewport(values["viewport"]) if "viewport" in values else None,
            emulation=checks.emulation(values),
            storage_state=None if storage is None else checks.storage_state(storage, setup),
            values=values,
            places={
                name: place
                for name, place in checks.places.items()
                if name.removeprefix("key:").split(".")[0] in USE_KEYS
            },
        )

    def to_json(self) -> CollectionUseJSON:
        return {
            "file": self.file,
            "setup": list(self.setup),
            "values": dict(self.values),
            "places": {name: list(place) for name, place in self.places.items()},
        }

    @classmethod
    def from_json(cls, data: object, root: Path) -> CollectionUse:
        """What :meth:`to_json` gave, checked again (the same sentences, should the
        values have become wrong, such as a time zone this machine does not know)."""
        if not isinstance(data, dict):
            raise ConfigError(f"a collection's settings must be a JSON object, got {show(data)}")
        file, setup = data.get("file"), data.get("setup")
        values, places = data.get("values"), data.get("places")
        if (
            not isinstance(file, str)
            or not isinstance(setup, list)
            or not all(isinstance(name, str) for name in setup)
            or not isinstance(values, dict)
            or not isinstance(places, dict)
        ):
            raise ConfigError("a collection's settings must have file, setup, values, places")
        known: Places = {}
        for name, place in places.items():
            if isinstance(place, list) and len(place) == 2 and all(type(n) is int for n in place):
                known[str(name)] = (place[0], place[1])
        return cls.read(SettingChecks(file, known, [], root), values, setup)

    def emulation_over(self, base: Emulation) -> Emulation:
        """``base`` (the config's) with this collection's keys over it, key by key, as a
        Playwright project's ``use`` spreads over the config's: a collection's
        ``device`` brings its own viewport and user agent (the config's are not used),
        unless the collection sets ``viewport`` or ``userAgent`` itself."""
        mine, given = self.emulation, self.given

        def pick(key: str, own: _T, other: _T) -> _T:
            return own if key in given else other

        if "device" in given:
            device, device_at = mine.device, mine.device_at
            viewport_given, user_agent = "viewport" in given, mine.user_agent
        else:
            device, device_at = base.device, base.device_at
            viewport_given = base.viewport_given or "viewport" in given
            user_agent = pick("userAgent", mine.user_agent, base.user_agent)
        return replace(
            base,
            device=device,
            device_at=device_at,
            viewport_given=viewport_given and device is not None,
            user_agent=user_agent,
            locale=pick("locale", mine.locale, base.locale),
            timezone_id=pick("timezoneId", mine.timezone_id, base.timezone_id),
            geolocation=pick("geolocation", mine.geolocation, base.geolocation),
            permissions=pick("permissions", mine.permissions, base.permissions),
            color_scheme=pick("colorScheme", mine.color_scheme, base.color_scheme),
            extra_http_headers=pick(
                "extraHTTPHeaders", mine.extra_http_headers, base.extra_http_headers
            ),
        )


_COLLECTION_KEYS = ("description", "setup", "scenarios", *USE_KEYS)
MAX_COLLECTION_DEPTH = 16


def scenario_name_problem(name: str) -> str | None:
    """Why ``name`` can never name a scenario (a path under unotest/e2e/), or ``None``.

    A collection entry or ``unotest e2e NAME`` with ``..``, an absolute path, a NUL or a
    control character is refused as such, instead of being looked up and "not found".
    """
    shown = show_name(name)
    if not name.strip():
        return (
            f"{shown} is empty: a scenario name is its path under unotest/e2e/ "
            "(e.g. auth/signin-flow)"
        )
    if has_control_character(name):
        return f"{shown} holds a control character or line break: it is not a scenario name"
    if name.startswith("/"):
        return (
            f"{shown} is an absolute path: a scenario name is its path under unotest/e2e/ "
            "without the .test.js suffix (e.g. auth/signin-flow)"
        )
    if any(part in ("", ".", "..") for part in name.split("/")):
        return (
            f"{shown} has an empty, '.' or '..' segment: a scenario name is its path under "
            "unotest/e2e/ (e.g. auth/signin-flow)"
        )
    return None


def _yaml_type(value: object) -> str:
    if value is None:
        return "empty (null)"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__}"


class _Refused(Exception):
    """The one problem that stops a collection file, raised where it is found."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic


class _CollectionFile:
    """One collection file being read: its lines, and where each top-level key stands,
    so that every problem points at the line that causes it."""

    def __init__(self, rel: str, source: str) -> None:
        self.rel = rel
        self.lines = source.splitlines()
        self.positions: dict[object, tuple[yaml.Node, yaml.Node]] = {}

    def refuse(self, line: int, col: int, message: str) -> _Refused:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return _Refused(Diagnostic(self.rel, line, col, message, text))

    def refuse_file(self, message: str) -> _Refused:
        """A problem of the whole file, shown without a source line."""
        return _Refused(Diagnostic(self.rel, 1, 0, message))

    def note_keys(self, node: yaml.MappingNode | None, warnings: list[str]) -> None:
        """Remember where each top-level key and value is; warn about a repeated key."""
        for key_node, value_node in node.value if node is not None else []:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            line = key_node.start_mark.line + 1
            if key in self.positions:
                first = self.positions[key][0].start_mark.line + 1
                warnings.append(
                    f"{self.rel}:{line}: key '{key}' is repeated (first at line {first}); "
                    "the last one is used"
                )
            if key is not None:
                self.positions[key] = (key_node, value_node)

    def where(self, key: str, index: int | None = None) -> tuple[int, int]:
        """Line and column of a key, or of item ``index`` of its list."""
        nodes = self.positions.get(key)
        if nodes is None:
            return 1, 0
        target: yaml.Node = nodes[0]
        if index is not None and isinstance(nodes[1], yaml.SequenceNode):
            items = nodes[1].value
            if index < len(items):
                target = items[index]
        return target.start_mark.line + 1, target.start_mark.column


class _CollectionChecks(SettingChecks):
    """The checks of the config's context keys, each problem one of the collection
    file, at its line and column, with its source line."""

    def __init__(
        self, file: _CollectionFile, node: yaml.Node | None, warnings: list[str], root: Path
    ) -> None:
        super().__init__(file.rel, places_of(node) if node is not None else {}, warnings, root)
        self.source = file

    def refused(self, place: tuple[int, int] | None, message: str) -> Exception:
        return self.source.refuse(*(place or (1, 0)), message)


def parse_collection(
    source: str,
    rel: str,
    name: str,
    errors: list[Diagnostic],
    warnings: list[str],
    root: Path,
) -> tuple[protocol.CollectionMeta, CollectionUse | None] | None:
    """``description:``, ``scenarios:``, ``setup:`` and the browser context's keys of
    one collection file: its meta, and its settings when it has any.

    Only ``yaml.safe_load``: a ``!!python/...`` tag is refused, never executed, and
    anchors are not expanded into copies (a "billion laughs" file stays small).
    """
    file = _CollectionFile(rel, source)
    try:
        node, data = _load_collection_yaml(source, file)
        file.note_keys(node, warnings)
        description, scenarios = _collection_fields(data, file, warnings)
        setup = _names(data, file, "setup")
        use = None
        if setup or any(data.get(key) is not None for key in USE_KEYS):
            use = CollectionUse.read(_CollectionChecks(file, node, warnings, root), data, setup)
    except _Refused as refused:
        errors.append(refused.diagnostic)
        return None
    for both in sorted(set(setup) & set(scenarios), key=setup.index):
        warnings.append(
            f"{rel}:{file.where('setup', setup.index(both))[0]}: scenario '{both}' is listed "
            "under both setup: and scenarios:; it runs once, as a setup scenario"
        )
    meta: protocol.CollectionMeta = {
        "name": name,
        "path": rel,
        "description": description,
        "scenarios": scenarios,
    }
    return meta, use


def _load_collection_yaml(
    source: str, file: _CollectionFile
) -> tuple[yaml.MappingNode | None, dict[object, object]]:
    """The top-level node (for positions) and the loaded mapping."""
    too_deep = yaml_flow_too_deep(source, MAX_COLLECTION_DEPTH)
    if too_deep is not None:
        raise file.refuse(
            *too_deep,
            f"invalid YAML: nested more than {MAX_COLLECTION_DEPTH} levels deep "
            "(a collection is a mapping with a list of scenario names)",
        )
    try:
        _refuse_aliases(source, file)
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.YAMLError as err:
        raise _yaml_error(err, file) from None
    except RecursionError:
        raise file.refuse_file("invalid YAML: nested too deeply") from None
    except ValueError as err:
        # int() of a number with more than 4,300 digits (sys.get_int_max_str_digits).
        reason = err.args[0].split(":")[0] if err.args else "a value is malformed"
        raise file.refuse_file(f"invalid YAML: a value cannot be read ({reason})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode | None):
        raise file.refuse_file(
            f"a collection is a mapping with 'scenarios:' (and optional 'description:'), "
            f"not {_yaml_type(data)}"
        )
    return node, data


def _refuse_aliases(source: str, file: _CollectionFile) -> None:
    """Walks the parser's events, so an alias is refused before anything is built."""
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise file.refuse(
                *_mark_position(event.start_mark),
                f"YAML aliases ('*{event.anchor}') are not allowed in a collection: "
                "write the scenario names out",
            )


def _yaml_error(err: yaml.YAMLError, file: _CollectionFile) -> _Refused:
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    tag = re.search(r"tag '([^']*)'", problem)
    if isinstance(err, yaml.constructor.ConstructorError) and tag is not None:
        shown = re.sub(r"\Atag:yaml\.org,2002:", "!!", tag.group(1))
        problem = f"the tag '{shown}' is not allowed (a collection is plain YAML)"
    return file.refuse(*_mark_position(mark), f"invalid YAML: {problem}")


class _Mark(Protocol):
    """PyYAML's marks: the pure-Python and the libyaml one have the same fields."""

    line: int
    column: int


def _mark_position(mark: _Mark | None) -> tuple[int, int]:
    return (mark.line + 1, mark.column) if mark is not None else (1, 0)


def _collection_fields(
    data: dict[object, object], file: _CollectionFile, warnings: list[str]
) -> tuple[str | None, list[str]]:
    """The description and scenario names, each checked for its type."""
    for key in data:
        if key not in _COLLECTION_KEYS:
            line, _ = file.where(str(key))
            hint = did_you_mean(key, _COLLECTION_KEYS) if isinstance(key, str) else ""
            warnings.append(
                f"{file.rel}:{line}: unknown key '{key}' is ignored"
                f"{hint or ' (known: ' + ', '.join(_COLLECTION_KEYS) + ')'}"
            )
    description = data.get("description")
    if description is not None and not isinstance(description, str):
        raise file.refuse(
            *file.where("description"),
            f"'description' must be a string, not {_yaml_type(description)}",
        )
    return description, _names(data, file, "scenarios")


def _names(data: dict[object, object], file: _CollectionFile, key: str) -> list[str]:
    """The scenario names listed under ``key`` (``scenarios`` or ``setup``), each
    checked to be one; none when the key is absent or empty."""
    names = data.get(key)
    if names is None:
        return []
    if not isinstance(names, list):
        raise file.refuse(
            *file.where(key), f"'{key}' must be a list of scenario names, not {_yaml_type(names)}"
        )
    for i, item in enumerate(names):
        if not isinstance(item, str):
            raise file.refuse(
                *file.where(key, i),
                f"'{key}' item {i + 1} must be a scenario name (a string), not {_yaml_type(item)}",
            )
        reason = scenario_name_problem(item)
        if reason is not None:
            raise file.refuse(*file.where(key, i), f"'{key}' item {i + 1} {reason}")
    return list(names)
