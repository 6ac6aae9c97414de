"""Boot a kernel under QEMU (TCG) with a NUMA topology and run one command.

The guest is a busybox-static initramfs with the given binaries in /bin.
Its /init runs the command, prints its exit status behind a marker and
powers off.  The console goes to a log file as it comes; the run fails when
the kernel panics, oopses, hits a BUG or a WARNING, or when the guest hangs
past the timeout.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

EXIT_MARK = "ZLC-GUEST-EXIT="

# Console lines that fail a run whatever the command returned.
TROUBLE = re.compile(
    r"Kernel panic|Oops:|BUG:|WARNING:|general protection fault|"
    r"Unable to handle kernel|kernel BUG at|INFO: task .* blocked|"
    r"RCU detected stall|watchdog: BUG: soft lockup|UBSAN:|KASAN:|KCSAN:|"
    r"invoked oom-killer|Out of memory")

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
cd /
echo "zlc-guest: running /cmd"
sh /cmd
echo "%s$?"
sync
poweroff -f
""" % EXIT_MARK


class GuestError(RuntimeError):
    """The guest could not be run, or it crashed or hung."""


def find_busybox():
    for path in ("/bin/busybox", "/usr/bin/busybox"):
        if os.path.exists(path):
            out = subprocess.run(["file", "-L", path], capture_output=True, text=True).stdout \
                if shutil.which("file") else "statically linked"
            if "dynamically linked" not in out:
                return path
    raise GuestError("no static busybox: install busybox-static (make deps)")


def build_initramfs(dest, binaries=(), command="true", files=None):
    """Write a gzipped newc cpio with busybox, binaries in /bin and /cmd."""
    root = tempfile.mkdtemp(prefix="zlc-initramfs-")
    try:
        for d in ("bin", "sbin", "proc", "sys", "dev", "tmp", "etc"):
            os.makedirs(os.path.join(root, d))
        shutil.copy2(find_busybox(), os.path.join(root, "bin", "busybox"))
        for b in binaries:
            if not os.path.isfile(b):
                raise GuestError(f"guest binary {b} does not exist")
            shutil.copy2(b, os.path.join(root, "bin", os.path.basename(b)))
        for name, text in (files or {}).items():
            path = os.path.join(root, name.lstrip("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)
        with open(os.path.join(root, "init"), "w") as f:
            f.write(INIT)
        os.chmod(os.path.join(root, "init"), 0o755)
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


def qemu_command(kernel, initrd, topology, append="", extra=()):
    cmdline = ("console=ttyS0 panic=-1 oops=panic loglevel=6 rdinit=/init "
               "printk.time=1 " + append).strip()
    return (["qemu-system-x86_64", "-accel", "tcg", "-machine", "pc",
             "-nodefaults", "-no-reboot", "-display", "none",
             "-serial", "stdio", "-monitor", "none",
             "-kernel", kernel, "-initrd", initrd, "-append", cmdline]
            + topology.qemu_args() + list(extra))


KCSAN_REPORT = re.compile(r"BUG: KCSAN: ")


def kcsan_block(lines, i):
    """The lines of the KCSAN report starting at line i (to its ==== rule)."""
    end = i + 1
    while end < len(lines) and end - i < 80 and not lines[end].lstrip().startswith("====="):
        end += 1
    return lines[i:end + 1]


def trouble_report(lines, context=25, kcsan_scope=None):
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
    out = []
    for i, line in enumerate(lines):
        if KCSAN_REPORT.search(line):
            if not any(re.search(kcsan_scope, l) for l in kcsan_block(lines, i)):
                out.append(line.strip())
    return out


class Result:
    def __init__(self, status, lines, log, elapsed):
        self.status = status        # the guest command's exit status
        self.lines = lines          # the console, line by line
        self.log = log              # where the console was written
        self.elapsed = elapsed


def run(kernel, topology, command, binaries=(), timeout=600, log=None,
        append="", echo=False, extra=(), files=None, on_line=None, kcsan_scope=None):
    """Boot, run command in the guest, return a Result; raise GuestError
    on a crash, a hang or a guest that never reported its exit status."""
    if not os.path.isfile(kernel):
        raise GuestError(f"no kernel image at {kernel}")
    if not shutil.which("qemu-system-x86_64"):
        raise GuestError("qemu-system-x86_64 is missing: install qemu-system-x86 (make deps)")
    work = tempfile.mkdtemp(prefix="zlc-guest-")
    initrd = os.path.join(work, "initramfs.cpio.gz")
    try:
        build_initramfs(initrd, binaries, command, files)
        cmd = qemu_command(kernel, initrd, topology, append, extra)
        log = log or os.path.join(work, "console.log")
        os.makedirs(os.path.dirname(os.path.abspath(log)), exist_ok=True)
        lines = []
        start = time.monotonic()
        with open(log, "w") as logf:
            logf.write("$ " + " ".join(cmd) + "\n")
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
                    if echo:
                        print(line, flush=True)
                    if on_line:
                        on_line(line)
                proc.wait()
            except BaseException:
                _kill(proc)
                raise
            finally:
                timer.cancel()
        elapsed = time.monotonic() - start
        report = trouble_report(lines, kcsan_scope=kcsan_scope)
        if report:
            raise GuestError("the guest kernel reported trouble (log: %s):\n%s"
                             % (log, "\n".join("  | " + l for l in report)))
        status = None
        for line in lines:
            m = re.search(re.escape(EXIT_MARK) + r"(\d+)", line)
            if m:
                status = int(m.group(1))
        if status is None:
            why = (f"hung: no exit status after {timeout}s" if elapsed >= timeout
                   else f"QEMU exited ({proc.returncode}) before the command finished")
            raise GuestError("the guest %s (log: %s); last lines:\n%s"
                             % (why, log, "\n".join("  | " + l for l in lines[-25:])))
        return Result(status, lines, log, elapsed)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _kill(proc):
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main(argv=None):
    import argparse
    from .topology import Topology, TopologyError

    p = argparse.ArgumentParser(
        prog="python3 -m zlctool.qemu",
        description="Boot a kernel under QEMU TCG with a NUMA topology and run a command.")
    p.add_argument("--kernel", required=True, help="bzImage")
    p.add_argument("--nodes", default="1", help="node count (1..64)")
    p.add_argument("--mem", default="2G",
                   help="total memory split evenly, or a comma list, one size per node")
    p.add_argument("--mem-per-node", action="store_true",
                   help="a single --mem size is per node, not the total")
    p.add_argument("--cpus", default="2",
                   help="CPUs of node 0, or a comma list, one count per node")
    p.add_argument("--dist", help="distance matrix, rows separated by ';'")
    p.add_argument("--bin", action="append", default=[], help="binary to put in /bin")
    p.add_argument("--append", default="", help="extra kernel command line")
    p.add_argument("--timeout", type=int, default=600)
    p.add_argument("--log", help="console log file")
    p.add_argument("--quiet", action="store_true", help="do not echo the console")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- command to run in the guest")
    args = p.parse_args(argv)
    command = " ".join(a for a in args.command if a != "--") or "true"
    try:
        topo = Topology.make(args.nodes, args.mem, args.cpus, args.dist,
                             mem_is_total=not args.mem_per_node)
    except TopologyError as e:
        print(f"topology: {e}", file=sys.stderr)
        return 2
    try:
        res = run(args.kernel, topo, command, args.bin, args.timeout, args.log,
                  args.append, echo=not args.quiet)
    except GuestError as e:
        print(f"guest: {e}", file=sys.stderr)
        return 1
    print(f"guest: {topo.describe()}: command exited {res.status} after {res.elapsed:.1f}s")
    return res.status


if __name__ == "__main__":
    sys.exit(main())
