"""Secrets are masked by value wherever a run is shown or written: traces, logs, progress
messages, result documents, `--json` and the printed output.

A secret is the value (8 characters or more) of an environment variable whose name contains KEY,
TOKEN, SECRET, PASSWORD or CREDENTIAL, or an API key given in configuration. Masking by value
catches a key wherever it went: a script that printed it, a prompt that quoted it, an error
message. Files that hold a run's data are created readable by their owner only.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any, Iterable

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
MIN_LENGTH = 8
MASK = "***"


def secret_values(environ: dict | None = None, extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The values to mask, longest first (so a secret holding another vanishes whole)."""
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_LENGTH}
    values.update(v for v in extra if isinstance(v, str) and len(v) >= MIN_LENGTH)
    return tuple(sorted(values, key=len, reverse=True))


class Redactor:
    """mask(value): value with every secret replaced by ***; dicts and lists are copied, masked."""

    def __init__(self, secrets: Iterable[str] | None = None, extra: Iterable[str | None] = ()):
        self.secrets = tuple(secrets) if secrets is not None else secret_values(extra=extra)
        self._pattern = re.compile("|".join(map(re.escape, self.secrets))) if self.secrets else None

    def text(self, value: str) -> str:
        return self._pattern.sub(MASK, value) if self._pattern is not None else value

    def mask(self, value: Any) -> Any:
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.mask(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.mask(v) for v in value]
        return value


def open_private(path: str):
    """Open path for writing text, readable and writable by its owner only (taskdsl.support.files: never
    through a link, never a file with other links or of another user)."""
    from taskdsl.support.files import open_stream

    return open_stream(path)


class MaskingFilter(logging.Filter):
    """A log handler filter: each record's message is masked before any handler formats it."""

    def __init__(self, redactor: Redactor | None = None):
        super().__init__()
        self.redactor = redactor or Redactor()

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        masked = self.redactor.text(message)
        if masked != message:
            record.msg, record.args = masked, ()
        if record.exc_info and record.exc_info[1] is not None:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_text, record.exc_info = self.redactor.text(text), None
        return True


def mask_logs(redactor: Redactor | None = None) -> None:
    """Mask every record the root logger's handlers write (call after logging is configured)."""
    masking = MaskingFilter(redactor)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, MaskingFilter) for f in handler.filters):
            handler.addFilter(masking)
