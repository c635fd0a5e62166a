"""Run traces as JSON lines. Secrets never reach the file: values of environment variables whose
names look secret (KEY, TOKEN, SECRET, PASSWORD) are replaced by [REDACTED], and so are fields
named like them."""

from __future__ import annotations

import json
import os
import re
import time

_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH", re.I)
REDACTED = "[REDACTED]"


def secret_values(environ=None) -> list[str]:
    environ = os.environ if environ is None else environ
    values = {v for k, v in environ.items() if _SECRET_NAME.search(k) and len(v) >= 4}
    return sorted(values, key=len, reverse=True)  # longest first, so overlapping secrets vanish whole


def redact(value, secrets: list[str]):
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: REDACTED if _SECRET_NAME.search(str(k)) and not str(k).endswith("_tokens") and k != "tokens"
                else redact(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v, secrets) for v in value]
    return value


class Trace:
    """Append-only JSON lines: one record per event (step begin/end, model call, error)."""

    def __init__(self, path: str | None):
        self.path = path
        self.secrets = secret_values()
        self._file = open(path, "w", encoding="utf-8") if path else None

    def write(self, **record) -> None:
        if self._file is None:
            return
        record = {"time": round(time.time(), 3), **record}
        self._file.write(json.dumps(redact(record, self.secrets), default=str, ensure_ascii=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
