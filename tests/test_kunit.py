from zlctool import kunit
from zlctool.topology import Topology

RESULT = {
    "name": "KUnit Test Group",
    "test_cases": [],
    "sub_groups": [{
        "name": "zonelist_cache",
        "sub_groups": [],
        "test_cases": [
            {"name": "zlc_test_z_to_n", "status": "PASS"},
            {"name": "zlc_test_allowed_nodes", "status": "SKIP"},
            {"name": "zlc_test_single_node", "status": "SKIP"},
            {"name": "zlc_test_spill", "status": "FAIL"},
            {"name": "zlc_test_crash", "status": "ERROR"},
            {"name": "zlc_test_thp_failure", "status": "SKIP"},
        ],
    }],
}

LOG = [
    "    ok 2 zlc_test_allowed_nodes # SKIP needs at least 3 online nodes with memory, has 2",
    "    ok 3 zlc_test_single_node # SKIP needs a single online node, has 4",
    "    ok 9 zlc_test_thp_failure # SKIP needs node 0 with more than 4 GiB (DMA32 and Normal zones)",
]


def test_flatten_names_cases_by_suite():
    cases = kunit.flatten(RESULT)
    assert ("zonelist_cache.zlc_test_z_to_n", "PASS") in cases
    assert len(cases) == 6


def test_skip_reasons_from_tap():
    reasons = kunit.skip_reasons(LOG)
    assert reasons["zlc_test_allowed_nodes"].startswith("needs at least 3 online nodes")
    assert reasons["zlc_test_single_node"].startswith("needs a single")


def statuses(nodes, mem="2G"):
    topo = Topology.make(nodes, mem, "2")
    return {c.rsplit(".", 1)[1]: s for c, s, _ in
            kunit.judge(kunit.flatten(RESULT), kunit.skip_reasons(LOG), topo)}


def test_multi_node_skip_is_fine_on_fewer_nodes():
    s = statuses(2)
    assert s["zlc_test_allowed_nodes"] == "SKIP"
    assert s["zlc_test_single_node"] == "SKIP"


def test_multi_node_skip_fails_on_enough_nodes():
    s = statuses(4)
    assert s["zlc_test_allowed_nodes"] == "FAIL"
    # Skipping the single-node case on four nodes is what it should do.
    assert s["zlc_test_single_node"] == "SKIP"


def test_errors_count_as_failures():
    s = statuses(1)
    assert s["zlc_test_spill"] == "FAIL" and s["zlc_test_crash"] == "FAIL"
    assert s["zlc_test_z_to_n"] == "PASS"


def test_big_node0_skip_fails_only_where_node0_is_big():
    assert statuses(2)["zlc_test_thp_failure"] == "SKIP"
    assert statuses(4, "8G")["zlc_test_thp_failure"] == "SKIP"    # 2 GiB per node
    assert statuses(2, "6G,1G")["zlc_test_thp_failure"] == "FAIL"
