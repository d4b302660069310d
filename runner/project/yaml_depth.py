"""A guard run on YAML text before PyYAML sees it (the config, collection files).

Apart from :mod:`runner.project.index` (which re-exports it) so that the config reader
does not import the parser: standard library only.
"""

from __future__ import annotations

__all__ = ["yaml_flow_too_deep"]


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
