"""``function_references``: the checker's walk as the watch graph reads it.

Each function of a parsed file → the names it calls and the names it reads that none of
its own variables declare, found wherever the checker looks (nested blocks, loops, an
``else if`` chain, ``try``/``catch``, templates, objects, ``expect_poll``'s function),
and nothing reported, whatever :func:`check_program` would say of the same file.
"""

from __future__ import annotations

from dsl.checker import FunctionReferences, check_program, function_references
from dsl.parser import parse_program

SOURCE = """\
function test_main() {
  const user = "ana"
  sign_in(user, PASSWORD)
  for (const item of ITEMS) {
    if (item == 1) {
      open_menu()
    } else if (item == 2) {
      try {
        fill(css(`#${FIELD}`), { value: item })
      } catch (e) {
        log(e, retry_count)
      }
    }
  }
  expect_poll(ready, 5)
}

function ready() {
  let count = 0
  while (count < 3) {
    count = count + 1
    step(count)
  }
  return count
}

function with_callback(callback) {
  callback()
  local_helper().click()
  return [LIMIT, callback]
}

function local_helper() {
  return ready
}
"""


def refs(source: str = SOURCE) -> dict[str, FunctionReferences]:
    return {r.name: r for r in function_references(parse_program(source, "r.test.js"))}


def test_calls_and_free_reads_of_every_function_in_order() -> None:
    found = function_references(parse_program(SOURCE, "r.test.js"))
    assert [r.name for r in found] == ["test_main", "ready", "with_callback", "local_helper"]
    main = refs()["test_main"]
    assert main.calls == {"sign_in", "open_menu", "fill", "css", "log", "expect_poll"}
    # consts of helpers, a template's expression, the catch block, expect_poll's function
    assert main.reads == {"PASSWORD", "ITEMS", "FIELD", "retry_count", "ready"}
    assert main.names == main.calls | main.reads


def test_own_variables_and_parameters_are_no_references() -> None:
    found = refs()
    # ``count`` is declared with let; ``user``, ``item``, ``e`` by const, for-of, catch
    assert found["ready"] == FunctionReferences("ready", frozenset({"step"}), frozenset())
    # calling a parameter is no reference; a method call's object is
    callback = found["with_callback"]
    assert callback.calls == {"local_helper"}
    assert callback.reads == {"LIMIT"}
    assert found["local_helper"].reads == {"ready"}
    assert not found["local_helper"].calls


def test_nothing_is_judged_where_the_checker_reports() -> None:
    source = (
        "function test_x() {\n  undeclared = 1\n  before_each()\n  break\n"
        "  nope(1, 2, 3)\n  const c = 1\n  c = 2\n}\n"
    )
    program = parse_program(source, "bad.test.js")
    assert check_program(program, {}, {}, ())  # the checker has plenty to say
    [found] = function_references(program)
    assert found.calls == {"before_each", "nope"}
    assert found.reads == set()  # an assignment's target is no read


def test_a_file_without_functions_has_no_references() -> None:
    assert function_references(parse_program("// nothing\n", "empty.test.js")) == []
