"""How long the shell check (taskdsl.language.shell.sites) takes on commands with thousands of placeholders,
as a ratio to a floor measured in the same run: tree-sitter-bash's own parse of the same command with each
placeholder written as the ${…} reference the check parses (the check parses that text, then the text that
runs, so the ratio cannot fall below about 2).

    python bench/bench_shell.py [N]     (N placeholders per command, default 3000)

The check parses a command twice (each placeholder written as ${…}, then in the form it needs); what each
placeholder needs from the nodes above it is computed once per node (a long `a && b && …` list nests as deep as it
is long, so a walk up from every placeholder would be quadratic); a linear check stays a small constant multiple of one parse, whatever N is. Each
shape is measured at N/4 and N: when the check is linear the ratio does not grow with N (a quadratic one
grows about fourfold)."""

from __future__ import annotations

import sys
import time

from taskdsl.language import shell
from taskdsl.language.templating import find_placeholders

SHAPES = {
    "arguments": lambda n: "echo " + " ".join(["{{x}}"] * n),
    "one string": lambda n: 'echo "' + " ".join(["{{x}}"] * n) + '"',
    "commands": lambda n: "; ".join(["echo {{x}}"] * n),
    "pipeline": lambda n: " | ".join(["printf %s {{x}}"] * n) + " | cat",
    "sh -c script": lambda n: 'sh -c "' + " ".join(["{{x}}"] * n) + '"',
    "wrappers": lambda n: "env nice -n 1 timeout 5 xargs -0 printf %s " + " ".join(["{{x}}"] * n),
    "here-document": lambda n: "cat <<EOF\n" + "\n".join(["a {{x}}"] * n) + "\nEOF\n",
    "substitutions": lambda n: "echo " + " ".join(['"$(printf %s {{x}})"'] * n),
    "sed and find": lambda n: "find . -name {{x}} " + " ".join(["-o -name {{x}}"] * n) + "; sed -n -- p " +
                              " ".join(["{{x}}"] * n),
    # the grammar nests these as deep as they are long: a walk up from every placeholder would be quadratic
    "&& chain": lambda n: " && ".join(["echo {{x}}"] * n),
    "|| chain": lambda n: " || ".join(["echo {{x}}"] * n),
    "nested ifs": lambda n: "if true; then echo {{x}}; " * n + "fi; " * n,
    "nested loops": lambda n: "while true; do echo {{x}}; " * n + "break; done; " * n,
    "in $(…) and (…)": lambda n: "echo \"$(" * 19 + "( " * 19 + " && ".join(["printf %s {{x}}"] * n) + " )" * 19 +
                                 ")\"" * 19,
    "here-documents": lambda n: " && ".join(["cat <<EOF\n{{x}}\nEOF\n"] * n),
    "variables": lambda n: "; ".join(f'v{k}={{{{x}}}}; w{k}="$v{k}"; printf %s "$w{k}"' for k in range(n)),
    "variable chain": lambda n: "v0={{x}}; " + "; ".join(f'v{k + 1}="$v{k} {{{{x}}}}"' for k in range(n)) +
                                f'; printf %s "$v{n}"',
    # each eval's code is analysed for the names it mentions, not for every name of the command around it
    "eval chain": lambda n: "r={{x}}; " + "; ".join(f"eval 's{k}=$r'" for k in range(n)) + '; eval "$r"',
    "files": lambda n: "; ".join(f"printf %s {{{{x}}}} > f{k}; cat f{k} > g{k}; python3 p.py g{k}" for k in range(n)),
    # literal code in code positions and code variables, read as shell code; programs named at run time
    "literal code": lambda n: "; ".join(f"printf %s {{{{x}}}} > f{k}; GIT_SSH_COMMAND='sh g{k}' git -c "
                                        f"alias.a{k}='!sh h{k}' a{k}" for k in range(n)),
    "named at run time": lambda n: "; ".join(f"$f{k} a; echo {{{{x}}}}" for k in range(n)),
    # what a command makes unknowable (arithmetic names, rebound names, literal code) and wrappers judged by their
    # options, in literal shell code too
    "arithmetic names": lambda n: "declare -i m; " + "; ".join(f"n{k}=3; m=n{k}; echo $(( n{k} + a[n{k}] )) {{{{x}}}}"
                                                               for k in range(n)),
    "nested arithmetic": lambda n: "; ".join(["echo {{x}} " + "$(( 1 + " * 8 + "n" + " ))" * 8] * n),
    "wrapper options": lambda n: "; ".join(f"env -i LANG=C nice -n 1 timeout -s KILL 5 xargs -0 -r printf %s {{{{x}}}}"
                                           for k in range(n)),
    "bash -c code": lambda n: "bash -c '" + "; ".join(f"v{k}=1; (( v{k} > 0 )) && printf %s \"$1\"" for k in range(n))
                              + "' _ {{x}}",
}


def best(function, repeat=5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def measure(text: str) -> tuple[float, float]:
    placeholders = find_placeholders(text)
    data = shell._render(text, placeholders, ["double"] * len(placeholders))[0].encode("utf-8")
    floor = best(lambda: shell._parser().parse(data))

    def check():
        shell._analysis.cache_clear()
        shell.sites(text)
    return best(check), floor


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 3000
    shell._parser()
    print(f"{'shape':<16}{'chars':>8}{'check s':>10}{'parse s':>10}{'ratio':>8}{'ratio at N/4':>14}{'growth':>8}")
    worst = 0.0
    for name, make in SHAPES.items():
        small, large = make(n // 4), make(n)
        check_small, floor_small = measure(small)
        check_large, floor_large = measure(large)
        ratio_small, ratio_large = check_small / floor_small, check_large / floor_large
        growth = ratio_large / ratio_small
        worst = max(worst, growth)
        print(f"{name:<16}{len(large):>8}{check_large:>10.3f}{floor_large:>10.4f}{ratio_large:>8.0f}"
              f"{ratio_small:>14.0f}{growth:>8.2f}")
    print(f"largest growth of the ratio from N/4 to N: {worst:.2f} (linear: about 1; quadratic: about 4)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
