"""Secrets are masked by value wherever a run is shown or written: traces, logs, progress
messages, result documents, `--json` and the printed output.

A secret is the value (8 characters or more) of an environment variable whose name contains KEY,
TOKEN, SECRET, PASSWORD or CREDENTIAL, or an API key given in configuration. Masking by value
catches a key wherever it went: a script that printed it, a prompt that quoted it, an error
message. Files that hold a run's data are created readable by their owner only.
"""

from __future__ import annotations

import bisect
import functools
import json
import logging
import os
import re
from typing import Any, Iterable

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.I)
MIN_LENGTH = 8
MIN_CONFIGURED = 4  # an API key given in configuration is a secret however short
MASK = "***"
#: a terminal escape sequence: CSI (`ESC [ … final`, colour and cursor moves, also as the C1 byte 0x9B), OSC
#: (`ESC ] … BEL` or `… ESC \`, titles and links), DCS/SOS/PM/APC strings, character-set designations
#: (`ESC ( B`) and the other two-byte escapes (`ESC 7`, `ESC =`, `ESC M`)
_CSI_TAIL, _OSC_TAIL = r"[0-?]*[ -/]*[@-~]", r"[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)"
_OTHER_ESCAPES = r"|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[ -/]+[0-~]|\x1b[0-~]"
_ESCAPE = rf"(?:\x1b\[|\x9b){_CSI_TAIL}|(?:\x1b\]|\x9d){_OSC_TAIL}{_OTHER_ESCAPES}"
#: the same with the 8-bit CSI and OSC introducers left out (see _GAPS_UTF8)
_ESCAPE_7BIT = rf"\x1b\[{_CSI_TAIL}|\x1b\]{_OSC_TAIL}{_OTHER_ESCAPES}"
#: characters a terminal (or `less`) shows as nothing: NUL (a secret printed as UTF-16LE has one after each
#: character), the other C0 controls but TAB, LF, CR, BS and ESC (handled apart), DEL, the C1 controls, and
#: every Default_Ignorable_Code_Point of Unicode (DerivedCoreProperties.txt, the whole set, not a choice of
#: it: the soft hyphen, the combining grapheme joiner, the Hangul fillers, the Khmer inherent vowels, the
#: Mongolian variation selectors and vowel separator, the zero-width and direction marks, the bidirectional
#: controls, the invisible operators, the variation selectors, the byte-order mark, the halfwidth filler,
#: the interlinear annotations' reserved block, the shorthand and musical format controls, the tags and the
#: variation selectors supplement with the rest of plane 14)
_INVISIBLE = ("\x00-\x07\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
              "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0"
              "\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
#: what may sit between a secret's characters (or an encoded form's) in output and still show it: line
#: breaks and bare carriage returns (a value split or wrapped across lines: base64 at 76 columns as MIME
#: writes it, 64 as PEM does), terminal escape sequences, invisible characters, and a character struck
#: over by a backspace (`S\bS` shows as S, `_\bS` as an underlined S: the character before it is the gap)
_GAPS = re.compile(rf"(?:{_ESCAPE}|\r|\n|[{_INVISIBLE}]|[^\n]?\x08)+")
#: the same where the 8-bit CSI and OSC introducers are single characters: a terminal reading UTF-8 shows
#: U+009B and U+009D as nothing and the letter after each as itself, one reading 8-bit controls takes the
#: two as a sequence; a text holding either is matched both ways
_GAPS_UTF8 = re.compile(rf"(?:{_ESCAPE_7BIT}|\r|\n|[{_INVISIBLE}]|[^\n]?\x08)+")
_MAY_GAP = re.compile(rf"[\x1b\x9b\x9d\r\n\x08{_INVISIBLE}]")
_HEX = re.compile(r"%[0-9A-F]{2}")


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
    # percent-encoded as urllib.parse.quote and quote_plus write it (`+` for a space, `/` kept or not); the
    # pattern takes each `%XX` in either case (`%2f`, as other encoders write it), see _atoms
    forms = {secret[::-1], quote(data, safe=""), quote(data), quote_plus(data), quote_plus(data, safe="/")}
    # escaped inside a JSON string or a Python literal (a secret holding `"`, `\\`, a tab or a line break
    # that some other encoder wrote): the second net behind masking each value before it is encoded
    forms |= {json.dumps(secret, ensure_ascii=False)[1:-1], json.dumps(secret)[1:-1], repr(secret)[1:-1]}
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
    """Longest first: each secret and each of its encodings (what may sit between their characters is
    taken out of the text before they are looked for: Redactor.text)."""
    patterns = []
    for secret in secrets:
        for form in (secret, *sorted(encodings(secret))):
            patterns.append((len(form), "".join(_atoms(form, percent=form is not secret))))
    return [pattern for _, pattern in sorted(patterns, key=lambda p: -p[0])]


def _atoms(form: str, percent: bool) -> list[str]:
    """One pattern per character of form; in an encoded form the hex digits of each `%XX` in either case."""
    atoms: list[str] = []
    at = 0
    for found in (_HEX.finditer(form) if percent else ()):
        atoms += [re.escape(c) for c in form[at:found.start()]]
        atoms += ["%"] + [f"[{c}{c.lower()}]" if c.isalpha() else c for c in found.group(0)[1:]]
        at = found.end()
    return atoms + [re.escape(c) for c in form[at:]]


def _leaves(value) -> list[str]:
    """The texts a value given for an input shows in a prompt or a command: a string itself, a
    number as written, and every string, key and number inside a list or an object (at any depth)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, (int, float)):
        return [str(value)]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in (*_leaves(k), *_leaves(v))]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [str(value)]


class Redactor:
    """mask(value): value with every secret replaced by ***; dicts and lists are copied, masked."""

    def __init__(self, secrets: Iterable[str] | None = None, extra: Iterable[str | None] = ()):
        self.secrets = tuple(secrets) if secrets is not None else secret_values(extra=extra)
        self._pattern = _compiled(self.secrets) if self.secrets else None

    def with_inputs(self, inputs: dict | None) -> "Redactor":
        """This redactor, also masking the value given for each input whose name looks like a secret
        (`--input api_token=…`, a password column of a batch): a secret of that run."""
        named = {f"{k}#{n}": leaf for k, v in (inputs or {}).items() if isinstance(k, str) and SECRET_NAME.search(k)
                 for n, leaf in enumerate(_leaves(v))}
        secrets = secret_values(named, extra=self.secrets)
        return self if set(secrets) == set(self.secrets) else Redactor(secrets)

    def text(self, value: str) -> str:
        """value with every secret (and each encoded form) replaced by ***: as written, and with the line
        breaks, carriage returns, terminal escapes, invisible characters and backspace overstrikes between
        its characters taken out."""
        if self._pattern is None:
            return value
        value = self._pattern.sub(MASK, value)
        if not _MAY_GAP.search(value):
            return value
        value = self._gapped(value, _GAPS)
        return self._gapped(value, _GAPS_UTF8) if "\x9b" in value or "\x9d" in value else value

    def _gapped(self, value: str, gaps: re.Pattern[str]) -> str:
        "value with every secret that shows once its gaps (as `gaps` finds them) are taken out masked."
        # the text without its gaps, and where each kept piece starts in both
        kept_at, value_at, pieces, length, end = [], [], [], 0, 0
        for gap in gaps.finditer(value):
            if gap.start() > end:
                kept_at.append(length)
                value_at.append(end)
                pieces.append(value[end:gap.start()])
                length += gap.start() - end
            end = gap.end()
        if end < len(value):
            kept_at.append(length)
            value_at.append(end)
            pieces.append(value[end:])
        spans = [(m.start(), m.end()) for m in self._pattern.finditer("".join(pieces))]
        if not spans:
            return value

        def at(index: int) -> int:  # where the kept text's character `index` is in value
            piece = bisect.bisect_right(kept_at, index) - 1
            return value_at[piece] + index - kept_at[piece]

        out, done = [], 0
        for start, stop in spans:  # in order, not overlapping: so are their places in value
            begin = at(start)
            while begin - 2 >= done and value[begin - 1] == "\x08":  # its first character, struck over: masked too
                begin -= 2
            out += [value[done:begin], MASK]
            done = at(stop - 1) + 1
        return "".join(out) + value[done:]

    def mask(self, value: Any) -> Any:
        """value with every secret masked before anything encodes it: strings, and the keys and values
        of dicts and lists at any depth (copied); a key or a number that shows a secret becomes the
        string "***", so JSON made of the result stays valid and shows no secret."""
        if self._pattern is None:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.key(k): self.mask(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.mask(v) for v in value]
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value if self.text(str(value)) == str(value) else MASK
        return value

    def key(self, key: Any) -> Any:
        "A dict's key masked: a string as text, a number that shows a secret as the string \"***\"."
        if isinstance(key, str):
            return self.text(key)
        if isinstance(key, (int, float)) and not isinstance(key, bool) and self.text(str(key)) != str(key):
            return MASK
        return key

    def json(self, value: Any, **options: Any) -> str:
        """value as JSON (json.dumps options), every secret masked in it before it is encoded (mask),
        and the text masked again as a second net (what `default=` made of other objects)."""
        return self.text(json.dumps(self.mask(value), **options))

    def repr(self, value: Any) -> str:
        "value in repr form (escapes shown), every secret masked before it is escaped."
        return self.text(repr(self.mask(value)))


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
