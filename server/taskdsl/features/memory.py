"""What the editor says about fresh context: hovering `<fresh_context>` shows what the task would
get from the memory system now (the project's index, matched as a run matches it, locally)."""

from __future__ import annotations

import os

from taskdsl.language.document import Element


def fresh_context_note(element: Element, path: str | None, settings, markdown: bool = True) -> str | None:
    """The files a task whose <fresh_context> is `element` would get now, as one paragraph; None
    when the element is not an enabled fresh_context of a task."""
    from taskdsl.evaluator.memory import MemorySystem
    from taskdsl.project.workspace import project_root

    block = element.parent
    task = block.parent if block is not None and block.tag == "context_management" else None
    if task is None or element.text.strip() != "enabled" or path is None:
        return None
    root = getattr(settings, "project_root", None) or project_root(os.path.abspath(path))
    memory = MemorySystem.for_project(root, settings)
    index = memory.get_global_index()
    code = (lambda text: f"`{text}`") if markdown else (lambda text: text)
    if not memory.exists:
        return (f"The project has no memory index ({code(memory.shown_path())}): fresh context matches nothing. "
                f"Write one with {code('taskdsl memory index')}.")
    texts = [task.child(tag) for tag in ("instructions", "description")]
    text = next((t.text.strip() for t in texts if t is not None and t.text.strip()), "")
    found = memory.local_matches(text)
    where = f"the memory index ({code(memory.shown_path())}, {len(index)} files)"
    if memory.matcher == "model":
        setting = code('[memory] matcher = "model"')
        head = (f"The project matches with a model ({setting}): the files are chosen "
                f"when the task runs. The local matcher would give, from {where}:")
    else:
        head = f"Now it would get, from {where}:"
    if not found:
        return f"{head} nothing (no entry shares a word with the task's text)."
    bullet = "- " if markdown else "  "
    return head + "\n\n" + "\n".join(f"{bullet}{code(p)}: {index[p]}" if index[p] else f"{bullet}{code(p)}"
                                     for p in found)
