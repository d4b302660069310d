"""The scenario language's syntax tree.

The parser converts Lark's output into these frozen, slotted dataclasses at the
parse boundary, so nothing downstream (interpreter, static checker, debugger) ever
sees a Lark type, and a tree can be shared between threads without copying.

Every node carries a :class:`Span`: line 1-based, column 0-based (as the protocol's
``step:started`` event wants them), plus character offsets into the file's source so
that the statement text of a step can be sliced out without keeping tokens around.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeAlias


@dataclass(frozen=True)
class _SpanFields:
    """The fields of :class:`Span`, declared once so that ``dataclasses`` sees them."""

    line: int
    col: int
    end_line: int
    end_col: int
    start: int
    end: int


class Span(tuple[int, int, int, int, int, int]):
    """Where a node sits in its file; ``end_col`` and ``end`` are exclusive.

    A tuple underneath, because the parser makes one per node (tens of thousands a
    file): ``tuple.__new__(Span, (line, col, end_line, end_col, start, end))`` runs in
    C, a third of what a slotted dataclass's ``__init__`` costs. Otherwise it is the
    frozen dataclass it was: the same fields by name, immutable, equal (and hashing
    equal) only to a ``Span`` with the same fields, and ``dataclasses.fields``,
    ``replace``, ``asdict``, copying and pickling work on it.
    """

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]] = _SpanFields.__dataclass_fields__
    __dataclass_params__ = _SpanFields.__dataclass_params__  # type: ignore[attr-defined]
    __match_args__ = ("line", "col", "end_line", "end_col", "start", "end")

    if TYPE_CHECKING:  # read-only fields, as the frozen dataclass's were

        @property
        def line(self) -> int: ...
        @property
        def col(self) -> int: ...
        @property
        def end_line(self) -> int: ...
        @property
        def end_col(self) -> int: ...
        @property
        def start(self) -> int: ...
        @property
        def end(self) -> int: ...

    else:
        line = property(itemgetter(0), doc="1-based")
        col = property(itemgetter(1), doc="0-based")
        end_line = property(itemgetter(2))
        end_col = property(itemgetter(3), doc="exclusive")
        start = property(itemgetter(4), doc="offset in the source")
        end = property(itemgetter(5), doc="offset in the source, exclusive")

    def __new__(
        cls, line: int, col: int, end_line: int, end_col: int, start: int, end: int
    ) -> Span:
        return tuple.__new__(cls, (line, col, end_line, end_col, start, end))

    def __getnewargs__(self) -> tuple[int, int, int, int, int, int]:
        return tuple(self)  # type: ignore[return-value]

    def __eq__(self, other: object) -> bool:
        # Not NotImplemented for another type: a plain tuple would then compare itself.
        return other.__class__ is Span and tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = tuple.__hash__  # what the frozen dataclass's hash was: its fields' tuple

    def __repr__(self) -> str:
        line, col, end_line, end_col, start, end = self
        return (
            f"Span(line={line}, col={col}, end_line={end_line}, end_col={end_col}, "
            f"start={start}, end={end})"
        )

    def cover(self, other: Span) -> Span:
        """The smallest span that holds both, for nodes built from two ends."""
        return tuple.__new__(Span, (self[0], self[1], other[2], other[3], self[4], other[5]))


# --- expressions -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NumberLit:
    value: float
    span: Span


@dataclass(frozen=True, slots=True)
class StringLit:
    value: str
    span: Span


@dataclass(frozen=True, slots=True)
class BoolLit:
    value: bool
    span: Span


@dataclass(frozen=True, slots=True)
class NullLit:
    span: Span


@dataclass(frozen=True, slots=True)
class TemplateLit:
    """``quasis`` has one more element than ``exprs``: text, expr, text, ..., text."""

    quasis: tuple[str, ...]
    exprs: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RegexLit:
    """A regex literal, already translated to Python ``re`` at parse time."""

    source: str
    flags: str
    pattern: re.Pattern[str]
    span: Span


@dataclass(frozen=True, slots=True)
class ArrayLit:
    elements: tuple[Expr, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Property:
    key: str
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ObjectLit:
    properties: tuple[Property, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Identifier:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class Member:
    """``obj.name``; ``name_span`` places errors such as an unknown method."""

    obj: Expr
    name: str
    name_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class Index:
    obj: Expr
    index: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    callee: Expr
    args: tuple[Expr, ...]
    span: Span


UnaryOp: TypeAlias = Literal["!", "-", "+"]
BinaryOp: TypeAlias = Literal[
    "*", "/", "%", "+", "-", "<", "<=", ">", ">=", "==", "!=", "===", "!=="
]
LogicalOp: TypeAlias = Literal["&&", "||", "??"]


@dataclass(frozen=True, slots=True)
class Unary:
    op: UnaryOp
    operand: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    """``op_span`` lets a type error point at the operator, as a JS engine would."""

    op: BinaryOp
    left: Expr
    right: Expr
    op_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class Logical:
    op: LogicalOp
    left: Expr
    right: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Conditional:
    test: Expr
    consequent: Expr
    alternate: Expr
    span: Span


Expr: TypeAlias = (
    NumberLit
    | StringLit
    | BoolLit
    | NullLit
    | TemplateLit
    | RegexLit
    | ArrayLit
    | ObjectLit
    | Identifier
    | Member
    | Index
    | Call
    | Unary
    | Binary
    | Logical
    | Conditional
)

# --- statements --------------------------------------------------------------------
#
# Every statement except Block is a step. ``header_end`` is the offset where a compound
# statement's header stops (``if (c)``, ``for (const x of e)``, ``while (c)``, ``try``),
# because the protocol's step text for those is the header, not the whole body.


@dataclass(frozen=True, slots=True)
class Block:
    body: tuple[Stmt, ...]
    span: Span


DeclKind: TypeAlias = Literal["let", "const"]


@dataclass(frozen=True, slots=True)
class VarDecl:
    kind: DeclKind
    name: str
    init: Expr | None
    span: Span


AssignOp: TypeAlias = Literal["=", "+=", "-=", "*=", "/=", "%="]


@dataclass(frozen=True, slots=True)
class Assign:
    target: Identifier | Member | Index
    op: AssignOp
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class If:
    test: Expr
    consequent: Block
    alternate: Block | If | None
    header_end: int
    span: Span


@dataclass(frozen=True, slots=True)
class ForOf:
    kind: DeclKind
    name: str
    iterable: Expr
    body: Block
    header_end: int
    span: Span


@dataclass(frozen=True, slots=True)
class While:
    test: Expr
    body: Block
    header_end: int
    span: Span


@dataclass(frozen=True, slots=True)
class Break:
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    span: Span


@dataclass(frozen=True, slots=True)
class Return:
    value: Expr | None
    span: Span


@dataclass(frozen=True, slots=True)
class Throw:
    value: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Try:
    block: Block
    param: str | None
    handler: Block | None
    finalizer: Block | None
    header_end: int
    span: Span


Stmt: TypeAlias = (
    VarDecl | Assign | ExprStmt | If | ForOf | While | Break | Continue | Return | Throw | Try
)
COMPOUND_STATEMENTS = (If, ForOf, While, Try)


@dataclass(frozen=True, slots=True)
class FunctionDecl:
    name: str
    params: tuple[str, ...]
    body: Block
    name_span: Span
    span: Span


@dataclass(frozen=True, slots=True)
class Program:
    """One parsed file: its functions in source order, and the source for step texts.

    ``consts`` are the file's top-level ``const`` declarations (only helper files may
    keep them: :mod:`dsl.scenario` says so); they are not steps.
    """

    file: str
    source: str
    functions: tuple[FunctionDecl, ...]
    consts: tuple[VarDecl, ...] = ()

    def statement_text(self, stmt: Stmt, limit: int = 200) -> str:
        """The text a step shows: the header for compound statements, cut to ``limit``."""
        end = stmt.header_end if isinstance(stmt, COMPOUND_STATEMENTS) else stmt.span.end
        text = self.source[stmt.span.start : end]
        return text if len(text) <= limit else text[: limit - 1] + "…"


# --- construction ------------------------------------------------------------------


def _fast_init(cls: type) -> None:
    """Give a frozen, slotted node class a quicker ``__init__`` with the same signature.

    A frozen dataclass's own ``__init__`` sets each field with ``object.__setattr__``
    (looked up and called per field); a file makes thousands of nodes and spans, and
    that was a fifth of a parse. This one calls each slot's own setter, which is what
    ``object.__setattr__`` ends up doing: the instance is the same, and stays frozen
    (``__setattr__`` still refuses), slotted, comparable and ``replace``-able.
    """
    names = [f.name for f in dataclasses.fields(cls)]
    namespace: dict[str, object] = {f"_set_{name}": getattr(cls, name).__set__ for name in names}
    params = []
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            namespace[f"_default_{f.name}"] = f.default
            params.append(f"{f.name}=_default_{f.name}")
        else:
            params.append(f.name)
    body = "\n    ".join(f"_set_{name}(self, {name})" for name in names)
    exec(f"def __init__(self, {', '.join(params)}):\n    {body}\n", namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"  # type: ignore[attr-defined]
    setattr(cls, "__init__", init)  # noqa: B010


for _node in list(globals().values()):
    if (
        isinstance(_node, type)
        and dataclasses.is_dataclass(_node)
        and _node.__module__ == __name__
        and _node not in (Span, _SpanFields)
    ):
        _fast_init(_node)
