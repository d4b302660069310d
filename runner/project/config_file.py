"""Reading ``unotest.config.yaml`` safely, before anything of it is validated.

The file is plain data: it is read with ``yaml.safe_load`` only, and anchors, aliases
and explicit tags (``!!python/...``) are refused before anything is constructed, so a
"billion laughs" file cannot blow up memory and no tag can run code. Its size, its
encoding and its nesting are bounded first; every setting's place in the file is kept
(:data:`Places`) so that a message about it names its line and column. The nesting
guard (:func:`yaml_flow_too_deep`) guards collection files too: standard library only,
so neither reader imports the parser.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import yaml

from runner.errors import ConfigError
from runner.project.root import CONFIG_FILE

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_YAML_DEPTH",
    "Places",
    "fail",
    "places_of",
    "read_yaml",
    "show",
    "yaml_flow_too_deep",
]

MAX_CONFIG_BYTES = 1024 * 1024
MAX_YAML_DEPTH = 32


def fail(message: str) -> NoReturn:
    raise ConfigError(f"{CONFIG_FILE}: {message}")


Places = dict[str, tuple[int, int]]
"""Where each setting is written, by its dotted name (``timeout.expect``), and under
``key:`` plus that name where its key is: line 1-based, column 0-based."""


def read_yaml(path: Path, warnings: list[str], places: Places) -> dict[object, object]:
    try:
        if not path.is_file():
            fail("not a regular file; the configuration is a YAML file")
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            fail(f"the file is {size:,} bytes; a configuration may be {MAX_CONFIG_BYTES:,}")
        raw = path.read_bytes()
    except OSError as err:
        fail(f"cannot read the file: {err.strerror or err}")
    try:
        source = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        fail(
            f"the file is not UTF-8 text (byte 0x{raw[err.start]:02x} on line {line}): "
            "save it as UTF-8"
        )
    if "\0" in source:
        fail("this is a binary file; the configuration is UTF-8 YAML text")

    too_deep = yaml_flow_too_deep(source, MAX_YAML_DEPTH)
    if too_deep is not None:
        line, col = too_deep
        raise ConfigError(f"{CONFIG_FILE}:{line}:{col}: the configuration is nested too deeply")
    try:
        _refuse_unsafe_yaml(source)
        node = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
        where = f":{mark.line + 1}:{mark.column}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{CONFIG_FILE}{where}: invalid YAML: {problem}") from None
    except RecursionError:
        fail("invalid YAML: nested too deeply")
    except ValueError as err:
        # int() of a number with more than 4,300 digits (sys.get_int_max_str_digits).
        fail(f"invalid YAML: a value cannot be read ({err.args[0].split(':')[0]})")

    if node is not None:
        _warn_repeated_keys(node, "", warnings)
        places.update(places_of(node))
    if data is None:
        return {}
    if not isinstance(data, dict):
        fail(f"the configuration must be a mapping of settings (key: value), got {show(data)}")
    return data


def _refuse_unsafe_yaml(source: str) -> None:
    """Refuse anchors, aliases, explicit tags and deep nesting before constructing.

    Walks the parser's event stream, so nothing is built: a billion-laughs file stops
    at its first anchor and a ``!!python/object/apply`` tag is never resolved.
    """
    depth = 0
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        mark = event.start_mark
        at = f"{CONFIG_FILE}:{mark.line + 1}:{mark.column}" if mark else CONFIG_FILE
        if isinstance(event, yaml.AliasEvent):
            raise ConfigError(
                f"{at}: YAML aliases ('*{event.anchor}') are not allowed in the "
                "configuration: write the value out"
            )
        if isinstance(event, yaml.NodeEvent) and event.anchor is not None:
            raise ConfigError(
                f"{at}: YAML anchors ('&{event.anchor}') are not allowed in the "
                "configuration: write the value out"
            )
        # The parser reports a tag only where the file writes one (`!!str`, `!foo`).
        tag = getattr(event, "tag", None)
        if isinstance(event, yaml.ScalarEvent | yaml.CollectionStartEvent) and tag:
            shown = tag.replace("tag:yaml.org,2002:", "!!")
            raise ConfigError(
                f"{at}: the YAML tag '{shown}' is not allowed in the configuration "
                "(it is plain YAML)"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise ConfigError(f"{at}: the configuration is nested too deeply")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _warn_repeated_keys(node: yaml.Node, prefix: str, warnings: list[str]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = str(key_node.value)
            line = key_node.start_mark.line + 1
            if key in seen:
                warnings.append(
                    f"{CONFIG_FILE}:{line}: key '{prefix}{key}' is repeated (first at line "
                    f"{seen[key]}); the last one is used"
                )
            seen[key] = line
            _warn_repeated_keys(value_node, f"{prefix}{key}.", warnings)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _warn_repeated_keys(item, prefix, warnings)


def places_of(node: yaml.Node, prefix: str = "") -> Places:
    """Every setting's place in the file, so that a message can point at it (the last
    of a repeated key, as the loaded value is); a collection file's too."""
    found: Places = {}
    if not isinstance(node, yaml.MappingNode):
        return found
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            continue
        name = f"{prefix}{key_node.value}"
        found[f"key:{name}"] = (key_node.start_mark.line + 1, key_node.start_mark.column)
        found[name] = (value_node.start_mark.line + 1, value_node.start_mark.column)
        found.update(places_of(value_node, f"{name}."))
        if isinstance(value_node, yaml.SequenceNode):
            # A list's items as `name[i]` (and their keys): `wsEndpoint[1].capacity`.
            for position, item in enumerate(value_node.value):
                found[f"{name}[{position}]"] = (item.start_mark.line + 1, item.start_mark.column)
                found.update(places_of(item, f"{name}[{position}]."))
    return found


def show(value: object) -> str:
    """A value as the message shows it: strings quoted, YAML words for the rest."""
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        text = value if len(value) <= 60 else value[:57] + "..."
        return json.dumps(text, ensure_ascii=False)
    if isinstance(value, int) and abs(value).bit_length() > 64:
        # repr() of an int with more than 4300 digits raises ValueError.
        return f"a number of about {int(abs(value).bit_length() * 0.30103) + 1} digits"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return f"a {type(value).__name__} ({str(value)[:40]})"


def yaml_flow_too_deep(source: str, limit: int) -> tuple[int, int] | None:
    """Line (1-based) and column (0-based) of the first ``[``/``{`` nested deeper than
    ``limit``, or ``None``; one linear pass over the text, before any YAML parsing.

    PyYAML's scanner is cubic in the nesting of flow collections (it keeps a possible
    simple key per level and looks up to 1,024 characters ahead): 1,000 levels of
    ``[`` take ten seconds and 10,000 would take hours, before the parser emits the
    event where a depth check could stop it. Quoted scalars and comments are skipped;
    a quote opens a scalar only where a token can start, as in YAML.
    """
    depth = 0
    line = 1
    line_start = 0
    quote = ""
    i = 0
    n = len(source)
    while i < n:
        ch = source[i]
        if ch == "\n":
            line += 1
            line_start = i + 1
        elif quote:
            if ch == "\\" and quote == '"':
                i += 1
            elif ch == quote:
                quote = ""
        elif ch == "#" and (i == 0 or source[i - 1] in " \t\n"):
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        elif ch in "'\"" and (i == 0 or source[i - 1] in " \t\n[{,:-?"):
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line, i - line_start
        elif ch in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None
