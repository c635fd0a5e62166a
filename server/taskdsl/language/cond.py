"""The cond expression language (SPEC §3): a tokenizer, a Pratt parser and a safe evaluator.

    output.valid == true and len(output.errors) < 3
    "fatal" in output.tags or output["exit code"] != 0

Only `output` is a name; `len(...)` is the only call. Nothing here calls Python's eval.
The checker reports ExprSyntaxError as TD701 and ExprForbidden as TD702; the evaluator runs
the parsed Expr against the parsed JSON output of the tested task.

Semantics (JSON-ish, never a Python exception on missing data):
- a missing member, a bad index or member access on a non-object yields null;
- `==`/`!=` compare JSON values: true is not 1, 1 == 1.0, null == null;
- `< <= > >=` hold only between two numbers or two strings, otherwise they are false;
- `in` is substring for strings, membership for arrays, key membership for objects, else false;
- truthiness as JSON readers expect: null, false, 0, "", [] and {} are false;
- `len` of a string, array or object; of anything else it raises ExprEvalError.
"""

from __future__ import annotations

import difflib
import json

import re
from dataclasses import dataclass
from typing import Any


class ExprError(Exception):
    def __init__(self, message: str, offset: int = 0, length: int = 1, rewrite: str | None = None,
                 rewrite_safe: bool = True):
        super().__init__(message)
        self.message, self.offset, self.length = message, offset, max(length, 1)
        # the obvious rewrite of text[offset:offset+length] (`&&` → `and`), where there is one; unsafe
        # where the other language's precedence differs (`!a == b` is `(!a) == b`, `not a == b` is not)
        self.rewrite, self.rewrite_safe = rewrite, rewrite_safe


class ExprSyntaxError(ExprError):
    """The text does not parse (TD701)."""


class ExprForbidden(ExprError):
    """The text uses a name or construct outside the language (TD702)."""


class ExprEvalError(Exception):
    """A well-formed test failed at run time (e.g. len of a number)."""


# ---------------------------------------------------------------- tokens

@dataclass(frozen=True)
class Token:
    kind: str  # num str name op end
    text: str
    value: Any
    offset: int


_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<num>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>==|!=|<=|>=|\*\*|//|[<>()\[\].,+\-*/%=!&|^~:;@{}?])
""", re.VERBOSE)

_ESCAPES = {'"': '"', "'": "'", "\\": "\\", "/": "/", "n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f"}


def _string(text: str, start: int) -> tuple[str, int]:
    "Read a quoted string starting at text[start]; return (value, end offset)."
    quote, i, out = text[start], start + 1, []
    while i < len(text):
        ch = text[i]
        if ch == quote:
            return "".join(out), i + 1
        if ch == "\\":
            nxt = text[i + 1:i + 2]
            if not nxt:
                break  # a backslash that ends the text escapes nothing: the string is unterminated
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6]):
                code = int(text[i + 2:i + 6], 16)
                i += 6
                low = re.fullmatch(r"\\u(d[c-f][0-9a-f]{2})", text[i:i + 6], re.IGNORECASE)
                if 0xD800 <= code < 0xDC00 and low:  # a surrogate pair is one character, as in JSON
                    code = 0x10000 + ((code - 0xD800) << 10) + (int(low.group(1), 16) - 0xDC00)
                    i += 6
                out.append(chr(code))
                continue
            if nxt not in _ESCAPES:
                raise ExprSyntaxError(f"unknown escape '\\{nxt}' in string", i, 2)
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out.append(ch)
        i += 1
    raise ExprSyntaxError("unterminated string: add the closing " + quote, start, len(text) - start)


def tokenize(text: str) -> list[Token]:
    tokens, i = [], 0
    while i < len(text):
        if text[i] in "\"'":
            value, end = _string(text, i)
            tokens.append(Token("str", text[i:end], value, i))
            i = end
            continue
        m = _TOKEN.match(text, i)
        if not m:
            raise ExprSyntaxError(f"unexpected character {text[i]!r}", i, 1)
        kind = m.lastgroup
        if kind == "num":
            value = float(m.group()) if any(c in m.group() for c in ".eE") else int(m.group())
            tokens.append(Token("num", m.group(), value, i))
        elif kind != "space":
            tokens.append(Token(kind, m.group(), m.group(), i))
        i = m.end()
    tokens.append(Token("end", "", None, len(text)))
    return tokens


# ---------------------------------------------------------------- AST (plain tuples would do; dataclasses print well)

@dataclass(frozen=True)
class Expr:
    offset: int
    length: int


@dataclass(frozen=True)
class Output(Expr):
    pass


@dataclass(frozen=True)
class Literal(Expr):
    value: Any


@dataclass(frozen=True)
class Member(Expr):
    obj: Expr
    name: str


@dataclass(frozen=True)
class Index(Expr):
    obj: Expr
    index: Expr


@dataclass(frozen=True)
class Len(Expr):
    arg: Expr


@dataclass(frozen=True)
class Not(Expr):
    arg: Expr


@dataclass(frozen=True)
class Binary(Expr):
    op: str  # and or == != < <= > >= in
    left: Expr
    right: Expr


# ---------------------------------------------------------------- parser

_COMPARISONS = {"==", "!=", "<", "<=", ">", ">=", "in"}
_BINDING = {"or": 1, "and": 2, **{op: 4 for op in _COMPARISONS}}  # `not` binds at 3
_ARITHMETIC = {"+", "-", "*", "/", "%", "**", "//"}
_PYTHON_WORDS = {"True": "true", "False": "false", "None": "null"}
_WORD_FOR = {"&": "and", "|": "or"}
_HINTS = {
    "=": "'=' is assignment: use '==' to compare",
    "&": "use 'and' instead of '&'", "|": "use 'or' instead of '|'", "!": "use 'not' instead of '!'",
    "{": "object literals are not part of the cond language",
    ":": "slices and lambdas are not part of the cond language",
}


PLACEHOLDER_HINT = ("{{…}} is not filled in inside a cond test, which sees only `output`: to compare with an input, "
                    "have the tested step put it in its JSON output and test output.<name>, or compare in a script step")

MAX_NESTING = 100


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = tokenize(text)
        self.positions = {id(t): i for i, t in enumerate(self.tokens)}
        self.i = 0
        self.depth = 0

    @property
    def tok(self) -> Token:
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def word(self, tok: Token) -> str:
        "The operator a token stands for (names like `and` are operators)."
        return tok.text if tok.kind in ("op", "name") else ""

    def expect(self, text: str, message: str) -> Token:
        if self.tok.text != text or self.tok.kind not in ("op",):
            self.fail_at(self.tok, message)
        return self.advance()

    def fail_at(self, tok: Token, message: str):
        if tok.kind == "end":
            raise ExprSyntaxError(message + ", found the end of the test", tok.offset, 1)
        raise ExprSyntaxError(f"{message}, found {tok.text!r}", tok.offset, len(tok.text))

    def span(self, start: int) -> tuple[int, int]:
        prev = self.tokens[self.i - 1]
        return start, prev.offset + len(prev.text) - start

    def parse(self) -> Expr:
        if self.tok.kind == "end":
            raise ExprSyntaxError("empty test: write a condition such as output.valid == true", 0, 1)
        expr = self.expression(0)
        if self.tok.kind != "end":
            self.forbid_operator(self.tok)
            self.fail_at(self.tok, "expected an operator (==, and, or, in …) or the end of the test")
        return expr

    def expression(self, min_binding: int) -> Expr:
        if self.depth >= MAX_NESTING:  # parsing (and evaluating) recurse: refuse before Python's limit
            raise ExprSyntaxError(f"the test nests too deeply (more than {MAX_NESTING} levels): simplify it",
                                  self.tok.offset, max(len(self.tok.text), 1))
        self.depth += 1
        try:
            return self._expression(min_binding)
        finally:
            self.depth -= 1

    def _expression(self, min_binding: int) -> Expr:
        left = self.prefix()
        while True:
            tok = self.tok
            op = self.word(tok)
            if op == "not" and self.word(self.tokens[self.i + 1]) == "in":
                raise ExprForbidden("'not in' is not part of the cond language: write not (a in b)",
                                    tok.offset, len("not in"))
            self.forbid_operator(tok)
            binding = _BINDING.get(op)
            if binding is None or binding <= min_binding:
                return left
            self.advance()
            right = self.expression(binding)
            if op in _COMPARISONS and self.word(self.tok) in _COMPARISONS:
                raise ExprForbidden("chained comparisons are not part of the cond language: join them with 'and'",
                                    self.tok.offset, len(self.tok.text))
            left = Binary(*self.span(left.offset), op, left, right)

    def forbid_operator(self, tok: Token):
        if tok.kind == "op" and tok.text in _ARITHMETIC:
            raise ExprForbidden(f"arithmetic ('{tok.text}') is not part of the cond language", tok.offset, len(tok.text))
        before, after = self.neighbours(tok)
        if tok.kind == "op" and tok.text == "=":  # `= =`, `===`, `a = 1`: not an expression at all (TD701)
            if before.text == "==" and before.offset + 2 == tok.offset:  # `===`
                raise ExprSyntaxError("'===' is not an operator of the cond language: use '=='", tok.offset, 1,
                                      rewrite="")
            if after.text == "=":  # `= =`
                raise ExprSyntaxError(_HINTS["="], tok.offset, after.offset + 1 - tok.offset, rewrite="==")
            lone = before.kind != "op" or before.text in ")]"
            raise ExprSyntaxError(_HINTS["="], tok.offset, 1, rewrite="==" if lone else None)
        if tok.kind == "op" and tok.text in "&|" and after.text == tok.text and after.offset == tok.offset + 1:
            # `&&`, `||` bind as `and`, `or` do; a single `&`, `|` is bitwise: no obvious rewrite
            raise ExprForbidden(f"use '{_WORD_FOR[tok.text]}' instead of '{tok.text * 2}'", tok.offset, 2,
                                rewrite=_WORD_FOR[tok.text])
        if tok.kind == "op" and tok.text == "!":
            raise ExprForbidden(_HINTS[tok.text], tok.offset, 1, rewrite="not", rewrite_safe=False)
        if tok.kind == "op" and tok.text == "{" and after.text == "{" and after.offset == tok.offset + 1:
            raise ExprForbidden(PLACEHOLDER_HINT, tok.offset, 2)
        if tok.kind == "op" and tok.text in _HINTS:
            raise ExprForbidden(_HINTS[tok.text], tok.offset, len(tok.text))
        if tok.kind == "name" and tok.text in ("is", "if", "else", "for", "lambda"):
            hint = "use '==' instead of 'is'" if tok.text == "is" else f"'{tok.text}' is not part of the cond language"
            rewrite = "==" if tok.text == "is" and after.text != "not" else None  # `is not` is `!=`, not `== not`
            raise ExprForbidden(hint, tok.offset, len(tok.text), rewrite=rewrite)

    def neighbours(self, tok: Token) -> tuple[Token, Token]:
        """The tokens before and after tok (an end token stands in at either edge)."""
        index = self.positions[id(tok)]  # a dict, not a scan per operator: 8,000 `or` terms parse in linear time
        edge = Token("end", "", None, 0)
        return (self.tokens[index - 1] if index else edge), self.tokens[min(index + 1, len(self.tokens) - 1)]

    def prefix(self) -> Expr:
        tok = self.advance()
        if tok.kind == "num":
            return Literal(tok.offset, len(tok.text), tok.value)
        if tok.kind == "str":
            return self.postfix(Literal(tok.offset, len(tok.text), tok.value), allow_members=False)
        if tok.kind == "op" and tok.text == "-" and self.tok.kind == "num":
            num = self.advance()
            return Literal(tok.offset, num.offset + len(num.text) - tok.offset, -num.value)
        if tok.kind == "op" and tok.text == "(":
            inner = self.expression(0)
            self.expect(")", "expected ')' to close the '(' at column %d" % (tok.offset + 1))
            return self.postfix(inner, allow_members=isinstance(inner, (Member, Index, Output)))
        if tok.kind == "op" and tok.text == "[":
            raise ExprForbidden("array literals are not part of the cond language", tok.offset, 1)
        if tok.kind == "name":
            return self.name(tok)
        self.forbid_operator(tok)
        self.i -= 1
        self.fail_at(tok, "expected a value (output, a number, a string, true, false, null, len(…) or '(')")

    def name(self, tok: Token) -> Expr:
        word = tok.text
        if word in ("true", "false", "null"):
            return Literal(tok.offset, len(word), {"true": True, "false": False, "null": None}[word])
        if word == "not":
            arg = self.expression(3)
            return Not(tok.offset, arg.offset + arg.length - tok.offset, arg)
        if word == "output":
            return self.postfix(Output(tok.offset, len(word)), allow_members=True)
        if word == "len":
            if not (self.tok.kind == "op" and self.tok.text == "("):
                raise ExprForbidden("len can only be called: write len(output.items)", tok.offset, len(word))
            self.advance()
            if self.tok.kind == "op" and self.tok.text == ")":
                raise ExprSyntaxError("len() needs one argument", tok.offset, self.tok.offset + 1 - tok.offset)
            arg = self.expression(0)
            if self.tok.kind == "op" and self.tok.text == ",":
                raise ExprSyntaxError("len() takes exactly one argument", self.tok.offset, 1)
            self.expect(")", "expected ')' after the argument of len(")
            return self.postfix(Len(*self.span(tok.offset), arg), allow_members=False)
        if word in _PYTHON_WORDS:
            raise ExprForbidden(f"'{word}' is Python: write '{_PYTHON_WORDS[word]}'", tok.offset, len(word),
                                rewrite=_PYTHON_WORDS[word])
        if word in ("and", "or", "in"):
            self.i -= 1
            self.fail_at(tok, "expected a value before '%s'" % word)
        if self.tok.kind == "op" and self.tok.text == "(":
            raise ExprForbidden(f"'{word}(…)' is not available in a cond test: the only call is len(…)",
                                tok.offset, len(word))
        close = difflib.get_close_matches(word, ["output"], n=1, cutoff=0.6)
        hint = "; did you mean 'output'?" if close else ""
        raise ExprForbidden(f"'{word}' is not available in a cond test: only `output` is{hint}", tok.offset, len(word),
                            rewrite="output" if close else None, rewrite_safe=False)

    def postfix(self, expr: Expr, allow_members: bool) -> Expr:
        while self.tok.kind == "op" and self.tok.text in (".", "[", "("):
            tok = self.advance()
            if tok.text == "(":
                raise ExprForbidden("calls are not part of the cond language (only len(…))", tok.offset, 1)
            if not allow_members:
                raise ExprForbidden("member access and indexing are only allowed on `output`", tok.offset, 1)
            if tok.text == ".":
                name = self.advance()
                if name.kind != "name":
                    self.i -= 1
                    self.fail_at(name, "expected a member name after '.'")
                if name.text.startswith("__"):
                    raise ExprForbidden(f"'{name.text}' is not available in a cond test: dunder names are not allowed",
                                        name.offset, len(name.text))
                if self.tok.kind == "op" and self.tok.text == "(":
                    raise ExprForbidden(f"'.{name.text}(…)': method calls are not part of the cond language",
                                        name.offset, len(name.text))
                expr = Member(*self.span(expr.offset), expr, name.text)
            else:
                if self.tok.kind == "op" and self.tok.text == "]":
                    self.fail_at(self.tok, "expected an index or a key inside '[ ]'")
                index = self.expression(0)
                if self.tok.kind == "op" and self.tok.text == ":":
                    raise ExprForbidden("slices are not part of the cond language", self.tok.offset, 1)
                self.expect("]", "expected ']' after the index")
                expr = Index(*self.span(expr.offset), expr, index)
        return expr


def parse_expr(text: str) -> Expr:
    """Parse a cond test. Raises ExprSyntaxError (TD701) or ExprForbidden (TD702), with offsets into text."""
    return _Parser(text).parse()


# ---------------------------------------------------------------- evaluator

def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def json_equal(a: Any, b: Any) -> bool:
    "Equality of JSON values: booleans are not numbers."
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if _is_number(a) and _is_number(b):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b


def truthy(v: Any) -> bool:
    return v not in (None, False, 0, "") and v != [] and v != {}


def _member(obj: Any, key: Any) -> Any:
    if isinstance(obj, dict) and isinstance(key, str):
        return obj.get(key)
    if isinstance(obj, (list, str)) and _is_number(key) and float(key).is_integer():
        i = int(key)
        return obj[i] if -len(obj) <= i < len(obj) else None
    return None


def _compare(op: str, a: Any, b: Any) -> bool:
    if op == "==":
        return json_equal(a, b)
    if op == "!=":
        return not json_equal(a, b)
    if op == "in":
        if isinstance(b, str):
            return isinstance(a, str) and a in b
        if isinstance(b, list):
            return any(json_equal(a, x) for x in b)
        if isinstance(b, dict):
            return isinstance(a, str) and a in b
        return False
    if not ((_is_number(a) and _is_number(b)) or (isinstance(a, str) and isinstance(b, str))):
        return False
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def evaluate(expr: Expr, output: Any) -> Any:
    """Evaluate a parsed test against `output` (already parsed JSON). Returns a JSON value."""
    if isinstance(expr, Output):
        return output
    if isinstance(expr, Literal):
        return expr.value
    if isinstance(expr, Member):
        return _member(evaluate(expr.obj, output), expr.name)
    if isinstance(expr, Index):
        return _member(evaluate(expr.obj, output), evaluate(expr.index, output))
    if isinstance(expr, Len):
        value = evaluate(expr.arg, output)
        if isinstance(value, (str, list, dict)):
            return len(value)
        kind = "null" if value is None else type(value).__name__.replace("bool", "boolean")
        raise ExprEvalError(f"len() needs a string, array or object, got {kind}")
    if isinstance(expr, Not):
        return not truthy(evaluate(expr.arg, output))
    if isinstance(expr, Binary) and expr.op in ("and", "or"):
        # a chain `a or b or c …` nests to the left: walk it in a loop, not one frame per term
        op, rights = expr.op, []
        while isinstance(expr, Binary) and expr.op == op:
            rights.append(expr.right)
            expr = expr.left
        value = evaluate(expr, output)
        for right in reversed(rights):
            if truthy(value) == (op == "or"):
                return value
            value = evaluate(right, output)
        return value
    if isinstance(expr, Binary):
        return _compare(expr.op, evaluate(expr.left, output), evaluate(expr.right, output))
    raise TypeError(f"not an expression node: {expr!r}")


def holds(text_or_expr: str | Expr, output: Any) -> bool:
    "Parse (if needed) and evaluate a cond test to a boolean."
    expr = parse_expr(text_or_expr) if isinstance(text_or_expr, str) else text_or_expr
    return truthy(evaluate(expr, output))


def why_not(text: str, output: Any) -> str | None:
    """Why a test that did not hold may be a mistake rather than a no: a member the output does not
    have (`output.lable` where the output has `label`: null, so the test quietly fails) or text
    compared with a number. None when nothing suggests one. The one hint for a run's <cond> and a
    test's `expect`."""
    try:
        expr = parse_expr(text)
    except ExprError:
        return None
    return missing_member(expr, output, text) or text_against_literal(expr, output)


def members_instead(holder: dict, key: str) -> tuple[str, str | None]:
    """What an object lacking `key` has instead ("it has label, score"), and the member `key` is
    likely a misspelling of (or None): for a <cond> test and a {{…}} placeholder alike."""
    members = sorted(holder)
    near = difflib.get_close_matches(key, members, n=1, cutoff=0.6)
    has = (f"it has {', '.join(members[:10])}" + (", …" if len(members) > 10 else "")) if members \
        else "it is an empty object"
    return has, (near[0] if near else None)


def missing_member(expr: Expr, output: Any, text: str) -> str | None:
    """The first `.name` or `[index]` compared with a value (`output.lable == 'negative'`) that the
    object it is applied to does not have, said with the members it does have. A missing member is
    null, so such a comparison quietly fails; a member tested alone or against null is left alone
    (`output.error`, `output.error == null`: the usual ways to ask whether it is there)."""
    for node in comparisons(expr):
        for side, other in ((node.left, node.right), (node.right, node.left)):
            if isinstance(other, Literal) and other.value is None:
                continue
            said = _lacking(side, output, text)
            if said:
                return said
    return None


def comparisons(expr: Expr):
    "The comparisons of a test (`==`, `<`, `in`, …), left to right, through `and`, `or` and `not`."
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Not):
            stack.append(node.arg)
        elif isinstance(node, Binary) and node.op in ("and", "or"):
            stack.extend((node.right, node.left))
        elif isinstance(node, Binary):
            yield node


def _lacking(node: Expr, output: Any, text: str) -> str | None:
    "What the innermost missing step of a member chain (output.a.b[0]) lacks, or None."
    chain = []
    while isinstance(node, (Member, Index)):
        chain.append(node)
        node = node.obj
    for step in reversed(chain):  # from output outwards: the first step that is not there
        try:
            holder = evaluate(step.obj, output)
            key = step.name if isinstance(step, Member) else evaluate(step.index, output)
        except ExprEvalError:
            return None
        shown = text[step.obj.offset:step.obj.offset + step.obj.length] or "output"
        if isinstance(holder, dict) and isinstance(key, str) and key not in holder:
            has, near = members_instead(holder, key)
            return f"{shown} has no member '{key}' ({has})" + (f": did you mean {shown}.{near}?" if near else "")
        if isinstance(holder, str) and isinstance(step, Member):
            return (f"{shown} is text, not a JSON object: it has no member '{key}'; declare "
                    "<output_format type=\"json\"/> on the task so its output is read as JSON")
        if holder is None:
            return None
    return None


def text_against_literal(text_or_expr: str | Expr, output: Any) -> str | None:
    """Why a comparison in a test could not hold: a text (a task's plain output) compared with a number
    or a boolean (`output == 5` on the text "5"; JSON equality never makes them equal). None when no
    comparison of the test is of that kind."""
    expr = parse_expr(text_or_expr) if isinstance(text_or_expr, str) else text_or_expr
    for node in comparisons(expr):
        if node.op != "in":
            for side, other in ((node.left, node.right), (node.right, node.left)):
                if not isinstance(other, Literal) or not isinstance(other.value, (int, float, bool)):
                    continue
                try:
                    value = evaluate(side, output)
                except ExprEvalError:
                    continue
                if isinstance(value, str):
                    literal = json.dumps(other.value)
                    kind = "boolean" if isinstance(other.value, bool) else "number"
                    return (f"text is never equal to the {kind} {literal}: compare with the text '{literal}', or "
                            "declare <output_format type=\"json\"/> on the task so its output is read as JSON")
    return None
