"""What the AST scans of the one reader and the one writer share: a call's mode argument, the names in an
expression, and each call's name and owner."""

import ast

WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}


def mode_of(call: ast.Call, position: int):
    """The mode argument of an open-like call (positional at `position`, or mode=), None when not given."""
    return call.args[position] if len(call.args) > position else next(
        (k.value for k in call.keywords if k.arg == "mode"), None)


def writes_mode(mode) -> bool:
    """Whether a given mode writes ("w", "a", "x", "+"); a mode computed at run time counts as writing."""
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return any(c in mode.value for c in "wax+")
    return True


def names(node: ast.AST) -> set[str]:
    return {n.attr if isinstance(n, ast.Attribute) else n.id for n in ast.walk(node)
            if isinstance(n, (ast.Attribute, ast.Name))}


def calls(tree: ast.AST):
    """(call, its name, its owner expression or None, the owner's name or "") of every call."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        owner = func.value if isinstance(func, ast.Attribute) else None
        yield node, name, owner, owner.id if isinstance(owner, ast.Name) else ""
