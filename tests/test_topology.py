import pytest

from zlctool.topology import Topology, TopologyError, parse_size_mib


def test_sizes():
    assert parse_size_mib("2G") == 2048
    assert parse_size_mib("512M") == 512
    assert parse_size_mib("1536") == 1536
    assert parse_size_mib("4GiB") == 4096
    with pytest.raises(TopologyError):
        parse_size_mib("lots")


def test_even_split_and_qemu_args():
    t = Topology.make(4, "2G", "2")
    assert t.mem_mib == (512, 512, 512, 512)
    assert t.cpus == (2, 0, 0, 0)
    args = t.qemu_args()
    assert args[:4] == ["-m", "2048M", "-smp", "2"]
    assert "node,nodeid=0,memdev=m0,cpus=0-1" in args
    assert "node,nodeid=3,memdev=m3" in args
    assert args.count("-numa") == 4
    assert "memory-backend-ram,id=m2,size=512M" in args


def test_lists_per_node():
    t = Topology.make(3, "1G,512M,512M", "1,1,0")
    assert t.mem_mib == (1024, 512, 512)
    args = t.qemu_args()
    assert "node,nodeid=0,memdev=m0,cpus=0" in args
    assert "node,nodeid=1,memdev=m1,cpus=1" in args
    assert t.total_cpus == 2


def test_memory_per_node_flag():
    t = Topology.make(2, "1G", "2", mem_is_total=False)
    assert t.mem_mib == (1024, 1024)


def test_64_nodes():
    t = Topology.make(64, "2G", "2")
    assert t.nodes == 64 and t.mem_mib[63] == 32
    assert t.qemu_args().count("-numa") == 64


def test_distance_matrix():
    t = Topology.make(2, "2G", "2", "10,20;20,10")
    args = t.qemu_args()
    assert "dist,src=0,dst=1,val=20" in args
    assert "dist,src=1,dst=0,val=20" in args
    assert "dist,src=0,dst=0,val=10" not in args


@pytest.mark.parametrize("nodes,mem,cpus,dist,message", [
    (0, "2G", "2", None, "node count must be 1..64"),
    (200, "2G", "2", None, "node count must be 1..64"),
    ("x", "2G", "2", None, "whole number"),
    (3, "2G", "2", None, "does not divide evenly"),
    (2, "1G,1G,1G", "2", None, "3 memory sizes given for 2 nodes"),
    (2, "3M,1G", "2", None, "must be at least 4 MiB"),
    (2, "2G", "0", None, "at least one CPU"),
    (2, "2G", "1,1,1", None, "3 CPU counts given for 2 nodes"),
    (2, "2G", "2", "10,20", "1 rows, expected 2"),
    (2, "2G", "2", "10,20;20", "row 1 has 1 entries"),
    (2, "2G", "2", "10,20;20,11", "to itself must be 10"),
    (2, "2G", "2", "10,5;5,10", "must be 11..255"),
    (2, "2G", "2", "10,a;a,10", "not all integers"),
])
def test_bad_topologies(nodes, mem, cpus, dist, message):
    with pytest.raises(TopologyError, match=message):
        Topology.make(nodes, mem, cpus, dist)
