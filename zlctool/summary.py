"""Counts of what each stage of 'make test' ran, and their sum.

Every stage writes one small file 'passed N failed M skipped K' into a
results directory; 'python3 -m zlctool.summary DIR' adds them up and prints
the closing line 'test: N passed, M failed[, K skipped]', exiting non-zero
when anything failed or nothing ran at all.
"""

import os
import re
import sys


def write(path, passed, failed, skipped=0):
    if not path:
        return
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(f"passed {passed} failed {failed} skipped {skipped}\n")


def tally(results):
    """(passed, failed, skipped) of TAP results given as (status, text)
    pairs: status 'ok' or 'not ok', text the rest of the line."""
    passed = failed = skipped = 0
    for status, text in results:
        if "# SKIP" in text:
            skipped += 1
        elif status == "ok":
            passed += 1
        else:
            failed += 1
    return passed, failed, skipped


def finish(label, path, passed, failed, skipped=0):
    """A test runner's last step: write its counts to path, print them
    after [label], and return its exit status (1 when anything failed)."""
    write(path, passed, failed, skipped)
    print(f"[{label}] {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


def read(path):
    text = open(path).read()
    counts = {}
    for key in ("passed", "failed", "skipped"):
        m = re.search(rf"\b{key} (\d+)", text)
        if not m:
            raise ValueError(f"{path}: no '{key} N' in {text.strip()!r}")
        counts[key] = int(m.group(1))
    return counts


def total(directory):
    sums = {"passed": 0, "failed": 0, "skipped": 0}
    stages = []
    if os.path.isdir(directory):
        for name in sorted(os.listdir(directory)):
            if name.endswith(".counts"):
                c = read(os.path.join(directory, name))
                stages.append((name[:-len(".counts")], c))
                for k in sums:
                    sums[k] += c[k]
    return sums, stages


def line(sums):
    text = f"test: {sums['passed']} passed, {sums['failed']} failed"
    if sums["skipped"]:
        text += f", {sums['skipped']} skipped"
    return text


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python3 -m zlctool.summary RESULTS_DIR", file=sys.stderr)
        return 2
    sums, stages = total(argv[0])
    for name, c in stages:
        print(f"  {name:<24} {c['passed']:>4} passed {c['failed']:>3} failed "
              f"{c['skipped']:>3} skipped")
    if not stages:
        sums["failed"] += 1
        print("  no stage recorded any result", file=sys.stderr)
    print(line(sums))
    return 1 if sums["failed"] or not sums["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
