"""Guests: the one layer between the tooling and QEMU.

Every guest run goes through here: KUnit, the kselftests, hotplug, the
benchmarks, 'make run' and 'make shell'.

  run()      boots a kernel under QEMU (TCG) with a Topology and a busybox
             initramfs: zlctool/in_guest/init as /init, the scripts beside it
             in /scripts, the given binaries in /bin and the command in
             /cmd.  The console streams into a log kept under
             build/test-results/ (its first line is the QEMU command, shell
             quoted); a kernel oops, WARNING, BUG, panic, lockup or hang
             raises GuestError with the excerpt, decoded by the kernel's
             scripts/decode_stacktrace.sh when vmlinux is at hand.
  results()  the KTAP/TAP results of a console, parsed by the kernel's own
             tools/testing/kunit/kunit_parser.py.
  Progress   a stage's progress lines: which step, elapsed time, ETA.

As a command:

  python3 -m zlctool.guest --kernel bzImage --topology 4 -- cat /proc/zoneinfo
  python3 -m zlctool.guest --kernel bzImage --topology 4 --shell
  python3 -m zlctool.guest --kernel bzImage --numa 1G,cpus=0-1 --numa 1G --dry-run
"""

import argparse
import contextlib
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from . import topology

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The base the tooling works on: base.mk's BASE, TREE and OUT, which the
# Makefile exports (7.3, build/linux-7.3 and build/7.3 by default).
BASE = os.environ.get("BASE", "7.3")
TREE = os.path.join(TOP, os.environ.get("TREE", f"build/linux-{BASE}"))
OUT = os.path.join(TOP, os.environ.get("OUT", f"build/{BASE}"))
# Guest consoles: build/test-results/BASE/STAGE/NAME.log.
RESULTS = os.path.join(TOP, "build", "test-results", BASE)
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "in_guest")
EXIT_MARK = "ZLC-GUEST-EXIT="
# QEMU counts instructions and the guest clock follows the count: 1 ns each.
ICOUNT_ARGS = ["-icount", "shift=0,sleep=off"]
HEARTBEAT = 60

# Console lines that fail a run whatever the command returned.
TROUBLE = re.compile(
    r"Kernel panic|Oops:|BUG:|WARNING:|general protection fault|"
    r"Unable to handle kernel|kernel BUG at|INFO: task .* blocked|"
    r"RCU detected stall|watchdog: BUG: soft lockup|UBSAN:|KASAN:|KCSAN:|"
    r"invoked oom-killer|Out of memory")
KCSAN_REPORT = re.compile(r"BUG: KCSAN: ")


class GuestError(RuntimeError):
    """The guest could not be run, or it crashed or hung."""


# The machines a guest runs on, by the kernel's architecture: the kernel
# image's path says which (build/X/arch/arm64/boot/Image).  arm64 guests
# boot QEMU's virt board, which gives Linux the NUMA nodes through the
# device tree; their busybox is Debian's arm64 one (scripts/deps.sh arm64).
ARCHES = {
    "x86_64": dict(qemu="qemu-system-x86_64", package="qemu-system-x86",
                   machine=["-machine", "pc"], console="ttyS0"),
    "arm64": dict(qemu="qemu-system-aarch64", package="qemu-system-arm",
                  machine=["-machine", "virt,gic-version=3", "-cpu", "cortex-a57"],
                  console="ttyAMA0"),
}


def arch_of(kernel):
    """'arm64' for a kernel image under arch/arm64/, else 'x86_64'."""
    parts = os.path.abspath(kernel).split(os.sep)
    return "arm64" if "arch" in parts and parts[parts.index("arch") + 1:][:1] == ["arm64"] \
        else "x86_64"


# --- progress -------------------------------------------------------------

def fmt_time(seconds):
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    """Progress lines of a stage of several steps: '[kunit] 2/5 4n:
    started, 3m10s elapsed, about 7m left'.  The estimate is the mean time
    of the steps done so far, or the caller's guess before the first."""

    def __init__(self, stage, steps, guess=None, out=sys.stdout):
        self.stage, self.steps, self.guess, self.out = stage, steps, guess, out
        self.t0 = time.monotonic()
        self.done = 0

    def eta(self):
        elapsed = time.monotonic() - self.t0
        per = elapsed / self.done if self.done else self.guess
        if per is None:
            return ""
        return f", about {fmt_time(per * (self.steps - self.done))} left"

    def start(self, what):
        print(f"[{self.stage}] {self.done + 1}/{self.steps} {what}: started, "
              f"{fmt_time(time.monotonic() - self.t0)} elapsed{self.eta()}",
              file=self.out, flush=True)

    def finish(self, what, verdict=""):
        self.done += 1
        print(f"[{self.stage}] {self.done}/{self.steps} {what}: {verdict or 'done'}, "
              f"{fmt_time(time.monotonic() - self.t0)} elapsed{self.eta()}",
              file=self.out, flush=True)


# --- trouble --------------------------------------------------------------

def kcsan_block(lines, i):
    """The lines of the KCSAN report starting at line i (to its ==== rule)."""
    end = i + 1
    while end < len(lines) and end - i < 80 and not lines[end].lstrip().startswith("====="):
        end += 1
    return lines[i:end + 1]


def trouble(lines, context=25, kcsan_scope=None):
    """The console lines around the first sign of trouble, or None.

    With kcsan_scope (a regex), a KCSAN report counts only when it names
    something the regex matches; others are taken as some other code's."""
    for i, line in enumerate(lines):
        if not TROUBLE.search(line):
            continue
        if kcsan_scope is not None and KCSAN_REPORT.search(line):
            block = kcsan_block(lines, i)
            if not any(re.search(kcsan_scope, l) for l in block):
                continue
            return block
        return lines[max(0, i - 3):i + context]
    return None


def unrelated_kcsan(lines, kcsan_scope):
    """First lines of the KCSAN reports outside kcsan_scope."""
    return [line.strip() for i, line in enumerate(lines)
            if KCSAN_REPORT.search(line)
            and not any(re.search(kcsan_scope, l) for l in kcsan_block(lines, i))]


def vmlinux_of(kernel):
    """build/X/arch/x86/boot/bzImage (or arch/arm64/boot/Image) ->
    build/X/vmlinux, if it is there."""
    d = os.path.dirname(os.path.abspath(kernel))
    for _ in range(3):
        d = os.path.dirname(d)
    path = os.path.join(d, "vmlinux")
    return path if os.path.isfile(path) else None


def decode(excerpt, kernel):
    """The excerpt with its stack addresses decoded to files and lines by
    scripts/decode_stacktrace.sh, or as it is when that cannot be done."""
    script = os.path.join(TREE, "scripts", "decode_stacktrace.sh")
    vmlinux = vmlinux_of(kernel)
    if not (vmlinux and os.path.isfile(script) and shutil.which("addr2line")):
        return excerpt
    try:
        r = subprocess.run([script, vmlinux, TREE], input="\n".join(excerpt) + "\n",
                           capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return excerpt
    return r.stdout.splitlines() if r.returncode == 0 and r.stdout.strip() else excerpt


# --- results --------------------------------------------------------------

def kunit_parser():
    """The kernel's tools/testing/kunit/kunit_parser, its printing muted."""
    path = os.path.join(TREE, "tools", "testing", "kunit")
    if not os.path.isfile(os.path.join(path, "kunit_parser.py")):
        raise GuestError(f"no {os.path.relpath(path, TOP)}/kunit_parser.py: run 'make tree'")
    if path not in sys.path:
        sys.path.insert(0, path)
    import kunit_parser
    import kunit_printer
    if hasattr(kunit_printer, "null_printer"):
        # 6.13 on: parse_run_tests() takes the printer.
        kunit_parser.zlc_parse = lambda lines: kunit_parser.parse_run_tests(
            lines, kunit_printer.null_printer)
    else:
        kunit_parser.stdout = kunit_printer.Printer(io.StringIO())
        kunit_parser.zlc_parse = kunit_parser.parse_run_tests
    return kunit_parser


PLAN_SKIP = re.compile(r"^\s*1\.\.0\s*#\s*SKIP\s*(.*)$")
# kselftest's ksft_test_result_skip() prints "ok 2 # SKIP why", a result
# without a description, which kunit_parser does not take as a result.
UNNAMED = re.compile(r"^(\s*(?:not )?ok (\d+)) #")


class Results:
    """The results of one console: cases [(name, 'PASS'|'FAIL'|'SKIP',
    reason)], a whole-run skip's reason (a '1..0 # SKIP why' plan), and
    the parser's errors (a crash mid-suite, a missing plan line...)."""

    def __init__(self, cases, plan_skip=None, errors=0, found=True):
        self.cases, self.plan_skip, self.errors, self.found = cases, plan_skip, errors, found

    def count(self, status):
        return sum(1 for _, s, _ in self.cases if s == status)

    @property
    def passed(self):
        return self.count("PASS")

    @property
    def failed(self):
        return self.count("FAIL")

    @property
    def skipped(self):
        return self.count("SKIP")


def results(lines):
    """KTAP/TAP results of console lines, parsed by kunit_parser."""
    kp = kunit_parser()
    plan_skip = next((m.group(1).strip() for m in map(PLAN_SKIP.match, lines) if m), None)
    lines = [UNNAMED.sub(r"\1 case \2 #", l) for l in lines]
    test = kp.zlc_parse(lines)
    if test.name == "<missing>":
        return Results([], plan_skip, 0, found=False)
    status = {kp.TestStatus.SUCCESS: "PASS", kp.TestStatus.SKIPPED: "SKIP"}
    reason = re.compile(r"#\s*SKIP\s*(.*)$")
    cases = []

    def walk(t, prefix):
        name = f"{prefix}.{t.name}" if prefix else t.name
        if not t.subtests:
            why = ""
            if t.status == kp.TestStatus.SKIPPED:
                m = next(filter(None, (reason.search(l) for l in lines
                                       if re.search(rf"ok \d+ {re.escape(t.name)}\b", l))), None)
                why = m.group(1).strip() if m else ""
            cases.append((name, status.get(t.status, "FAIL"), why))
        for sub in t.subtests:
            walk(sub, name)

    for t in test.subtests:
        walk(t, "")
    return Results(cases, plan_skip, test.counts.errors)


# --- running a guest ------------------------------------------------------

def find_busybox(arch="x86_64"):
    if arch == "arm64":
        path = os.path.join(TOP, "build", "tools", "arm64", "bin", "busybox")
        if not os.path.isfile(path):
            raise GuestError("no arm64 busybox in build/tools/arm64: run scripts/deps.sh arm64")
        return path
    for path in ("/bin/busybox", "/usr/bin/busybox"):
        if os.path.exists(path):
            out = subprocess.run(["file", "-L", path], capture_output=True, text=True).stdout \
                if shutil.which("file") else "statically linked"
            if "dynamically linked" not in out:
                return path
    raise GuestError("no static busybox: install busybox-static (make deps)")


def host_program(name):
    """A dynamically linked program of this machine and the shared libraries
    it needs, at the paths it needs them: {guest path: host path}, for
    build_initramfs()'s copies."""
    binary = shutil.which(name)
    if not binary:
        raise GuestError(f"{name} is missing: install it (make deps)")
    out = {f"/bin/{name}": os.path.realpath(binary)}
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    for m in re.finditer(r"(/\S+) \(0x", ldd):
        out[m.group(1)] = os.path.realpath(m.group(1))
    return out


def build_initramfs(dest, binaries=(), command="true", files=None, copies=None,
                    arch="x86_64"):
    """A gzipped newc cpio: busybox, zlctool/in_guest/init as /init, the
    scripts of zlctool/in_guest/ in /scripts, binaries in /bin, files
    ({path: text}), copies ({guest path: host file}, for a dynamically
    linked program and its libraries) and the command in /cmd."""
    root = tempfile.mkdtemp(prefix="zlc-initramfs-")
    try:
        for d in ("bin", "sbin", "proc", "sys", "dev", "tmp", "etc", "scripts"):
            os.makedirs(os.path.join(root, d))
        shutil.copy2(find_busybox(arch), os.path.join(root, "bin", "busybox"))
        shutil.copy2(os.path.join(SCRIPTS, "init"), os.path.join(root, "init"))
        os.chmod(os.path.join(root, "init"), 0o755)
        for name in os.listdir(SCRIPTS):
            if name.endswith(".sh"):
                shutil.copy2(os.path.join(SCRIPTS, name), os.path.join(root, "scripts", name))
        for b in binaries:
            if not os.path.isfile(b):
                raise GuestError(f"guest binary {b} does not exist")
            shutil.copy2(b, os.path.join(root, "bin", os.path.basename(b)))
        for name, src in (copies or {}).items():
            path = os.path.join(root, name.lstrip("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copy2(src, path)
        for name, text in (files or {}).items():
            path = os.path.join(root, name.lstrip("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        with open(os.path.join(root, "cmd"), "w") as f:
            f.write(command + "\n")
        names = subprocess.run(["find", "."], cwd=root, capture_output=True,
                               text=True, check=True).stdout
        with open(dest, "wb") as out:
            cpio = subprocess.Popen(["cpio", "--quiet", "-o", "-H", "newc"], cwd=root,
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            gz = subprocess.Popen(["gzip", "-1"], stdin=cpio.stdout, stdout=out)
            cpio.stdout.close()
            cpio.communicate(names.encode())
            gz.wait()
            if cpio.returncode or gz.returncode:
                raise GuestError("building the initramfs failed")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def qemu_command(kernel, initrd, topo, append="", extra=(), interactive=False):
    arch = ARCHES[arch_of(kernel)]
    cmdline = (f"console={arch['console']} panic=-1 oops=panic loglevel=6 rdinit=/init "
               "printk.time=1 " + append).strip()
    serial = ["-serial", "mon:stdio"] if interactive else ["-serial", "stdio", "-monitor", "none"]
    return ([arch["qemu"], "-accel", "tcg", *arch["machine"],
             "-nodefaults", "-no-reboot", "-display", "none", *serial,
             "-kernel", kernel, "-initrd", initrd, "-append", cmdline]
            + topo.qemu_args() + list(extra))


class Result:
    def __init__(self, status, lines, log, elapsed):
        self.status = status        # the guest command's exit status
        self.lines = lines          # the console, line by line
        self.log = log              # where the console was kept
        self.elapsed = elapsed


def log_path(stage, name):
    return os.path.join(RESULTS, stage, re.sub(r"[^A-Za-z0-9_.-]+", "-", name) + ".log")


def _kill(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def run(kernel, topo, command, binaries=(), timeout=600, stage="guest", name=None,
        log=None, append="", echo=False, extra=(), files=None, on_line=None,
        kcsan_scope=None, quiet=False, copies=None):
    """Boot, run command in the guest, return a Result; raise GuestError
    on a crash, a warning, a hang or a guest that never reported its exit
    status.  The console is kept in log, by default
    build/test-results/STAGE/NAME.log (NAME: the topology's label)."""
    if not os.path.isfile(kernel):
        raise GuestError(f"no kernel image at {kernel}")
    arch = arch_of(kernel)
    if not shutil.which(ARCHES[arch]["qemu"]):
        raise GuestError(f"{ARCHES[arch]['qemu']} is missing: install {ARCHES[arch]['package']}"
                         + (" (make deps)" if arch == "x86_64" else " (scripts/deps.sh arm64)"))
    log = log or log_path(stage, name or topo.label())
    quiet = quiet or bool(echo)
    label = f"[{stage} {name or topo.label()}]"
    work = tempfile.mkdtemp(prefix="zlc-guest-")
    try:
        initrd = os.path.join(work, "initramfs.cpio.gz")
        build_initramfs(initrd, binaries, command, files, copies, arch)
        cmd = qemu_command(kernel, initrd, topo, append, extra)
        os.makedirs(os.path.dirname(os.path.abspath(log)), exist_ok=True)
        lines = []
        start = time.monotonic()
        beat = [start]
        running = False
        with open(log, "w") as logf:
            logf.write("$ " + shlex.join(cmd) + "\n")
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            timer = threading.Timer(timeout, lambda: _kill(proc))
            timer.start()
            try:
                for raw in proc.stdout:
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    lines.append(line)
                    logf.write(line + "\n")
                    logf.flush()
                    if echo == "command":
                        # What the command printed: from the marker to its exit.
                        if "zlc-guest: running /cmd" in line or EXIT_MARK in line:
                            running = EXIT_MARK not in line
                        elif running:
                            print(line, flush=True)
                    elif echo:
                        print(line, flush=True)
                    if on_line:
                        on_line(line)
                    now = time.monotonic()
                    if not quiet and now - beat[0] >= HEARTBEAT:
                        beat[0] = now
                        print(f"{label} {fmt_time(now - start)} in the guest, "
                              f"last line: {line.strip()[:90]}", flush=True)
                proc.wait()
            except BaseException:
                _kill(proc)
                raise
            finally:
                timer.cancel()
        elapsed = time.monotonic() - start
        report = trouble(lines, kcsan_scope=kcsan_scope)
        if report:
            raise GuestError("the guest kernel reported trouble (log: %s):\n%s"
                             % (os.path.relpath(log, TOP),
                                "\n".join("  | " + l for l in decode(report, kernel))))
        status = None
        for line in lines:
            m = re.search(re.escape(EXIT_MARK) + r"(\d+)", line)
            if m:
                status = int(m.group(1))
        if status is None:
            why = (f"hung: no exit status after {timeout}s" if elapsed >= timeout
                   else f"QEMU exited ({proc.returncode}) before the command finished")
            raise GuestError("the guest %s (log: %s); last lines:\n%s"
                             % (why, os.path.relpath(log, TOP),
                                "\n".join("  | " + l for l in lines[-25:])))
        return Result(status, lines, log, elapsed)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def shell(kernel, topo, binaries=(), append="", extra=()):
    """Boot with the console on this terminal and a shell in the guest;
    the guest powers off when the shell exits (or on Ctrl-A X)."""
    if not os.path.isfile(kernel):
        raise GuestError(f"no kernel image at {kernel}")
    work = tempfile.mkdtemp(prefix="zlc-shell-")
    try:
        initrd = os.path.join(work, "initramfs.cpio.gz")
        build_initramfs(initrd, binaries, "setsid cttyhack sh -l", arch=arch_of(kernel))
        cmd = qemu_command(kernel, initrd, topo, append, extra, interactive=True)
        print("$ " + shlex.join(cmd), flush=True)
        return subprocess.call(cmd)
    finally:
        shutil.rmtree(work, ignore_errors=True)


KERNELS = {"patched": os.path.join(OUT, "guest/arch/x86/boot/bzImage"),
           "base": os.path.join(OUT, "guest-base/arch/x86/boot/bzImage")}


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python3 -m zlctool.guest",
        description="Boot a kernel under QEMU (TCG) with a NUMA topology, run a command "
                    "or a shell in it.")
    p.add_argument("--kernel", default="patched",
                   help="bzImage, or 'patched' / 'base' for build/BASE/guest(-base) (default patched)")
    topology.add_arguments(p, default="1")
    p.add_argument("--bin", action="append", default=[], help="binary to put in /bin")
    p.add_argument("--append", default="", help="extra kernel command line")
    p.add_argument("--icount", action="store_true",
                   help="count instructions (QEMU -icount shift=0,sleep=off), as make bench ICOUNT=1")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--log", help="console log (default build/test-results/run/TOPOLOGY.log)")
    p.add_argument("--shell", action="store_true", help="an interactive shell in the guest")
    p.add_argument("--dry-run", action="store_true", help="print the QEMU command, do not run it")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- command to run in the guest")
    args = p.parse_args(argv)
    words = args.command[1:] if args.command[:1] == ["--"] else args.command
    # One word is a shell command line as it is ('make run' passes CMD so);
    # several are quoted back into one.
    command = (words[0] if len(words) == 1 else shlex.join(words)) if words else "true"
    try:
        topo = topology.from_arguments(args)
    except topology.TopologyError as e:
        print(f"topology: {e}", file=sys.stderr)
        return 2
    kernel = os.path.join(TOP, KERNELS[args.kernel]) if args.kernel in KERNELS else args.kernel
    if args.dry_run:
        print(shlex.join(qemu_command(kernel, "INITRAMFS", topo, args.append,
                                      interactive=args.shell)))
        return 0
    try:
        if args.shell:
            return shell(kernel, topo, args.bin, args.append)
        res = run(kernel, topo, command, args.bin, args.timeout, stage="run",
                  log=args.log, append=args.append, echo="command",
                  extra=ICOUNT_ARGS if args.icount else ())
    except GuestError as e:
        print(f"guest: {e}", file=sys.stderr)
        return 1
    print(f"guest: {topo.describe()}: command exited {res.status} after "
          f"{fmt_time(res.elapsed)} (console: {os.path.relpath(res.log, TOP)})")
    return res.status


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
