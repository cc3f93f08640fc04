"""The type stubs of the extension module name exactly what it exports, with the same
parameters (a light stand-in for mypy's stubtest)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import freeblock
import freeblock._freeblock as ext


def stub_tree() -> ast.Module:
    return ast.parse((Path(freeblock.__file__).parent / "_freeblock.pyi").read_text())


def test_stub_names_match_the_module() -> None:
    stubbed = set()
    for node in stub_tree().body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stubbed.add(node.target.id)
    exported = {name for name in dir(ext) if not name.startswith("_")} | {"__version__"}
    assert stubbed == exported


def test_stub_parameters_match_the_functions() -> None:
    for node in stub_tree().body:
        if not isinstance(node, ast.FunctionDef):
            continue
        args = node.args
        stub_params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        real = inspect.signature(getattr(ext, node.name))
        assert stub_params == list(real.parameters), node.name
