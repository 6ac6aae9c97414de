"""Run one stage of 'make test': time it and record what it counted.

    python3 -m zlctool.stage RESULTS_DIR NAME [--pytest] -- command...

The command's output streams through.  When the command wrote
RESULTS_DIR/NAME.counts itself (the KUnit and selftest stages do), those
counts stand; with --pytest they are read from pytest's closing line;
otherwise the stage is one check, passed when the command exits 0.
A failed command always counts at least one failure.
"""

import os
import re
import subprocess
import sys
import time

from . import summary


def pytest_counts(lines):
    """(passed, failed, skipped) from pytest's closing line, with -q or not:
    '58 passed in 2.98s' or '== 2 failed, 3 passed in 1s =='."""
    for line in reversed(lines):
        if re.match(r"^[= ]*(\d+ \w+(, )?)+.* in [\d.]+s", line) or "no tests ran" in line:
            get = lambda k: sum(int(n) for n in re.findall(rf"(\d+) {k}", line))
            return get("passed"), get("failed") + get("error"), get("skipped")
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv or len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    sep = argv.index("--")
    opts, cmd = argv[:sep], argv[sep + 1:]
    results, name = opts[0], opts[1]
    is_pytest = "--pytest" in opts[2:]
    counts_file = os.path.join(results, f"{name}.counts")
    os.makedirs(results, exist_ok=True)
    if os.path.exists(counts_file):
        os.unlink(counts_file)

    print(f"==> {name}: {' '.join(cmd)}", flush=True)
    t0 = time.monotonic()
    lines = []
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for raw in proc.stdout:
        line = raw.decode("utf-8", "replace")
        lines.append(line.rstrip("\n"))
        sys.stdout.write(line)
        sys.stdout.flush()
    rc = proc.wait()
    elapsed = time.monotonic() - t0

    if is_pytest:
        c = pytest_counts(lines) or (0, 1, 0)
        passed, failed, skipped = c
        if rc and not failed:
            failed = 1
        summary.write(counts_file, passed, failed, skipped)
    elif os.path.exists(counts_file):
        c = summary.read(counts_file)
        if rc and not c["failed"]:
            summary.write(counts_file, c["passed"], 1, c["skipped"])
    else:
        summary.write(counts_file, 0 if rc else 1, 1 if rc else 0, 0)
    c = summary.read(counts_file)
    print(f"<== {name}: {'ok' if rc == 0 else 'FAILED (exit %d)' % rc} in {elapsed:.0f}s "
          f"({c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped)", flush=True)
    with open(os.path.join(results, "timings"), "a") as f:
        f.write(f"{name} {elapsed:.0f}s {'ok' if rc == 0 else 'failed'}\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
