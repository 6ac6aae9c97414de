"""Which config options must be on for a build to compile every line a
series adds: the CONFIG_ symbols of the #if/#ifdef blocks around its added
lines, read from the patched files.

    python3 -m zlctool.cppcover --tree build/linux --base base \\
        --config build/check-warn/.config [FILE...]

prints one line per option, 'CONFIG_X=y  N lines' (or '... NOT SET'), and
exits 1 when an option that guards added lines is not set in --config.
Lines in an #else or #elif branch, or under #ifndef or a negated test,
compile only with an option off: the configs check builds those
(NUMA=n and friends), so they ask nothing of this build.
"""

import argparse
import re
import subprocess
import sys

DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)")
SYMBOL = re.compile(r"(!\s*)?(?:defined\s*\(?\s*|IS_ENABLED\s*\(\s*|IS_BUILTIN\s*\(\s*)?"
                    r"\b(CONFIG_[A-Za-z0-9_]+)")


def positive_symbols(kind, expr):
    """What a block's first branch needs on, as 'any of' groups: each
    CONFIG_ symbol of an #ifdef or #if that is not negated ('!defined(X)',
    '!IS_ENABLED(X)'); the symbols of an #if with '||' form one group."""
    if kind == "ifdef":
        m = re.match(r"\s*(CONFIG_[A-Za-z0-9_]+)", expr)
        return [(m.group(1),)] if m else []
    if kind != "if":
        return []
    expr = re.sub(r"/\*.*?\*/|//.*", "", expr)
    names = [name for neg, name in SYMBOL.findall(expr) if not neg]
    if "||" in expr:
        return [tuple(sorted(set(names)))] if names else []
    return [(name,) for name in names]


def guards(lines):
    """For each line (0-based), the options its enclosing blocks need on."""
    stack = []      # per open block: the symbols its current branch needs
    out = []
    cont = ""
    for line in lines:
        out.append(sorted({s for frame in stack for s in frame}))
        text = cont + line
        if text.rstrip().endswith("\\"):
            cont = text.rstrip()[:-1] + " "
            continue
        cont = ""
        m = DIRECTIVE.match(text)
        if not m:
            continue
        kind, expr = m.group(1), m.group(2)
        if kind in ("if", "ifdef", "ifndef"):
            stack.append(positive_symbols(kind, expr))
        elif kind in ("elif", "else"):
            if stack:
                stack[-1] = []
        elif kind == "endif":
            if stack:
                stack.pop()
    return out


def added_lines(tree, base, path):
    """1-based numbers of the lines of PATH (in the work tree's HEAD) that
    base..HEAD adds."""
    diff = subprocess.run(["git", "-C", tree, "diff", "-U0", base, "HEAD", "--", path],
                          capture_output=True, text=True, check=True).stdout
    nums = []
    for m in re.finditer(r"^@@ -\S+ \+(\d+)(?:,(\d+))? @@", diff, re.M):
        start, count = int(m.group(1)), int(m.group(2) or 1)
        nums.extend(range(start, start + count))
    return nums


def touched_sources(tree, base):
    out = subprocess.run(["git", "-C", tree, "diff", "--name-only", base, "HEAD", "--",
                          "*.c", "*.h", ":!tools", ":!Documentation"],
                         capture_output=True, text=True, check=True).stdout
    return out.split()


def needed_options(tree, base, files):
    """{('CONFIG_A', ...): number of added lines that need one of them on}"""
    need = {}
    for path in files:
        text = subprocess.run(["git", "-C", tree, "show", f"HEAD:{path}"],
                              capture_output=True, text=True, check=True).stdout
        g = guards(text.split("\n"))
        for n in added_lines(tree, base, path):
            for sym in g[n - 1] if n - 1 < len(g) else []:
                need[sym] = need.get(sym, 0) + 1
    return need


def config_values(path):
    vals = {}
    with open(path) as f:
        for line in f:
            m = re.match(r"^(CONFIG_[A-Za-z0-9_]+)=(.*)", line)
            if m:
                vals[m.group(1)] = m.group(2)
    return vals


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.cppcover", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tree", required=True)
    p.add_argument("--base", default="base")
    p.add_argument("--config", required=True, help="the .config the build used")
    p.add_argument("files", nargs="*", help="default: every .c and .h the series touches")
    a = p.parse_args(argv)
    files = a.files or touched_sources(a.tree, a.base)
    need = needed_options(a.tree, a.base, files)
    have = config_values(a.config)
    missing = 0
    for group in sorted(need):
        on = [s for s in group if have.get(s) in ("y", "m")]
        missing += not on
        name = "|".join(group)
        print(f"{name}={have[on[0]] if on else '(NOT SET)'}  {need[group]} added lines"
              f"{'' if on else ': this build does not compile them'}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
