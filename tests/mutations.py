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
