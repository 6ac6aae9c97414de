"""The guest layer against a real guest kernel (ZLC_GUEST_KERNEL=bzImage).

Run by 'make test' after the guest kernel is built; on its own:
    ZLC_GUEST_KERNEL=build/7.3/guest/arch/x86/boot/bzImage python3 -m pytest tests/guest
"""
import os

import pytest

from zlctool import guest
from zlctool.topology import Topology

KERNEL = os.environ.get("ZLC_GUEST_KERNEL")
# These run from 'make test', which sets the kernel: without one they fail
# rather than skip, so that a run that checked nothing never looks clean.
assert KERNEL and os.path.isfile(KERNEL), "set ZLC_GUEST_KERNEL to a guest bzImage"


def test_exit_status_comes_back():
    r = guest.run(KERNEL, Topology.parse("512M,cpus=0"), "echo hello; exit 7", timeout=120)
    assert r.status == 7
    assert "hello" in r.lines


def test_topology_reaches_the_guest():
    r = guest.run(KERNEL, Topology.parse("512M,cpus=0-1/512M/512M/512M/0,1=20/0,2=30/0,3=40/"
                                 "1,2=20/1,3=30/2,3=20"),
                 "for d in /sys/devices/system/node/node*; do echo $d; done; "
                 "cat /sys/devices/system/node/node0/distance",
                 timeout=120)
    assert r.status == 0
    nodes = [l for l in r.lines if l.startswith("/sys/devices/system/node/node")]
    assert len(nodes) == 4
    assert "10 20 30 40" in r.lines


def test_64_nodes_boot():
    r = guest.run(KERNEL, Topology.parse("64"),
                 "for d in /sys/devices/system/node/node*; do echo $d; done | wc -l",
                 timeout=300)
    assert r.status == 0
    assert "64" in [l.strip() for l in r.lines]


def test_panic_fails_the_run_and_shows_it():
    with pytest.raises(guest.GuestError) as e:
        guest.run(KERNEL, Topology.parse("512M,cpus=0"),
                 "echo 1 > /proc/sys/kernel/sysrq; echo c > /proc/sysrq-trigger", timeout=120)
    assert "Kernel panic" in str(e.value)
    assert "sysrq" in str(e.value).lower()


def test_hang_fails_the_run():
    with pytest.raises(guest.GuestError, match="hung: no exit status after 15s"):
        guest.run(KERNEL, Topology.parse("512M,cpus=0"), "sleep 600", timeout=15)


def sysctl_script(writes):
    """Shell lines: write each value, print the write's status and the value after."""
    lines = []
    for path, value in writes:
        lines.append(f"echo {value} > {path} 2>/tmp/err; echo \"rc=$? $(cat /tmp/err)\"; "
                     f"echo \"now=$(cat {path})\"")
    return "; ".join(lines)


def test_zonelist_cache_sysctl_rejects_bad_values():
    zc = "/proc/sys/vm/zonelist_cache"
    r = guest.run(KERNEL, Topology.parse("2:1G"),
                 f"echo \"was=$(cat {zc})\"; " +
                 sysctl_script([(zc, 2), (zc, 0), (zc, -1), (zc, 1)]),
                 timeout=120)
    out = [l for l in r.lines if l.startswith(("rc=", "now="))]
    # Tagged: a kernel message on the console may come between the lines.
    assert [l for l in r.lines if l.startswith("was=")] == ["was=1"]
    assert out[0].startswith("rc=1") and "Invalid argument" in out[0] and out[1] == "now=1"
    assert out[2] == "rc=0 " and out[3] == "now=0"
    assert out[4].startswith("rc=1") and out[5] == "now=0"
    assert out[6] == "rc=0 " and out[7] == "now=1"


def test_the_cache_shows_one_switch_one_counter_and_two_events():
    """What an administrator sees of the cache: one sysctl, one counter in
    /proc/vmstat, two kmem trace events (a zone marked full, its marks
    ended), and nothing in debugfs."""
    r = guest.run(KERNEL, Topology.parse("2:1G"),
                  "mount -t debugfs none /sys/kernel/debug; "
                  "mount -t tracefs nodev /sys/kernel/tracing; "
                  "ls /proc/sys/vm | grep zonelist_cache | sed 's/^/sysctl: /'; "
                  "grep zlc /proc/vmstat | sed 's/ .*//; s/^/vmstat: /'; "
                  "ls /sys/kernel/tracing/events/kmem | grep zlc | sed 's/^/event: /'; "
                  "ls /sys/kernel/debug | grep zonelist_cache | sed 's/^/debugfs: /'; true",
                  timeout=120)
    seen = [l for l in r.lines if l.startswith(("sysctl: ", "vmstat: ", "event: ", "debugfs: "))]
    assert seen == ["sysctl: zonelist_cache", "vmstat: zlc_skip",
                    "event: mm_zlc_full", "event: mm_zlc_recover"]


def test_zonelist_cache_off_from_the_command_line():
    """The one switch is the sysctl; the kernel's sysctl.* boot parameters set it."""
    r = guest.run(KERNEL, Topology.parse("2:1G"),
                  'echo "zc=$(cat /proc/sys/vm/zonelist_cache)"',
                  append="sysctl.vm.zonelist_cache=0", timeout=120)
    assert [l for l in r.lines if l.startswith("zc=")] == ["zc=0"]


def test_make_run_prints_what_the_command_prints(capsys):
    assert guest.main(["--kernel", KERNEL, "--topology", "4", "--",
                       "cat", "/sys/devices/system/node/online"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "0-3"
    assert out[-1].startswith("guest: 4 nodes, 512M each, 2 CPUs: command exited 0")
    log = os.path.join(guest.RESULTS, "run", "4n.log")
    with open(log) as f:
        first = f.readline()
    assert first.startswith("$ qemu-system-x86_64 -accel tcg") and "'console=ttyS0" in first
