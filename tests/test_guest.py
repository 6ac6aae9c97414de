"""zlctool.guest: the console layer every guest run goes through."""

import gzip
import os
import shutil
import subprocess

import pytest

from zlctool import guest
from zlctool.topology import Topology

DATA = os.path.join(os.path.dirname(__file__), "data")


def console(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read().splitlines()


# --- KTAP/TAP through kunit_parser, on consoles captured here ---------------

def test_kunit_console_parses_every_case_with_its_skip_reason():
    r = guest.results(console("kunit-console.log"))
    assert (r.passed, r.failed, r.skipped, r.errors) == (14, 0, 4, 0)
    cases = {name: (status, why) for name, status, why in r.cases}
    assert cases["zonelist_cache.zlc_test_z_to_n"] == ("PASS", "")
    assert cases["zonelist_cache.zlc_test_allowed_nodes"] == \
        ("SKIP", "needs at least 3 online nodes with memory, has 2")


def test_a_suite_cut_short_by_a_crash_is_not_a_pass():
    lines = console("kunit-console.log")
    cut = next(i for i, l in enumerate(lines) if "ok 9 zlc_test_thp_failure" in l)
    r = guest.results(lines[:cut] + ["Kernel panic - not syncing: Fatal exception"])
    assert r.passed == 6 and r.failed >= 1
    assert not any(name.endswith("zlc_test_recovery") and status == "PASS"
                   for name, status, _ in r.cases)


def test_a_failed_case_fails():
    lines = [l.replace("    ok 3 zlc_test_zap", "    not ok 3 zlc_test_zap")
             for l in console("kunit-console.log")]
    r = guest.results(lines)
    assert r.failed == 1 and ("zonelist_cache.zlc_test_zap", "FAIL", "") in r.cases


def test_hotplug_console_rerun_ktap():
    from zlctool import hotplug
    lines = console("hotplug-console.log")
    passed, failed, skipped = hotplug.count_rerun(lines)
    assert (passed, failed, skipped) == (16, 0, 2)
    assert hotplug.rerun_reported(lines)


def test_kselftest_consoles_captured_here():
    r = guest.results(console("memhog-4n-console.log"))
    assert (r.passed, r.failed, r.skipped, r.plan_skip, r.errors) == (4, 0, 0, None, 0)
    assert r.cases[1][0].startswith("zlc_skip rose with the cache on")
    r = guest.results(console("memhog-1n-console.log"))
    assert r.plan_skip == "needs at least 2 NUMA nodes with memory, has 1"
    assert (r.passed, r.failed) == (0, 0)


def test_kselftest_tap_and_a_plan_skip():
    r = guest.results(["TAP version 13", "1..3", "# table",
                       "ok 1 every touched word read back (0 bad)",
                       "ok 2 # SKIP memory did not spill", "not ok 3 zlc_skip stayed flat (5)",
                       "# Totals: pass:1 fail:1 xfail:0 xpass:0 skip:1 error:0"])
    assert (r.passed, r.failed, r.skipped, r.plan_skip) == (1, 1, 1, None)
    r = guest.results(["zlc-guest: running /cmd", "TAP version 13",
                       "1..0 # SKIP needs at least 2 NUMA nodes with memory, has 1",
                       "ZLC-GUEST-EXIT=4"])
    assert r.plan_skip == "needs at least 2 NUMA nodes with memory, has 1"
    assert r.passed == r.failed == 0


def test_a_console_without_tap_has_no_results():
    r = guest.results(["Linux version 6.12", "zlc-guest: running /cmd", "ZLC-GUEST-EXIT=0"])
    assert not r.found and r.cases == []


# --- trouble ---------------------------------------------------------------

def test_trouble_finds_panic_with_context():
    lines = ["boot", "ok", "Kernel panic - not syncing: Attempted to kill init!",
             "CPU: 0 PID: 1", "Call Trace:"]
    report = guest.trouble(lines)
    assert report[0] == "boot" and "Call Trace:" in report


@pytest.mark.parametrize("line", [
    "[    1.0] WARNING: CPU: 1 PID: 5 at mm/page_alloc.c:100 foo+0x1/0x2",
    "[    1.0] BUG: unable to handle page fault for address: 0",
    "[    1.0] Oops: general protection fault, probably for non-canonical",
    "[    2.0] BUG: KCSAN: data-race in zlc_setup / zlc_mark_zone_full",
    "[   30.0] INFO: task kworker/0:1:12 blocked for more than 20 seconds.",
    "[   30.0] watchdog: BUG: soft lockup - CPU#0 stuck for 22s!",
])
def test_trouble_lines(line):
    assert guest.trouble(["x", line]) is not None


def test_captured_consoles_are_clean():
    assert guest.trouble(console("kunit-console.log")) is None
    assert guest.trouble(console("hotplug-console.log")) is None


def test_a_warning_in_a_captured_console_is_found():
    lines = console("kunit-console.log")
    i = next(i for i, l in enumerate(lines) if "ok 12 zlc_test_recovery" in l)
    lines[i:i] = ["WARNING: CPU: 0 PID: 1 at mm/page_alloc.c:3900 zlc_setup+0x1/0x2",
                  "Call Trace:", " <TASK>", " get_page_from_freelist+0x10/0x20"]
    assert guest.trouble(lines)[3].startswith("WARNING: CPU: 0")


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
    assert guest.trouble(KCSAN_OTHER, kcsan_scope=scope) is None
    assert guest.unrelated_kcsan(KCSAN_OTHER, scope) == [KCSAN_OTHER[0]]
    report = guest.trouble(KCSAN_OTHER + KCSAN_OURS, kcsan_scope=scope)
    assert report[0].startswith("BUG: KCSAN: data-race in zlc_next_zone")
    assert guest.trouble(KCSAN_OTHER) is not None


def test_decode_leaves_an_excerpt_alone_without_vmlinux(tmp_path):
    excerpt = ["WARNING: CPU: 0 PID: 1 at x", " foo+0x1/0x2"]
    assert guest.decode(excerpt, str(tmp_path / "arch/x86/boot/bzImage")) == excerpt


# --- the QEMU command, the initramfs, the CLI --------------------------------

def test_qemu_command_uses_tcg_and_topology():
    cmd = guest.qemu_command("bz", "rd", Topology.parse("2"), "foo=1")
    assert cmd[cmd.index("-accel") + 1] == "tcg"
    assert "kvm" not in " ".join(cmd)
    assert cmd[cmd.index("-append") + 1].endswith("foo=1")
    assert "node,nodeid=1,memdev=m1" in cmd


def test_an_arm64_image_boots_on_the_virt_board():
    arm = guest.qemu_command("build/7.3/arm64/arch/arm64/boot/Image", "rd",
                             Topology.parse("4"))
    assert arm[0] == "qemu-system-aarch64"
    assert arm[arm.index("-machine") + 1].startswith("virt")
    assert "console=ttyAMA0" in arm[arm.index("-append") + 1]
    assert "node,nodeid=3,memdev=m3" in arm
    x86 = guest.qemu_command("build/7.3/guest/arch/x86/boot/bzImage", "rd", Topology.parse("4"))
    assert x86[0] == "qemu-system-x86_64" and "console=ttyS0" in x86[x86.index("-append") + 1]
    # A directory named arm64 elsewhere in the path does not make it arm64.
    assert guest.arch_of("/arm64/build/arch/x86/boot/bzImage") == "x86_64"


def test_an_arm64_initramfs_without_its_busybox_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(guest, "TOP", str(tmp_path))
    with pytest.raises(guest.GuestError, match="deps.sh arm64"):
        guest.build_initramfs(str(tmp_path / "rd"), arch="arm64")


def test_initramfs_holds_init_scripts_cmd_and_binaries(tmp_path):
    binary = tmp_path / "hello"
    binary.write_text("#!/bin/sh\necho hi\n")
    dest = tmp_path / "rd.cpio.gz"
    guest.build_initramfs(str(dest), [str(binary)], "hello; echo done",
                          files={"/etc/motd": "zlc\n"})
    out = tmp_path / "x"
    out.mkdir()
    subprocess.run(["cpio", "-id", "--quiet"], input=gzip.decompress(dest.read_bytes()),
                   cwd=out, check=True)
    for name in ("init", "cmd", "bin/busybox", "bin/hello", "etc/motd",
                 "scripts/bench.sh", "scripts/hotplug.sh"):
        assert (out / name).exists(), name
    assert (out / "cmd").read_text() == "hello; echo done\n"
    assert guest.EXIT_MARK in (out / "init").read_text()
    assert os.access(out / "init", os.X_OK)


def test_missing_kernel_is_a_clear_error(tmp_path):
    with pytest.raises(guest.GuestError, match="no kernel image"):
        guest.run(str(tmp_path / "nope"), Topology.parse("1"), "true")


@pytest.mark.parametrize("argv,message", [
    (["--nodes", "3"], "does not split into 3 equal nodes"),
    (["--nodes", "x"], "bad topology 'x'"),
    (["--nodes", "65"], "this kernel takes 1..64"),
    (["--nodes", "64:1G"], "a node needs at least 32 MiB"),
    (["--numa", "1G,cpus=0-1", "--numa", "1G", "--numa-distance", "0,1=5"], "must be 11..255"),
])
def test_cli_rejects_a_bad_topology_in_one_line(capsys, argv, message):
    assert guest.main(["--kernel", "/nonexistent", *argv, "--", "true"]) == 2
    out = capsys.readouterr()
    err = out.err.strip().splitlines()
    assert len(err) == 1 and message in err[0] and "Traceback" not in out.err


def test_dry_run_prints_the_shell_quoted_command(capsys):
    assert guest.main(["--kernel", "/k", "--numa", "1G,cpus=0-1", "--numa", "1G",
                       "--numa-distance", "0,1=20", "--append", "a=1 b=2", "--dry-run"]) == 0
    line = capsys.readouterr().out.strip()
    assert "'console=ttyS0" in line and "a=1 b=2'" in line
    assert "dist,src=0,dst=1,val=20" in line and "dist,src=1,dst=0,val=20" in line


def test_the_guest_command_keeps_its_quoting(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(guest, "run", lambda kernel, topo, command, *a, **k: seen.append(command)
                        or guest.Result(0, [], str(tmp_path / "log"), 0.0))
    guest.main(["--kernel", "/k", "--", "cat /proc/meminfo | head -1"])
    guest.main(["--kernel", "/k", "--", "sh", "-c", "echo a b", "--", "x"])
    assert seen == ["cat /proc/meminfo | head -1", "sh -c 'echo a b' -- x"]


def test_progress_gives_elapsed_and_eta(capsys):
    import io
    out = io.StringIO()
    p = guest.Progress("kunit", 3, guess=60, out=out)
    p.start("4 nodes")
    p.finish("4 nodes", "18 passed")
    text = out.getvalue().splitlines()
    assert text[0].startswith("[kunit] 1/3 4 nodes: started, 0s elapsed, about 3m00s left")
    assert text[1].startswith("[kunit] 1/3 4 nodes: 18 passed, 0s elapsed, about 0s left")


def test_shell_scripts_pass_shellcheck():
    assert shutil.which("shellcheck"), "shellcheck is missing: make deps installs it"
    # The guest's shell scripts: init and *.sh (the C loads beside them are not).
    scripts = [os.path.join(guest.SCRIPTS, n) for n in sorted(os.listdir(guest.SCRIPTS))
               if n == "init" or n.endswith(".sh")]
    assert len(scripts) >= 4
    r = subprocess.run(["shellcheck", *scripts], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
    tools = os.path.join(guest.TOP, "scripts")
    r = subprocess.run(["shellcheck", "--severity=warning",
                        *[os.path.join(tools, n) for n in sorted(os.listdir(tools))
                          if n.endswith(".sh")]], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout
