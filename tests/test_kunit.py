"""zlctool.kunit.judge: the project's skip rules on top of KUnit's verdict,
applied to a console captured here (2 nodes: four cases skip for want of
nodes)."""

import os

from zlctool import guest, kunit
from zlctool.topology import Topology

DATA = os.path.join(os.path.dirname(__file__), "data")


def cases():
    with open(os.path.join(DATA, "kunit-console.log")) as f:
        got = guest.results(f.read().splitlines()).cases
    # One more case as a console of another topology would show it.
    return got + [("zonelist_cache.zlc_test_thp_failure_big", "SKIP",
                   "needs node 0 with more than 4 GiB (DMA32 and Normal zones)"),
                  ("zonelist_cache.zlc_test_crash", "FAIL", "")]


def statuses(spec):
    return {c.rsplit(".", 1)[1]: s for c, s, _ in kunit.judge(cases(), Topology.parse(spec))}


def test_multi_node_skip_is_fine_on_fewer_nodes():
    s = statuses("2")
    assert s["zlc_test_allowed_nodes"] == "SKIP"
    assert s["zlc_test_single_node"] == "SKIP"
    assert s["zlc_test_z_to_n"] == "PASS"


def test_multi_node_skip_fails_on_enough_nodes():
    s = statuses("4")
    assert s["zlc_test_allowed_nodes"] == "FAIL"
    assert s["zlc_test_still_reclaims"] == "FAIL"
    # Skipping the single-node case on four nodes is what it should do.
    assert s["zlc_test_single_node"] == "SKIP"


def test_failures_stay_failures():
    assert statuses("1")["zlc_test_crash"] == "FAIL"


def test_big_node0_skip_fails_only_where_node0_is_big():
    assert statuses("2")["zlc_test_thp_failure_big"] == "SKIP"
    assert statuses("4:8G")["zlc_test_thp_failure_big"] == "SKIP"    # 2 GiB per node
    assert statuses("6G,cpus=0-1/1G")["zlc_test_thp_failure_big"] == "FAIL"


def test_big_node0_skip_is_fine_on_arm64():
    """arm64's virt board puts all memory below 4 GiB in ZONE_DMA: a big
    node 0 there has DMA and Normal zones, never DMA32."""
    got = {c.rsplit(".", 1)[1]: s for c, s, _ in
           kunit.judge(cases(), Topology.parse("6G,cpus=0-1/1G"), "arm64")}
    assert got["zlc_test_thp_failure_big"] == "SKIP"
    assert got["zlc_test_crash"] == "FAIL"
