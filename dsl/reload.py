"""Edit and continue: where a running frame stands in the edited version of its file.

``reload`` (issue 16) swaps the code under a paused run. Nothing here runs code: it
compares two parsed versions of a file and answers, for every statement of the old
one, which statement of the new one it became, and for each frame on the call stack
(given as its function and the statement index of every block it is inside), the
blocks and indexes to continue from. The interpreter applies that plan
(:meth:`dsl.interpreter.Interpreter.reload`).

How statements are matched: within one block, the old and new statement lists are
aligned as sequences of their source text with whitespace collapsed (difflib's
matching blocks: what is unchanged keeps its place, statements inserted or removed
around it shift the indexes); within a changed run of statements, a statement pairs
with the most similar one of the same kind (the edited one). A compound statement
whose body changed pairs that way too, and its blocks are then aligned the same way,
recursively.

When a frame cannot be mapped, nothing may change: a loop that holds the pause must
keep its header where iteration state depends on it (``for...of``: the binding and
the iterable), a ``try`` its ``catch``/``finally`` shape, and each block on the way to
the current statement must still exist. :class:`ReloadError` says which and where.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from dsl import ast
from dsl.errors import DslError

__all__ = [
    "FramePlan",
    "FramePosition",
    "ReloadError",
    "StatementMap",
    "changed_functions",
    "map_frame",
    "map_program",
    "normalised",
    "statements",
]

MAX_PAIRING_CELLS = 2500
"""Above this many old × new statements in one changed run, pair by kind and order
only (a similarity matrix of a rewritten 500-line function would cost seconds)."""
_MIN_SIMILARITY = 0.5
"""Two simple statements of different kinds pair only when their text is this close."""


class ReloadError(DslError):
    """A frame's position has no place in the edited file; the reload changes nothing."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class FramePosition:
    """One frame as it stands: its function, the ``(block, index)`` of every block it
    is inside (the function's body first), and the statement it is at (the statement
    at the last index, or an ``else if`` reached from it)."""

    fn: str
    program: ast.Program
    blocks: tuple[tuple[ast.Block, int], ...]
    stmt: ast.Stmt


@dataclass(frozen=True, slots=True)
class FramePlan:
    """Where the frame goes on: the same shape as :class:`FramePosition`, in the new
    program, and how many statements were inserted above its position (never run)."""

    program: ast.Program
    blocks: tuple[tuple[ast.Block, int], ...]
    stmt: ast.Stmt
    skipped: int


def normalised(program: ast.Program, node: ast.Stmt | ast.Block) -> str:
    """The node's source text with every run of whitespace made one space: what
    decides that a statement is unchanged."""
    return " ".join(program.source[node.span.start : node.span.end].split())


def _header(program: ast.Program, stmt: ast.Stmt) -> str:
    if isinstance(stmt, ast.COMPOUND_STATEMENTS):
        return " ".join(program.source[stmt.span.start : stmt.header_end].split())
    return normalised(program, stmt)


class StatementMap:
    """Old statement → new statement for one file (by identity), and which new
    statements are the image of an old one (the others are new code)."""

    def __init__(self, old: ast.Program, new: ast.Program) -> None:
        self.old = old
        self.new = new
        self._to_new: dict[int, ast.Stmt] = {}
        self._images: set[int] = set()
        new_functions = {fn.name: fn for fn in new.functions}
        for fn in old.functions:
            twin = new_functions.get(fn.name)
            if twin is not None:
                self._blocks(fn.body, twin.body)

    def get(self, stmt: ast.Stmt) -> ast.Stmt | None:
        return self._to_new.get(id(stmt))

    def is_new(self, stmt: ast.Stmt) -> bool:
        """Whether ``stmt`` (of the new program) has no old statement behind it."""
        return id(stmt) not in self._images

    # --- alignment ------------------------------------------------------------------

    def _pair(self, old: ast.Stmt, new: ast.Stmt) -> None:
        self._to_new[id(old)] = new
        self._images.add(id(new))
        for old_block, new_block in _child_blocks(old, new):
            self._blocks(old_block, new_block)
        if (
            isinstance(old, ast.If)
            and isinstance(new, ast.If)
            and isinstance(old.alternate, ast.If)
            and isinstance(new.alternate, ast.If)
        ):
            self._pair(old.alternate, new.alternate)

    def _blocks(self, old: ast.Block, new: ast.Block) -> None:
        for i, j in _align(self.old, old.body, self.new, new.body):
            self._pair(old.body[i], new.body[j])


def _child_blocks(old: ast.Stmt, new: ast.Stmt) -> Iterator[tuple[ast.Block, ast.Block]]:
    """The blocks of two paired statements that correspond (same kind, same role)."""
    if type(old) is not type(new):
        return
    if isinstance(old, ast.If) and isinstance(new, ast.If):
        yield old.consequent, new.consequent
        if isinstance(old.alternate, ast.Block) and isinstance(new.alternate, ast.Block):
            yield old.alternate, new.alternate
    elif isinstance(old, ast.While | ast.ForOf) and isinstance(new, ast.While | ast.ForOf):
        yield old.body, new.body
    elif isinstance(old, ast.Try) and isinstance(new, ast.Try):
        yield old.block, new.block
        if old.handler is not None and new.handler is not None:
            yield old.handler, new.handler
        if old.finalizer is not None and new.finalizer is not None:
            yield old.finalizer, new.finalizer


def _align(
    old_program: ast.Program,
    old: Sequence[ast.Stmt],
    new_program: ast.Program,
    new: Sequence[ast.Stmt],
) -> list[tuple[int, int]]:
    """Index pairs of two statement lists: unchanged text first, then, within each
    changed run, the edited statements."""
    old_keys = [normalised(old_program, s) for s in old]
    new_keys = [normalised(new_program, s) for s in new]
    matcher = SequenceMatcher(None, old_keys, new_keys, autojunk=False)
    pairs: list[tuple[int, int]] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.extend(zip(range(i1, i2), range(j1, j2), strict=True))
        elif tag == "replace":
            changed = _pair_changed(
                [_header(old_program, s) for s in old[i1:i2]],
                [type(s) for s in old[i1:i2]],
                [_header(new_program, s) for s in new[j1:j2]],
                [type(s) for s in new[j1:j2]],
            )
            pairs.extend((i1 + i, j1 + j) for i, j in changed)
    return pairs


def _compatible(old_type: type, new_type: type) -> bool:
    """A compound statement pairs only with its own kind; simple ones with any simple one."""
    compound = ast.COMPOUND_STATEMENTS
    return old_type is new_type or not (
        issubclass(old_type, compound) or issubclass(new_type, compound)
    )


def _score(old_text: str, old_type: type, new_text: str, new_type: type) -> float:
    """How well two statements of a changed run pair: 0 never; the same kind always
    pairs (its text breaks ties), different simple kinds only when their text is close."""
    if not _compatible(old_type, new_type):
        return 0.0
    ratio = SequenceMatcher(None, old_text, new_text, autojunk=False).ratio()
    if old_type is new_type:
        return 1.0 + ratio
    return ratio if ratio >= _MIN_SIMILARITY else 0.0


def _pair_changed(
    old_texts: list[str], old_types: list[type], new_texts: list[str], new_types: list[type]
) -> list[tuple[int, int]]:
    """The best order-keeping pairing of a changed run (dynamic programming over the
    summed scores), or, for a huge run, each old statement with the next new one of
    its kind."""
    m, n = len(old_texts), len(new_texts)
    if m == n and all(_compatible(a, b) for a, b in zip(old_types, new_types, strict=True)):
        return [(i, i) for i in range(m)]  # each statement edited in place
    if m * n > MAX_PAIRING_CELLS:
        return _pair_by_kind(old_types, new_types)
    score = [
        [_score(old_texts[i], old_types[i], new_texts[j], new_types[j]) for j in range(n)]
        for i in range(m)
    ]
    best = [[0.0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            take = score[i][j] + best[i + 1][j + 1] if score[i][j] > 0 else 0.0
            best[i][j] = max(take, best[i + 1][j], best[i][j + 1])
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < m and j < n:
        if score[i][j] > 0 and best[i][j] == score[i][j] + best[i + 1][j + 1]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def _pair_by_kind(old_types: list[type], new_types: list[type]) -> list[tuple[int, int]]:
    pairs: list[tuple[int, int]] = []
    j = 0
    for i, kind in enumerate(old_types):
        k = next((k for k in range(j, len(new_types)) if new_types[k] is kind), None)
        if k is not None:
            pairs.append((i, k))
            j = k + 1
    return pairs


def map_program(old: ast.Program, new: ast.Program) -> StatementMap:
    return StatementMap(old, new)


# --- frames -------------------------------------------------------------------------------


def _where(program: ast.Program, stmt: ast.Stmt) -> str:
    text = program.statement_text(stmt, 60)
    return f"{program.file}:{stmt.span.line}:{stmt.span.col} `{' '.join(text.split())}`"


def _role(holder: ast.Stmt, block: ast.Block) -> str:
    """Which of ``holder``'s blocks ``block`` is."""
    if isinstance(holder, ast.If):
        return "consequent" if holder.consequent is block else "alternate"
    if isinstance(holder, ast.While | ast.ForOf):
        return "body"
    assert isinstance(holder, ast.Try)
    if holder.block is block:
        return "block"
    return "handler" if holder.handler is block else "finalizer"


def _block_of(holder: ast.Stmt, role: str) -> ast.Block | None:
    found = getattr(holder, role, None)
    return found if isinstance(found, ast.Block) else None


def _elifs(start: ast.Stmt, target: ast.Block | ast.Stmt) -> tuple[ast.Stmt, int] | None:
    """The statement among ``start`` and its ``else if`` chain that holds (or is)
    ``target``, and how many links down the chain it is."""
    node: ast.Stmt = start
    links = 0
    while True:
        if node is target:
            return node, links
        if isinstance(target, ast.Block) and any(b is target for b in _own_blocks(node)):
            return node, links
        if isinstance(node, ast.If) and isinstance(node.alternate, ast.If):
            node = node.alternate
            links += 1
            continue
        return None


def _own_blocks(stmt: ast.Stmt) -> list[ast.Block]:
    if isinstance(stmt, ast.If):
        return [stmt.consequent] + (
            [stmt.alternate] if isinstance(stmt.alternate, ast.Block) else []
        )
    if isinstance(stmt, ast.While | ast.ForOf):
        return [stmt.body]
    if isinstance(stmt, ast.Try):
        return [b for b in (stmt.block, stmt.handler, stmt.finalizer) if b is not None]
    return []


def _follow_elifs(stmt: ast.Stmt, links: int) -> ast.Stmt | None:
    for _ in range(links):
        if not (isinstance(stmt, ast.If) and isinstance(stmt.alternate, ast.If)):
            return None
        stmt = stmt.alternate
    return stmt


def _same_shape(
    old_program: ast.Program, old: ast.Stmt, new_program: ast.Program, new: ast.Stmt
) -> str | None:
    """Why ``new`` cannot take over from ``old`` while ``old`` is running (None: it can)."""
    if type(old) is not type(new):
        return "was replaced by a different kind of statement"
    if isinstance(old, ast.ForOf) and isinstance(new, ast.ForOf):
        before = (old.kind, old.name, _normalised_expr(old_program, old.iterable))
        after = (new.kind, new.name, _normalised_expr(new_program, new.iterable))
        if before != after:
            return "changed its header while it iterates (keep the loop variable and the iterable)"
    if (
        isinstance(old, ast.Try)
        and isinstance(new, ast.Try)
        and (old.param, old.handler is None, old.finalizer is None)
        != (new.param, new.handler is None, new.finalizer is None)
    ):
        return "changed its catch/finally shape while it runs"
    return None


def _normalised_expr(program: ast.Program, node: ast.Expr) -> str:
    return " ".join(program.source[node.span.start : node.span.end].split())


def map_frame(position: FramePosition, new: ast.Program, statement_map: StatementMap) -> FramePlan:
    """The frame's place in ``new``; :class:`ReloadError` when it has none."""
    old = position.program
    fn = next((f for f in new.functions if f.name == position.fn), None)
    if fn is None:
        raise ReloadError(
            f"function '{position.fn}' is running (on the call stack) but is no longer in "
            f"{new.file}"
        )
    blocks: list[tuple[ast.Block, int]] = []
    new_block: ast.Block | None = fn.body
    skipped = 0
    for level, (old_block, index) in enumerate(position.blocks):
        assert new_block is not None
        old_stmt = old_block.body[index]
        last = level + 1 == len(position.blocks)
        target: ast.Block | ast.Stmt = position.stmt if last else position.blocks[level + 1][0]
        found = _elifs(old_stmt, target)
        if found is None:  # pragma: no cover - the interpreter's cursors always nest
            raise ReloadError(f"the running position at {_where(old, old_stmt)} is inconsistent")
        holder, links = found
        new_stmt = statement_map.get(old_stmt)
        if new_stmt is None or id(new_stmt) not in _identity(new_block.body):
            what = (
                "the statement the run is at"
                if last and links == 0
                else "the statement holding the pause"
            )
            raise ReloadError(
                f"{what}, {_where(old, old_stmt)}, was removed or rewritten beyond recognition"
            )
        new_index = _index(new_block.body, new_stmt)
        skipped += sum(1 for s in new_block.body[:new_index] if statement_map.is_new(s))
        blocks.append((new_block, new_index))
        new_holder = _follow_elifs(new_stmt, links)
        if new_holder is None or statement_map.get(holder) is not new_holder:
            raise ReloadError(
                f"the else-if chain at {_where(old, old_stmt)} changed while the run is inside it"
            )
        # The statement the frame is at starts afresh (only a loop's iteration goes on);
        # one that holds the position must keep the shape its running code relies on.
        reason = None
        if not last or isinstance(holder, ast.ForOf):
            reason = _same_shape(old, holder, new, new_holder)
        if reason is not None:
            raise ReloadError(f"{_where(old, holder)} holds the running position and {reason}")
        if last:
            return FramePlan(new, tuple(blocks), new_holder, skipped)
        assert isinstance(target, ast.Block)
        role = _role(holder, target)
        new_block = _block_of(new_holder, role)
        if new_block is None:
            raise ReloadError(
                f"the {_role_name(role)} block of {_where(old, holder)}, where the run is, "
                "was removed"
            )
    raise ReloadError(f"function '{position.fn}' has no running position")  # pragma: no cover


def _role_name(role: str) -> str:
    return {"alternate": "else", "handler": "catch", "finalizer": "finally"}.get(role, role)


def _identity(stmts: Sequence[ast.Stmt]) -> set[int]:
    return {id(s) for s in stmts}


def _index(stmts: Sequence[ast.Stmt], stmt: ast.Stmt) -> int:
    return next(i for i, s in enumerate(stmts) if s is stmt)


def statements(program: ast.Program) -> Iterator[ast.Stmt]:
    """Every statement of the file's functions, ``else if`` included (where steps are)."""

    def walk(stmt: ast.Stmt) -> Iterator[ast.Stmt]:
        yield stmt
        if isinstance(stmt, ast.If) and isinstance(stmt.alternate, ast.If):
            yield from walk(stmt.alternate)
        for block in _own_blocks(stmt):
            for inner in block.body:
                yield from walk(inner)

    for fn in program.functions:
        for stmt in fn.body.body:
            yield from walk(stmt)


def changed_functions(old: ast.Program, new: ast.Program) -> list[str]:
    """Functions of ``new`` that are new or whose text changed, in file order."""
    before: Mapping[str, str] = {fn.name: normalised(old, fn.body) for fn in old.functions}
    params = {fn.name: fn.params for fn in old.functions}
    return [
        fn.name
        for fn in new.functions
        if before.get(fn.name) != normalised(new, fn.body) or params.get(fn.name) != fn.params
    ]
