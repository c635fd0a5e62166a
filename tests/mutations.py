"""The mutation strategy the fuzz tests share: cut, splice, repeat or truncate a seed template,
inserting the fragments people type half-way (a lone '<', an open quote, an unknown entity…)."""

from hypothesis import strategies as st


def mutated_templates(texts: list[str], fragments: list[str], mutations: tuple[int, int] = (1, 4)):
    @st.composite
    def mutated(draw) -> str:
        text = draw(st.sampled_from(texts))
        for _ in range(draw(st.integers(*mutations))):
            i = draw(st.integers(0, len(text)))
            j = draw(st.integers(i, min(len(text), i + 40)))
            kind = draw(st.sampled_from(["cut", "insert", "repeat", "truncate"]))
            if kind == "cut":
                text = text[:i] + text[j:]
            elif kind == "insert":
                text = text[:i] + draw(st.sampled_from(fragments)) + text[i:]
            elif kind == "repeat":
                text = text[:j] + text[i:j] + text[j:]
            else:
                text = text[:i]
        return text

    return mutated()


def meaningful_mutations(texts: list[str], elements: list[str], values: list[str], mutations: tuple[int, int] = (1, 3)):
    """Mutations that mostly keep a template well-formed, so that what it *means* changes: insert a
    whole element after a tag, or replace an attribute's value."""
    import re

    tag_ends = re.compile(r">")
    attr_values = re.compile(r'=\s*"([^"<&]*)"')

    @st.composite
    def mutated(draw) -> str:
        text = draw(st.sampled_from(texts))
        for _ in range(draw(st.integers(*mutations))):
            if draw(st.booleans()):
                ends = [m.end() for m in tag_ends.finditer(text)]
                if ends:
                    i = draw(st.sampled_from(ends))
                    text = text[:i] + draw(st.sampled_from(elements)) + text[i:]
            else:
                found = list(attr_values.finditer(text))
                if found:
                    match = draw(st.sampled_from(found))
                    text = text[:match.start(1)] + draw(st.sampled_from(values)) + text[match.end(1):]
        return text

    return mutated()
