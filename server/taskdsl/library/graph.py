"""The reference graph between definition names, and its cycles.

`_Graph` counts the resolved reference edges (several files may hold the same edge) and keeps the
strongly connected components of two or more names, which the cycle checks ask (`on_cycle`,
`cycle_path`). The components are computed on the first query and then kept current edge by edge;
`_reach` and `_components` (iterative Tarjan) are the plain graph walks underneath. Names only:
the graph knows no files, documents or definitions.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Iterator


class _Graph:
    """Reference edges between definition names (counted: several files may hold the same edge),
    and the strongly connected components of two or more names, for cycle checks.

    The components are computed once, on the first cycle query (so a bulk build pays nothing per
    file), then kept current edge by edge: an added edge u → v merges the components on the paths
    v →* u (found within u's ancestors); a removed edge re-splits only its own component."""

    def __init__(self) -> None:
        self.out: dict[str, dict[str, int]] = defaultdict(dict)
        self.into: dict[str, dict[str, int]] = defaultdict(dict)
        self.component: dict[str, int] | None = None  # None until the first query
        self.members: dict[int, frozenset[str]] = {}
        self._next = 0

    # -- queries

    def on_cycle(self, source: str, target: str) -> bool:
        """Whether an edge source → target closes a cycle."""
        if source == target:
            return True
        component = self._components().get(source)
        return component is not None and component == self.component.get(target)

    def cycle_path(self, source: str, target: str) -> list[str]:
        """source → target → … → source (the shortest way back), for the message."""
        if source == target:
            return [source, source]
        component = self._components().get(source)
        previous: dict[str, str | None] = {target: None}
        queue = [target]
        for node in queue:
            if node == source:
                break
            for following in sorted(self.out.get(node, ())):
                if following not in previous and self.component.get(following) == component:
                    previous[following] = node
                    queue.append(following)
        path, node = [], source
        while node is not None:
            path.append(node)
            node = previous.get(node)
        return [source] + list(reversed(path))

    def _components(self) -> dict[str, int]:
        if self.component is None:
            self.component, self.members = {}, {}
            for group in _components(self.out, list(self.out)):
                self._add_component(group)
        return self.component

    def _add_component(self, names: Iterable[str]) -> None:
        group = frozenset(names)
        if len(group) < 2:
            return
        self._next += 1
        self.members[self._next] = group
        for name in group:
            self.component[name] = self._next

    def _drop_component(self, component: int) -> frozenset[str]:
        group = self.members.pop(component)
        for name in group:
            del self.component[name]
        return group

    # -- updates

    def apply(self, delta: dict[tuple[str, str], int]) -> set[str]:
        """Apply edge count changes; return the names whose cycle membership changed."""
        changed: set[str] = set()
        tracking = self.component is not None
        for (source, target), step in sorted(delta.items(), key=lambda item: item[1]):  # removals first
            if step == 0:
                continue
            count = self.out[source].get(target, 0)
            new_count = max(count + step, 0)
            if new_count:
                self.out[source][target] = new_count
                self.into[target][source] = new_count
            else:
                self.out[source].pop(target, None)
                self.into[target].pop(source, None)
            if not tracking or (count > 0) == (new_count > 0):
                continue
            if new_count == 0:
                changed |= self._removed(source, target)
            else:
                changed |= self._added(source, target)
        return changed

    def _removed(self, source: str, target: str) -> set[str]:
        if source == target:
            return {source}
        component = self.component.get(source)
        if component is None or component != self.component.get(target):
            return set()
        group = self._drop_component(component)
        for part in _components(self.out, sorted(group), within=group):
            self._add_component(part)
        return set(group)

    def _added(self, source: str, target: str) -> set[str]:
        if source == target:
            return {source}
        component = self.component.get(source)
        if component is not None and component == self.component.get(target):
            return set()
        ancestors = _reach(self.into, source)  # names that reach source
        if target not in ancestors:
            return set()
        on_paths = _reach(self.out, target, within=ancestors)  # target →* source
        merged = set(on_paths)
        for name in on_paths:
            existing = self.component.get(name)
            if existing is not None:
                merged |= self._drop_component(existing)
        self._add_component(merged)
        return merged


def _reach(adjacency: dict[str, dict[str, int]], start: str, within: set[str] | None = None) -> set[str]:
    """start and every name reachable from it (optionally only through names in `within`)."""
    seen = {start}
    stack = [start]
    while stack:
        for following in adjacency.get(stack.pop(), ()):
            if following not in seen and (within is None or following in within):
                seen.add(following)
                stack.append(following)
    return seen


def _components(edges: dict[str, dict[str, int]], starts: list[str],
                within: frozenset[str] | None = None) -> list[list[str]]:
    """Tarjan's algorithm (iterative): the strongly connected components of two or more names
    reachable from starts (only through names in `within`, when given)."""
    index_of: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    counter = 0

    def children(node: str) -> Iterator[str]:
        following = edges.get(node, ())
        return iter(following if within is None else [n for n in following if n in within])

    for start in starts:
        if start in index_of:
            continue
        work = [(start, children(start))]
        index_of[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, pending = work[-1]
            advanced = False
            for child in pending:
                if child not in index_of:
                    index_of[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, children(child)))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index_of[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index_of[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    groups.append(members)
    return groups
