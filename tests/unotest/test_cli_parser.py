"""The command line's parser is built for the one command it names (unotest.cli's
``_Commands``): each command must parse and explain itself exactly as it does among all."""

from __future__ import annotations

import argparse
import io
import os
from collections.abc import Iterator

import pytest

from unotest import cli


@pytest.fixture(autouse=True)
def _fixed_width(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("COLUMNS", "100")
    yield


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _help(parser: argparse.ArgumentParser) -> str:
    out = io.StringIO()
    parser.print_help(out)
    return out.getvalue()


@pytest.mark.parametrize("command", cli._COMMANDS)
def test_a_command_built_alone_is_the_command_built_among_all(command: str) -> None:
    alone = _subparsers(cli._build_parser(command))
    assert list(alone) == [command]  # the others are not built
    among_all = _subparsers(cli._build_parser())[command]
    assert _help(alone[command]) == _help(among_all)
    assert [a.dest for a in alone[command]._actions] == [a.dest for a in among_all._actions]


def test_every_command_is_built_when_none_is_named() -> None:
    assert sorted(_subparsers(cli._build_parser())) == sorted(cli._COMMANDS)


def test_help_is_as_wide_as_columns_says(monkeypatch: pytest.MonkeyPatch) -> None:
    parser = _subparsers(cli._build_parser("runs"))["runs"]
    widths = {}
    for columns in ("50", "120"):
        monkeypatch.setenv("COLUMNS", columns)
        widths[columns] = max(len(line) for line in _help(parser).splitlines())
    assert widths["50"] <= 48 < widths["120"] <= 118


def test_without_columns_or_terminal_help_is_80_wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS")
    monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
    assert cli._terminal_columns() == 80


def _no_terminal(*_: object) -> os.terminal_size:
    raise OSError("not a terminal")


def test_main_parses_the_named_command_and_rejects_an_unknown_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["runs", "--limit", "x"]) == 2
    assert "argument --limit: invalid int value: 'x'" in capsys.readouterr().err
    assert cli.main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err
