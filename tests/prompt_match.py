"""Matching the prompts `render` shows with the prompts a run sent (tests/test_render_is_the_run.py,
tests/test_generated_projects.py): literal text equal, each `{{run: …}}` placeholder standing for
the run's text."""

import json
import re

from taskdsl.evaluator.dry import MARKER
from taskdsl.evaluator.outputs import strip_code_fences


def outputs_as_text(output: str) -> set[str]:
    "The texts the run puts in a prompt for a step with this output: the text, or its parsed JSON."
    texts = {output}
    try:
        texts.add(json.dumps(json.loads(strip_code_fences(output)), ensure_ascii=False))
    except ValueError:
        pass
    return texts


def pattern(shown: str, outputs: dict[str, str]) -> re.Pattern:
    """`shown` as a regular expression: literal text; a placeholder naming "the output of P" of a
    step the run ended is that step's output (the run's value substituted); any other placeholder
    a group standing for one text (the same text wherever the same placeholder recurs; one ending
    in ", if any" may stand for nothing)."""
    parts, groups, position = [], {}, 0
    for found in MARKER.finditer(shown):
        parts.append(re.escape(shown[position:found.start()]))
        marker = found.group(0)
        named = re.fullmatch(r"\{\{run: the output of (?:the script )?(.+)\}\}", marker)
        if named and named.group(1) in outputs:
            parts.append("(?:" + "|".join(re.escape(t) for t in sorted(outputs_as_text(outputs[named.group(1)]))) + ")")
        elif marker in groups:
            parts.append(f"(?P={groups[marker]})")
        else:
            groups[marker] = f"p{len(groups)}"
            parts.append(f"(?P<{groups[marker]}>.*?)")
        position = found.end()
    parts.append(re.escape(shown[position:]))
    return re.compile("".join(parts), re.S)


def assert_stands_for(shown: str, sent: str, outputs: dict[str, str], where: str) -> None:
    assert pattern(shown, outputs).fullmatch(sent) is not None, f"{where}: render shows\n{shown!r}\nthe run sent\n{sent!r}"


def untaken(path: str, run_paths: set[str]) -> bool:
    "Whether `path` lies under a <cond> case (or default) the run did not take."
    segments = path.split("/")
    for i, segment in enumerate(segments):
        if re.fullmatch(r"case\[\d+\]|default", segment):
            prefix = "/".join(segments[: i + 1])
            if not any(p == prefix or p.startswith(prefix + "/") for p in run_paths):
                return True
    return False


def compare(previews: dict[str, dict], calls: list[dict], events: list[dict], finished: bool) -> str | None:
    """None when every prompt a run sent (`calls`: its trace's model_call events) is the one shown
    at its step path (`previews`: path → {system, user}), and every prompt shown was sent unless
    it is under a <cond> case the run did not take (or the run stopped before it: `finished`
    false); else what differs."""
    outputs = {e["path"]: e["output"] for e in events if e["event"] == "end" and isinstance(e.get("output"), str)}
    run_paths = {e["path"] for e in events if "path" in e}
    for call in calls:
        if call["path"] not in previews:
            return f"the run sent a prompt at {call['path']}; render printed {sorted(previews)}"
        for part in ("system", "user"):
            if pattern(previews[call["path"]][part], outputs).fullmatch(call["prompt"][part]) is None:
                return (f"{call['path']} ({part}): render shows\n{previews[call['path']][part]!r}\nthe run sent\n"
                        f"{call['prompt'][part]!r}")
    sent = {c["path"] for c in calls}
    if finished:
        for where in previews:
            if where not in sent and not untaken(where, run_paths):
                return f"render printed {where}; the run never sent it"
    return None
