"""make compare: named runs side by side, mmtests style.

A named run, results/NAME/, holds the hog's passes (run.json, reported by
zlctool.report), the workloads' samples (workloads.json, zlctool.workloads)
or both.  This module sits above the two: it compares the hog runs, then
the workload runs, and remakes either's reports:

  python3 -m zlctool.compare results/A results/B     compare (make compare)
  python3 -m zlctool.compare --remake results/NAME   write NAME's reports again
"""

import argparse
import os
import sys

from . import report, workloads


def main(argv=None):
    p = argparse.ArgumentParser(prog="python3 -m zlctool.compare", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="run directories (results/NAME) or run.json files")
    p.add_argument("--remake", action="store_true",
                   help="write each run's tables, plots and headline again")
    args = p.parse_args(argv)
    try:
        hogs = [(path, report.load_run(path)) for path in args.runs
                if os.path.isfile(os.path.join(path, "run.json")) or path.endswith(".json")]
        works = [(os.path.basename(os.path.normpath(path)), workloads.load(path)[0])
                 for path in args.runs if os.path.isfile(os.path.join(path, "workloads.json"))]
        if not hogs and not works:
            report.load_run(args.runs[0])      # says what is missing
        if args.remake:
            for path, (name, data) in hogs:
                print(report.write_run(path, data["records"], data["meta"]))
            for path in args.runs:
                if os.path.isfile(os.path.join(path, "workloads.json")):
                    workloads.main([path])
            return 0
        if hogs:
            print(report.compare([run for _, run in hogs]))
        if works:
            print(("\n" if hogs else "") + workloads.compare(works))
    except ValueError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
