"""taskdsl: language server, checker and task runner for the taskdsl XML task language."""

__version__ = "0.1.0"
