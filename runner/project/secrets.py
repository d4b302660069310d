"""Secrets: which values are secret, and masking them in everything unotest writes.

The value of every ``unotest/.env`` key, and of every process variable a
scenario reads with ``env()``, whose name looks like a credential
(:func:`runner.protocol.is_secret_name`) never appears in steps.jsonl, runtime.json,
stdout/stderr, error messages or failure bundles; it becomes ``********``, and so do
its Base64 and URL-encoded forms (a token in a query string, a Basic auth header).

:class:`SecretMasker` holds the values and masks text with one compiled regex.
:class:`RunEnvironment` is what ``env()`` reads: the process environment first, then
``unotest/.env``; reading a secret-named variable registers its value.
The masker is shared by the interpreter thread and the artifact writer, so adding
values and (re)compiling happen under a lock; masking itself uses a compiled pattern
snapshot and needs none.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import cast
from urllib.parse import quote, quote_plus

from dotenv import dotenv_values
from dotenv.parser import parse_stream

from runner import protocol
from runner.events import RunError
from runner.protocol import is_secret_name

__all__ = [
    "MASK",
    "MASK_MARGIN",
    "MIN_SECRET_LENGTH",
    "EnvSecrets",
    "RunEnvironment",
    "SecretMasker",
    "cut_masked",
    "env_file_warnings",
    "project_masker",
]

MASK = "********"
MIN_SECRET_LENGTH = 4
"""Shorter values are not masked: hiding every ``a`` or ``on`` would hide the logs."""

MIN_EMBEDDED_BASE64 = 6
"""Shortest Base64 fragment registered for a secret embedded in a longer encoded text."""

MAX_DOTENV_BYTES = 1024 * 1024

MASK_MARGIN = 16_384
"""Characters kept past a cut while masking (:func:`cut_masked`), so a secret that
straddles the cut is still whole when the masker sees it: any encoded form up to this
long (a PEM private key, Base64-encoded, is about 2-4 KB)."""

# JavaScript's encoders leave these unescaped (Python's quote escapes all but "_.-~").
_ENCODE_URI_COMPONENT_SAFE = "!'()*"
_ENCODE_URI_SAFE = ";,/?:@&=+$#!'()*"
_PERCENT_ESCAPE = re.compile(r"%[0-9A-F]{2}")
# What a browser itself escapes when it canonicalises a URL (the WHATWG URL Standard's
# percent-encode sets, beyond C0 controls, space and non-ASCII): a secret in a query
# string that a scenario navigates to comes back from Chromium as page.url, a request
# URL or a link in the page in one of these forms, e.g. ``a%20b'c`` → ``a%20b%27c`` in a
# query (special-query set) while encodeURI would leave the ``'`` alone.
_WHATWG_SETS = (
    '"<>`',  # fragment
    '"#<>',  # query
    "\"#<>'",  # special-query (http, https, ...)
    '"#<>?`{}',  # path
    '"#<>?`{}^',  # path (newer revisions of the standard)
    '"#<>?`{}^|',  # path as some engines escape it
    '"#<>?`{}/:;=@[\\]^|',  # userinfo
    '"#<>?`{}/:;=@[\\]^|$%&+,',  # component
)


def _base64_forms(raw: bytes) -> set[str]:
    """The value Base64-encoded, alone and inside a longer encoded text.

    Alone: standard and URL-safe alphabets, with and without ``=`` padding. Inside a
    longer text (``user:password`` in a Basic auth header) the encoding of the value
    depends on how many bytes precede it modulo 3, and its first and last characters
    mix with the neighbours' bits; the characters that depend only on the value are
    registered for each of the three alignments.
    """
    forms: set[str] = set()
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        padded = encode(raw).decode("ascii")
        forms.add(padded)
        forms.add(padded.rstrip("="))
        for shift in range(3):
            encoded = encode(b"\0" * shift + raw).decode("ascii")
            first = -(-8 * shift // 6)  # the first character made of the value's bits only
            last = 8 * (shift + len(raw)) // 6  # one past the last such character
            core = encoded[first:last]
            if len(core) >= MIN_EMBEDDED_BASE64:
                forms.add(core)
    return forms


def _percent_encode(value: str, escaped: str) -> str:
    """``value`` with C0 controls, space, DEL, non-ASCII and ``escaped`` percent-encoded."""
    out: list[str] = []
    for char in value:
        if char <= " " or char >= "\x7f" or char in escaped:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
        else:
            out.append(char)
    return "".join(out)


def _url_forms(value: str) -> set[str]:
    """Percent-encoded forms: Python's quote/quote_plus, JavaScript's encoders and the
    forms a browser writes when it canonicalises a URL (:data:`_WHATWG_SETS`)."""
    forms = {_percent_encode(value, escaped) for escaped in _WHATWG_SETS}
    forms |= {
        quote(value, safe=""),
        quote_plus(value),
        quote(value, safe="/"),
        quote(value, safe=_ENCODE_URI_COMPONENT_SAFE),  # encodeURIComponent
        quote(value, safe=_ENCODE_URI_SAFE),  # encodeURI
        quote_plus(value, safe="*"),  # URLSearchParams / HTML forms
    }
    # Some encoders write the hexadecimal digits in lower case (%2f).
    forms |= {_PERCENT_ESCAPE.sub(lambda m: m.group(0).lower(), form) for form in forms}
    return forms


def _json_forms(value: str) -> set[str]:
    """The value as it appears inside a JSON string (quotes, backslashes, non-ASCII)."""
    return {json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}


def encoded_forms(value: str) -> set[str]:
    """Every form of ``value`` that is masked, the raw value included."""
    forms = {value}
    forms |= _base64_forms(value.encode("utf-8"))
    forms |= _url_forms(value)
    forms |= _json_forms(value)
    return {form for form in forms if form == value or len(form) >= MIN_SECRET_LENGTH}


def cut_masked(
    text: str, limit: int, mask: Callable[[str], str] | None, *, truncated: bool = False
) -> str:
    """``text`` masked, *then* cut to ``limit`` characters (the last one ``…``).

    Every bounded value (a 4 KB variable, a 200-character step text, a console message)
    goes through here. In this order: cutting first would leave the start of a secret
    that straddles the cut (``s3cr3t-T0…``), which no masker recognises afterwards.

    Only a head of the text is masked, so a 1 MB value costs a small scan: masking can
    shrink the head (each secret becomes 8 characters), so the head grows until its
    masked form still reaches :data:`MASK_MARGIN` past ``limit``; then whatever secret
    straddles the head's end starts beyond the cut. ``truncated`` says ``text`` is
    itself the head of something longer (a recorder keeps only so much): then its last
    :data:`MASK_MARGIN` masked characters are never kept, for the same reason.
    """
    end = len(text) if len(text) <= limit else limit + MASK_MARGIN
    while True:
        masked = mask(text[:end]) if mask is not None else text[:end]
        whole = end >= len(text)
        if whole or len(masked) >= limit + MASK_MARGIN:
            break
        end *= 4
    if whole and not truncated:
        return masked if len(masked) <= limit else masked[: limit - 1] + "…"
    # The head ends inside the original: its tail may hold the start of a secret.
    keep = min(limit - 1, len(masked) - (MASK_MARGIN if mask is not None else 0))
    return masked[: max(keep, 0)] + "…"


class SecretMasker:
    """Replaces every registered secret, and its encoded forms, with :data:`MASK`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: dict[str, None] = {}  # insertion-ordered set of raw values
        self._forms: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._dirty = False

    def add(self, value: str) -> None:
        """Register a secret value; values shorter than 4 characters are ignored."""
        if not isinstance(value, str) or len(value) < MIN_SECRET_LENGTH:
            return
        with self._lock:
            if value in self._values:
                return
            self._values[value] = None
            new = encoded_forms(value) - self._forms
            if new:
                self._forms |= new
                self._dirty = True

    @property
    def values(self) -> tuple[str, ...]:
        """The registered secret values, in the order they were added."""
        with self._lock:
            return tuple(self._values)

    @property
    def forms(self) -> frozenset[str]:
        """Every string that is masked: the values and their encoded forms."""
        with self._lock:
            return frozenset(self._forms)

    def __bool__(self) -> bool:
        return bool(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def _compiled(self) -> re.Pattern[str] | None:
        with self._lock:
            if self._dirty:
                # Longest first, so that at any position the longest form wins.
                ordered = sorted(self._forms, key=lambda form: (-len(form), form))
                self._pattern = re.compile("|".join(map(re.escape, ordered)))
                self._dirty = False
            return self._pattern

    def mask(self, text: str) -> str:
        """``text`` with every registered form replaced by :data:`MASK`.

        Overlapping occurrences (two secrets sharing characters, or one secret's
        encoded form overlapping another) become a single mask covering both, so no
        fragment of either survives. Without secrets, or without a match, ``text`` is
        returned as it is.
        """
        pattern = self._compiled()
        if pattern is None:
            return text
        found = pattern.search(text)
        if found is None:
            return text
        parts: list[str] = []
        done = 0
        while found is not None:
            start, end = found.span()
            # Extend over occurrences that start inside this one and end beyond it.
            position = start + 1
            while position < end:
                inner = pattern.match(text, position)
                if inner is not None and inner.end() > end:
                    end = inner.end()
                position += 1
            parts.append(text[done:start])
            parts.append(MASK)
            done = end
            found = pattern.search(text, end)
        parts.append(text[done:])
        return "".join(parts)

    def mask_error(self, error: RunError) -> RunError:
        """A run's error record with every string in it masked."""
        return cast(RunError, self.mask_data(error))

    def mask_data(self, data: object) -> object:
        """JSON-like ``data`` with every string masked, dict keys included.

        Dicts, lists and tuples are copied; other values are returned as they are.
        A container that contains itself is written ``"[Circular]"``.
        """
        if not self:
            return data
        return self._mask_data(data, set())

    def _mask_data(self, data: object, active: set[int]) -> object:
        if isinstance(data, str):
            return self.mask(data)
        if not isinstance(data, dict | list | tuple):
            return data
        if id(data) in active:
            return "[Circular]"
        active.add(id(data))
        try:
            if isinstance(data, dict):
                return {
                    self.mask(key) if isinstance(key, str) else key: self._mask_data(value, active)
                    for key, value in data.items()
                }
            items = [self._mask_data(item, active) for item in data]
            return items if isinstance(data, list) else tuple(items)
        finally:
            active.discard(id(data))


class _DropDotenvWarnings(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return False


@contextmanager
def _quiet_dotenv() -> Iterator[None]:
    """python-dotenv logs unparsable lines itself; :class:`RunEnvironment` reports them."""
    logger = logging.getLogger("dotenv.main")
    quiet = _DropDotenvWarnings()
    logger.addFilter(quiet)
    try:
        yield
    finally:
        logger.removeFilter(quiet)


class RunEnvironment:
    """What ``env(name)`` reads: the process environment first, then ``unotest/.env``.

    Every ``.env`` key with a secret-looking name is registered in the masker as soon
    as the file is loaded; a process variable only when a scenario reads it, so the
    whole environment of the shell is not masked (nor its ``PWD``).
    """

    def __init__(
        self, process_env: Mapping[str, str], dotenv_path: Path, masker: SecretMasker
    ) -> None:
        self._process = process_env
        self._masker = masker
        self._label = f"{dotenv_path.parent.name}/{dotenv_path.name}"
        self.warnings: list[str] = []
        self._secret_names: dict[str, None] = {}
        self.dotenv: dict[str, str] = self._load(dotenv_path)
        for name, value in self.dotenv.items():
            if is_secret_name(name):
                self._secret_names[name] = None
                masker.add(value)

    @classmethod
    def of_project(
        cls, root: Path, masker: SecretMasker, process_env: Mapping[str, str] | None = None
    ) -> RunEnvironment:
        """A run's environment in project ``root``: this process's variables (a copy,
        taken now) over the project's ``unotest/.env``."""
        environ = dict(os.environ) if process_env is None else process_env
        return cls(environ, root / protocol.ENV_FILE, masker)

    def _load(self, path: Path) -> dict[str, str]:
        try:
            if not path.exists():
                return {}
            if not path.is_file():
                self.warnings.append(f"{self._label}: not a regular file; ignored")
                return {}
            size = path.stat().st_size
            if size > MAX_DOTENV_BYTES:
                self.warnings.append(
                    f"{self._label}: the file is {size:,} bytes (at most "
                    f"{MAX_DOTENV_BYTES:,}); ignored"
                )
                return {}
            raw = path.read_bytes()
        except OSError as err:
            self.warnings.append(f"{self._label}: cannot read the file ({err.strerror}); ignored")
            return {}
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            line = raw.count(b"\n", 0, err.start) + 1
            self.warnings.append(
                f"{self._label}:{line}: the file is not UTF-8 text; ignored (save it as UTF-8)"
            )
            return {}
        # Line numbers for what python-dotenv skips (never the line itself: it may
        # hold a secret).
        for binding in parse_stream(io.StringIO(text)):
            line = binding.original.line
            if binding.error:
                self.warnings.append(f"{self._label}:{line}: not a NAME=value line; ignored")
            elif binding.key is not None and binding.value is None:
                self.warnings.append(
                    f"{self._label}:{line}: '{binding.key}' has no '=value'; ignored"
                )
        with _quiet_dotenv():
            values = dotenv_values(stream=io.StringIO(text), interpolate=False)
        return {name: value for name, value in values.items() if value is not None}

    def get(self, name: str) -> str | None:
        """The variable's value, or None; a secret-named value is registered for masking."""
        value = self._process.get(name)
        if value is None:
            value = self.dotenv.get(name)
        if value is not None and is_secret_name(name):
            self._secret_names.setdefault(name, None)
            self._masker.add(value)
        return value

    def secret_names(self) -> list[str]:
        """Names whose values are masked: secret ``.env`` keys and secrets read so far."""
        return sorted(self._secret_names)


def project_masker(root: Path) -> SecretMasker:
    """The secrets of project ``root`` (its ``unotest/.env``), for what quotes text a
    run did not make itself (a webServer's output) outside a run's own masker."""
    masker = SecretMasker()
    RunEnvironment.of_project(root, masker)
    return masker


class EnvSecrets:
    """The masker of project ``root``'s ``unotest/.env`` secrets alone (not the process's
    environment: a viewer's is not its runs'), read again only when the file changed:
    what a viewer masks a run's files and logs with when it serves them (runs are masked
    when written; this is the second lock). Safe from any thread: two that see the file
    change at once both read it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._read: tuple[tuple[int, int] | None, SecretMasker] | None = None

    def masker(self) -> SecretMasker:
        try:
            stat = os.stat(self.root / protocol.ENV_FILE)
            stamp: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            stamp = None
        read = self._read
        if read is None or read[0] != stamp:
            masker = SecretMasker()
            RunEnvironment.of_project(self.root, masker, {})
            read = self._read = (stamp, masker)
        return read[1]


def env_file_warnings(root: Path) -> list[str]:
    """What a run of project ``root`` will warn about its ``unotest/.env`` (lines that
    are not NAME=value, names without '=value', an unreadable file), for ``unotest
    check`` and ``unotest doctor`` to say before any run."""
    return RunEnvironment.of_project(root, SecretMasker(), process_env={}).warnings
