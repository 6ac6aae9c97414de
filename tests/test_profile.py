"""zlctool.profile: the plugin's dumps named by System.map, and the report."""

import json
import os
import subprocess

import pytest

from zlctool import profile

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SYSTEM_MAP = """\
ffffffff81000000 T _stext
ffffffff81001000 t get_page_from_freelist
ffffffff81002000 T __rmqueue_pcplist
ffffffff81003000 d some_data
ffffffff81004000 W weak_fn
"""


@pytest.fixture
def syms(tmp_path):
    p = tmp_path / "System.map"
    p.write_text(SYSTEM_MAP)
    return profile.symbols(str(p))


def test_symbols_are_text_only_and_sorted(syms):
    assert [n for _, n in syms] == ["_stext", "get_page_from_freelist",
                                    "__rmqueue_pcplist", "weak_fn"]


def test_blocks_count_toward_the_function_they_start_in(tmp_path, syms):
    dump = tmp_path / "dump.1"
    dump.write_text("ffffffff81001010 100\nffffffff81001ff0 50\n"
                    "ffffffff81002000 7\n0 1000\nffffffff81003500 3\n")
    funcs = profile.per_function(str(dump), syms)
    # A block in data (a hole between functions) counts for the function
    # before it: System.map names no end.
    assert funcs == {"get_page_from_freelist": 150, "__rmqueue_pcplist": 10,
                     profile.USER: 1000}


def passes():
    def p(kind, gpff, rmq):
        return dict(kind=kind, real=0, funcs={"get_page_from_freelist": gpff,
                                             "__rmqueue_pcplist": rmq})
    return [p("on", 100e6, 50e6), p("on", 100e6, 90e6), p("on", 101e6, 52e6),
            p("on", 100e6, 95e6), p("off", 300e6, 50e6), p("off", 301e6, 51e6)]


def test_halves_rank_passes_by_their_counted_instructions():
    fast, slow = profile.halves([p for p in passes() if p["kind"] == "on"])
    assert [p["funcs"]["__rmqueue_pcplist"] for p in fast] == [50e6, 52e6]
    assert [p["funcs"]["__rmqueue_pcplist"] for p in slow] == [90e6, 95e6]


def test_table_names_where_the_slow_half_spends_more():
    lines = profile.table(passes(), top=2)
    slow = lines.index(next(l for l in lines if "where on's slower half" in l))
    # First after the header: the function the slow passes spend on.
    first = lines[slow + 2].split()
    assert first[0] == "__rmqueue_pcplist"
    # on median, off median, on slow-fast, off slow-fast (Minsn)
    assert first[1:] == ["71.00", "50.50", "+41.50", "+1.00"]


def test_plugin_source_builds_without_warnings(tmp_path):
    """The plugin's C, against a stub of the one header it needs (the
    real one comes from QEMU's source package: scripts/tbprof.sh)."""
    hdr = tmp_path / "qemu-plugin.h"
    hdr.write_text("""
#include <stdint.h>
#include <stddef.h>
#define QEMU_PLUGIN_EXPORT __attribute__((visibility("default")))
#define QEMU_PLUGIN_VERSION 1
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
    enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
    void (*cb)(unsigned int, void *), enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
    void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
""")
    r = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-shared", "-fPIC", "-I", str(tmp_path),
                        "-o", str(tmp_path / "tbprof.so"),
                        os.path.join(TOP, "zlctool", "tbprof", "tbprof.c")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_table_names_where_the_first_kind_spends_more_than_the_others():
    lines = profile.table(passes(), top=2)
    i = lines.index(next(l for l in lines if "where on spends most over off" in l))
    assert "a pass's median total 171.50 against 351.00" in lines[i]
    # Where on spends more than off first: its rmqueue; its walk saves.
    assert [lines[i + 2].split()[0], lines[i + 3].split()[0]] == [
        "__rmqueue_pcplist", "get_page_from_freelist"]


def rec(zlc, mib, real, **walk):
    r = dict(zlc=zlc, mib=mib, real=real, zlc_skip=0, numa_miss=0, lower_zone_pages=0,
             pageoutrun=0, allocstall=0, numa_local=mib * 256, numa_other=0)
    r.update(walk)
    return r


def lines_of(*blocks):
    out = []
    for kind, recs in blocks:
        out += [f"zlc-profile kind={kind} {json.dumps(r)}" for r in recs]
        out.append(f"zlc-profile-end kind={kind}")
    return out


def test_a_placed_pass_is_its_dump_less_the_median_off_pass():
    placed = rec("placed", 50, 1.5)
    # The placed pass's line first or second: its own MiB either way.
    for pair in ([rec("n/a", 100, 2.5), placed], [placed, rec("n/a", 100, 2.5)]):
        runs = profile.pass_reals(lines_of(("off", [rec("off", 100, 2.0)]), ("placed", pair),
                                           ("off", [rec("off", 100, 3.0)])))
        assert runs == [("off", 2.0, 100, None, None), ("placed", 4.0, 50, placed, 2.5),
                        ("off", 3.0, 100, None, None)]

    def p(kind, real, mib, gpff, user, placed=None, asis=None):
        return dict(kind=kind, real=real, mib=mib, placed=placed, asis_real=asis,
                    funcs={"get_page_from_freelist": gpff, profile.USER: user})
    out = profile.placed_alone([p("off", 2.0, 100, 300, 10), p("placed", 4.0, 50, 450, 25,
                                                               placed, 2.6),
                                p("off", 3.0, 100, 310, 12)])
    # Less the median off pass (305, 11, 2.5 s), then twice: half the MiB.
    assert out[1]["funcs"] == {"get_page_from_freelist": 290, profile.USER: 28}
    assert (out[1]["real"], out[1]["mib"], out[1]["placed_mib"]) == (3.0, 100, 50)
    # The pass as is beside it ran 0.1 s (100 Minsn) longer than the off
    # passes' median: the subtraction's error, scaled as the rest.
    assert out[1]["residual"] == pytest.approx(0.2)
    line = next(l for l in profile.table(out, top=1) if l.split()[1:2] == ["placed"])
    assert "placed 50; the pass as is beside it +200.0 Minsn from the off median" in line
    assert out[0] == p("off", 2.0, 100, 300, 10)
    with pytest.raises(ValueError, match="needs off"):
        profile.placed_alone([p("placed", 4.0, 50, 450, 25, placed, 2.5)])
    with pytest.raises(ValueError, match="touched nothing"):
        profile.placed_alone([p("off", 2.0, 100, 300, 10),
                              p("placed", 4.0, 0, 450, 25, rec("placed", 0, 1.5), 2.5)])
    # A placed pass that walked is no reference.
    with pytest.raises(ValueError, match="walked"):
        profile.placed_alone([p("off", 2.0, 100, 300, 10),
                              p("placed", 4.0, 50, 450, 25, rec("placed", 50, 1.5,
                                                                numa_miss=13), 2.5)])


def test_pass_records_must_be_what_each_kind_runs():
    with pytest.raises(ValueError, match="not a pass as is"):
        profile.pass_reals(lines_of(("placed", [rec("placed", 50, 1.5)])))
    with pytest.raises(ValueError, match="printed 2 passes"):
        profile.pass_reals(lines_of(("on", [rec("on", 100, 2.0), rec("on", 100, 2.0)])))
    with pytest.raises(ValueError, match="of kind on"):
        profile.pass_reals(lines_of(("off", [rec("on", 100, 2.0)])))
    assert profile.pass_reals(lines_of(("asis", [rec("n/a", 100, 2.0)]))) == \
        [("asis", 2.0, 100, None, None)]
    with pytest.raises(ValueError, match="does not parse"):
        profile.pass_reals(['zlc-profile kind=on {"zlc": "on", [ 1.2] printk}', "x"])


def test_the_guest_script_restores_the_setting_after_a_placed_pass():
    script = profile.SCRIPT.format(pct=90, threads=2, kinds="placed asis")
    body = script[script.index("for kind"):]
    assert body.index("echo 0 > /proc/sys/vm/zonelist_cache") < \
        body.index('mode="-m asis -P"') < body.index("zonelist_cache_memhog $mode") < \
        body.index('echo "$orig" > /proc/sys/vm/zonelist_cache')
    assert script.index("orig=$(cat /proc/sys/vm/zonelist_cache") < script.index("for kind")
    # Only after a placed pass: a kernel without the setting runs asis.
    assert "[ $kind != placed ] || echo \"$orig\" > /proc/sys/vm/zonelist_cache" in body
