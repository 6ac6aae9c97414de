"""zlctool.topology: the one topology grammar of make, the runner, KUnit and bench."""

import argparse

import pytest

from zlctool import topology
from zlctool.topology import Topology, TopologyError, parse_size_mib


def test_sizes():
    assert parse_size_mib("2G") == 2048
    assert parse_size_mib("512M") == 512
    assert parse_size_mib("1536") == 1536
    assert parse_size_mib("4GiB") == 4096
    with pytest.raises(TopologyError):
        parse_size_mib("lots")


def test_a_count_splits_2g_with_the_cpus_on_node_0():
    t = Topology.parse("4")
    assert t.mem_mib == (512, 512, 512, 512)
    assert t.cpu_counts() == (2, 0, 0, 0)
    args = t.qemu_args()
    assert args[:4] == ["-m", "2048M", "-smp", "2"]
    assert "node,nodeid=0,memdev=m0,cpus=0-1" in args
    assert "node,nodeid=3,memdev=m3" in args
    assert args.count("-numa") == 4
    assert "memory-backend-ram,id=m2,size=512M" in args
    assert t.label() == "4n"


def test_count_and_total():
    t = Topology.parse("2:4G")
    assert t.mem_mib == (2048, 2048) and t.label() == "2n-4096M"


def test_nodes_written_as_virtme_ng_takes_them():
    t = Topology.parse("1G,cpus=0/512M,cpus=1/512M")
    assert t.mem_mib == (1024, 512, 512)
    assert t.cpu_counts() == (1, 1, 0)
    args = t.qemu_args()
    assert "node,nodeid=0,memdev=m0,cpus=0" in args
    assert "node,nodeid=1,memdev=m1,cpus=1" in args
    assert t.total_cpus == 2
    # CPUs on two nodes: one socket each, so that no cache spans nodes.
    assert args[args.index("-smp") + 1] == "2,sockets=2,cores=1,threads=1"


def test_cpus_on_one_node_keep_qemus_default_smp():
    args = Topology.parse("6G,cpus=0-1/1G").qemu_args()
    assert args[args.index("-smp") + 1] == "2"


def test_a_big_node_0():
    t = Topology.parse("6G,cpus=0-1/1G")
    assert t.mem_mib == (6144, 1024) and t.label() == "2n-6144M-1024M"


def test_64_nodes():
    t = Topology.parse("64")
    assert t.nodes == 64 and t.mem_mib[63] == 32
    assert t.qemu_args().count("-numa") == 64


def test_distances_go_both_ways():
    t = Topology.parse("1G,cpus=0-1/1G/0,1=20")
    args = t.qemu_args()
    assert "dist,src=0,dst=1,val=20" in args
    assert "dist,src=1,dst=0,val=20" in args
    assert t.label() == "2n-dist"


@pytest.mark.parametrize("spec", ["4", "2:4G", "6G,cpus=0-1/1G", "1G,cpus=0/1G,cpus=1/0,1=20"])
def test_spec_round_trips(spec):
    t = Topology.parse(spec)
    assert Topology.parse(t.spec()) == t


@pytest.mark.parametrize("spec,message", [
    ("", "empty topology"),
    ("0", "this kernel takes 1..64"),
    ("65", "this kernel takes 1..64 (x86_64 NODES_SHIFT=6)"),
    ("x", "bad topology 'x'"),
    ("3", "does not split into 3 equal nodes"),
    ("64:1G", "a node needs at least 32 MiB"),
    ("16M/1G", "node 0 has 16 MiB"),
    ("1G,cpus=1/1G", "numbered from 0 without gaps"),
    ("1G,cpus=0-1/1G,cpus=1", "each CPU once"),
    ("1G,cpus=3-1/1G", "runs backwards"),
    ("1G,mem=2/1G", "unknown option 'mem=2'"),
    ("1G/1G/0,2=20", "there are only 2 nodes"),
    ("1G/1G/1,1=20", "distance to itself is 10"),
    ("1G/1G/0,1=5", "must be 11..255"),
    ("1G/0,1=20/1G", "nodes come first"),
    ("1G/lots", "bad memory size 'lots'"),
])
def test_bad_topologies_say_what_is_wrong(spec, message):
    with pytest.raises(TopologyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        Topology.parse(spec)


def args_of(argv):
    p = argparse.ArgumentParser()
    topology.add_arguments(p, default="2")
    return topology.from_arguments(p.parse_args(argv))


def test_command_line_takes_virtme_ng_options_or_a_spec():
    assert args_of([]) == Topology.parse("2")
    assert args_of(["--topology", "4"]) == Topology.parse("4")
    assert args_of(["--nodes", "64"]) == Topology.parse("64")
    assert args_of(["--numa", "1G,cpus=0-1", "--numa", "1G", "--numa-distance", "0,1=20"]) == \
        Topology.parse("1G,cpus=0-1/1G/0,1=20")
    with pytest.raises(TopologyError, match="not both"):
        args_of(["--topology", "4", "--numa", "1G"])
    with pytest.raises(TopologyError, match="without --numa"):
        args_of(["--numa-distance", "0,1=20"])


def test_nodes_shift_10_takes_qemus_128_nodes():
    t = Topology.parse("128:4G", nodes_shift=10)
    assert t.nodes == 128 and t.mem_mib[0] == 32
    with pytest.raises(TopologyError, match=r"1\.\.64 \(x86_64 NODES_SHIFT=6\)"):
        Topology.parse("128:4G")
    with pytest.raises(TopologyError, match=r"1\.\.128 \(QEMU's limit\)"):
        Topology.parse("256:8G", nodes_shift=10)
