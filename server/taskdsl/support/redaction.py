"""Secrets are masked by value wherever a run is shown or written: traces, logs, progress
messages, result documents, `--json` and the printed output.

A secret is the value (8 characters or more) of an environment variable whose name contains KEY,
TOKEN, SECRET, PASSWORD or CREDENTIAL, or an API key given in configuration. Masking by value
catches a key wherever it went: a script that printed it, a prompt that quoted it, an error
message. Files that hold a run's data are created readable by their owner only.
"""

from __future__ import annotations

import functools
import logging
import os
import re
from typing import Any, Iterable

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
MIN_LENGTH = 8
MIN_CONFIGURED = 4  # an API key given in configuration is a secret however short
MASK = "***"
#: what may sit between a secret's characters in output and still show it: line breaks (a value split
#: across lines) and ANSI escape sequences (colour, cursor moves)
_GAP = r"(?:\x1b\[[0-9;?]*[ -/]*[@-~]|\r?\n)*"


def secret_values(environ: dict | None = None, extra: Iterable[str | None] = ()) -> tuple[str, ...]:
    """The values to mask, longest first (so a secret holding another vanishes whole)."""
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if SECRET_NAME.search(k) and len(v) >= MIN_LENGTH}
    values.update(v for v in extra if isinstance(v, str) and len(v) >= MIN_CONFIGURED)
    return tuple(sorted(values, key=len, reverse=True))


def encodings(secret: str) -> set[str]:
    """The forms a secret commonly takes in output besides itself: base64 (standard and URL-safe, at
    each of the three alignments it can have inside longer data), percent-encoding, reversed."""
    import base64
    from urllib.parse import quote, quote_plus

    try:  # the bytes a program sees: a value holding bytes that are not UTF-8 has them as surrogate escapes
        data = secret.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate no environment gives: encoded as it is
        data = secret.encode("utf-8", "surrogatepass")
    forms = {secret[::-1], quote(data, safe=""), quote_plus(data), quote(data, safe="").lower()}
    for shift in range(3):
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            text = encode(b"\0" * shift + data).decode("ascii")
            first = -(-8 * shift // 6)  # the first character made of the secret's bits only
            last = (8 * (shift + len(data))) // 6  # past the last such character
            core = text[first:last]
            if len(core) >= MIN_CONFIGURED + 2:
                forms.add(core)
    forms.discard(secret)
    return {form for form in forms if len(form) >= MIN_CONFIGURED}


@functools.lru_cache(maxsize=64)
def _compiled(secrets: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(_patterns(secrets)))


def _patterns(secrets: Iterable[str]) -> list[str]:
    """Longest first: each secret with line breaks or ANSI escapes allowed between its characters,
    then its encodings."""
    patterns = []
    for secret in secrets:
        patterns.append((len(secret), _GAP.join(re.escape(c) for c in secret)))
        patterns.extend((len(form), re.escape(form)) for form in encodings(secret))
    return [pattern for _, pattern in sorted(patterns, key=lambda p: -p[0])]


class Redactor:
    """mask(value): value with every secret replaced by ***; dicts and lists are copied, masked."""

    def __init__(self, secrets: Iterable[str] | None = None, extra: Iterable[str | None] = ()):
        self.secrets = tuple(secrets) if secrets is not None else secret_values(extra=extra)
        self._pattern = _compiled(self.secrets) if self.secrets else None

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
