"""Run traces as JSON lines, readable by their owner only. Secrets never reach the file: every
secret value (taskdsl.support.redaction) is masked wherever it appears, and so are the values of fields
named like secrets (an input called api_key)."""

from __future__ import annotations

import json
import time

from taskdsl.support.redaction import MASK, SECRET_NAME, Redactor, open_private

_NOT_SECRET = {"tokens", "prompt_tokens", "completion_tokens", "max_tokens"}


def redact(value, redactor: Redactor):
    "value with secret values masked, and the values of secret-named fields too."
    if isinstance(value, dict):
        return {redactor.key(k): MASK if SECRET_NAME.search(str(k)) and str(k) not in _NOT_SECRET
                else redact(v, redactor) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, redactor) for v in value]
    return redactor.mask(value)


class Trace:
    """Append-only JSON lines: one record per event (step begin/end, model call, error)."""

    def __init__(self, path: str | None, redactor: Redactor | None = None):
        self.path = path
        self.redactor = redactor or Redactor()
        self._file = open_private(path) if path else None

    def write(self, **record) -> None:
        if self._file is None:
            return
        record = {"time": round(time.time(), 3), **record}
        # masked before it is encoded (keys, numbers and strings), and the text again: what default=str made
        line = self.redactor.text(json.dumps(redact(record, self.redactor), default=str, ensure_ascii=False))
        self._file.write(line + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
