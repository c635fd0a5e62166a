"""Environments, as in Norvig's lis.py: a dict of bindings with an outer environment."""

from __future__ import annotations


class UnboundVariable(NameError):
    def __init__(self, var: str):
        super().__init__(f"variable '{var}' is not defined")
        self.var = var


class Env(dict):
    "A mapping of names to values, with an outer Env for lexical lookup."

    def __init__(self, bindings=(), outer: Env | None = None):
        super().__init__(bindings)
        self.outer = outer

    def find(self, var: str) -> Env:
        "The innermost Env where var is bound; UnboundVariable naming var if none."
        env = self
        while env is not None:
            if var in env:
                return env
            env = env.outer
        raise UnboundVariable(var)

    def lookup(self, var: str):
        return self.find(var)[var]

    def is_bound(self, var: str) -> bool:
        try:
            self.find(var)
            return True
        except UnboundVariable:
            return False

    @property
    def root(self) -> Env:
        env = self
        while env.outer is not None:
            env = env.outer
        return env

    def names(self) -> set[str]:
        "Every name visible from here (for did-you-mean messages)."
        return set(self) | (self.outer.names() if self.outer is not None else set())
