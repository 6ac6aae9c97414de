import gzip
import os
import subprocess

import pytest

from zlctool import qemu
from zlctool.topology import Topology


def test_trouble_report_finds_panic_with_context():
    lines = ["boot", "ok", "Kernel panic - not syncing: Attempted to kill init!",
             "CPU: 0 PID: 1", "Call Trace:"]
    report = qemu.trouble_report(lines)
    assert report[0] == "boot"
    assert "Kernel panic - not syncing: Attempted to kill init!" in report
    assert "Call Trace:" in report


@pytest.mark.parametrize("line", [
    "[    1.0] WARNING: CPU: 1 PID: 5 at mm/page_alloc.c:100 foo+0x1/0x2",
    "[    1.0] BUG: unable to handle page fault for address: 0",
    "[    1.0] Oops: general protection fault, probably for non-canonical",
    "[    2.0] BUG: KCSAN: data-race in zlc_setup / zlc_mark_zone_full",
])
def test_trouble_lines(line):
    assert qemu.trouble_report(["x", line]) is not None


def test_clean_console_is_not_trouble():
    assert qemu.trouble_report(["Linux version 6.12", "Freeing unused kernel",
                                "warning: this is lower case", "zlc-guest: running"]) is None


def test_qemu_command_uses_tcg_and_topology():
    cmd = qemu.qemu_command("bz", "rd", Topology.make(2, "2G", "2"), "foo=1")
    assert cmd[cmd.index("-accel") + 1] == "tcg"
    assert "kvm" not in " ".join(cmd)
    assert cmd[cmd.index("-append") + 1].endswith("foo=1")
    assert "node,nodeid=1,memdev=m1" in cmd


def test_initramfs_holds_init_cmd_and_binaries(tmp_path):
    binary = tmp_path / "hello"
    binary.write_text("#!/bin/sh\necho hi\n")
    dest = tmp_path / "rd.cpio.gz"
    qemu.build_initramfs(str(dest), [str(binary)], "hello; echo done",
                         files={"/etc/motd": "zlc\n"})
    listing = subprocess.run(["cpio", "-it", "--quiet"], input=gzip.decompress(dest.read_bytes()),
                             capture_output=True, check=True).stdout.decode().split()
    for name in ("init", "cmd", "bin/busybox", "bin/hello", "etc/motd", "proc", "sys"):
        assert name in listing
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["cpio", "-id", "--quiet"], input=gzip.decompress(dest.read_bytes()),
                   cwd=out, check=True)
    assert (out / "cmd").read_text() == "hello; echo done\n"
    assert qemu.EXIT_MARK in (out / "init").read_text()
    assert os.access(out / "init", os.X_OK)


def test_missing_kernel_is_a_clear_error(tmp_path):
    with pytest.raises(qemu.GuestError, match="no kernel image"):
        qemu.run(str(tmp_path / "nope"), Topology.make(1, "512M", "1"), "true")


def test_cli_rejects_bad_topology_before_qemu(capsys):
    assert qemu.main(["--kernel", "/nonexistent", "--nodes", "200", "--", "true"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "node count must be 1..64" in err[0]


KCSAN_OURS = ["==================================================================",
              "BUG: KCSAN: data-race in zlc_next_zone / zlc_mark_zone_full",
              "write to 0xffff888 of 8 bytes by task 1 on cpu 0:",
              " zlc_mark_zone_full+0x5/0x10",
              "=================================================================="]
KCSAN_OTHER = ["BUG: KCSAN: data-race in tick_sched_do_timer / tick_nohz_idle_stop_tick",
               " tick_sched_do_timer+0x1/0x2",
               "=================================================================="]


def test_kcsan_scope_keeps_only_our_reports():
    scope = r"zlc_|get_page_from_freelist"
    assert qemu.trouble_report(KCSAN_OTHER, kcsan_scope=scope) is None
    assert qemu.unrelated_kcsan(KCSAN_OTHER, scope) == [KCSAN_OTHER[0]]
    report = qemu.trouble_report(KCSAN_OTHER + KCSAN_OURS, kcsan_scope=scope)
    assert report[0].startswith("BUG: KCSAN: data-race in zlc_next_zone")
    # Without a scope every KCSAN report is trouble.
    assert qemu.trouble_report(KCSAN_OTHER) is not None


def test_other_trouble_still_counts_with_a_kcsan_scope():
    lines = KCSAN_OTHER + ["WARNING: CPU: 0 PID: 1 at mm/page_alloc.c:1 x"]
    assert "WARNING" in qemu.trouble_report(lines, kcsan_scope="zlc_")[3]


def test_selftest_tap_counting():
    from zlctool.selftest import count_tap
    lines = ["TAP version 13", "1..3", "# table", "ok 1 every touched word read back (0 bad)",
             "ok 2 # SKIP memory did not spill", "not ok 3 zlc_skip stayed flat (5)",
             "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0"]
    assert count_tap(lines) == (1, 1, 1, None)
    assert count_tap(["TAP version 13", "1..0 # SKIP needs at least 2 NUMA nodes with memory, has 1"]) \
        == (0, 0, 0, "needs at least 2 NUMA nodes with memory, has 1")
