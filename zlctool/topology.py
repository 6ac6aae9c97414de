"""NUMA topologies: one grammar for make, the runner, KUnit and the benchmarks.

A topology is one string, in one of two forms:

  COUNT[:TOTAL]        COUNT equal nodes sharing TOTAL memory (default 2G),
                       the guest's CPUs all on node 0: "4", "64", "2:4G"
  NODE/NODE/...[/I,J=D...]
                       one NODE per node, written as virtme-ng's --numa
                       takes it, SIZE[,cpus=A[-B]]; then distances as its
                       --numa-distance takes them, I,J=D (both ways):
                       "6G,cpus=0-1/1G", "1G,cpus=0/1G,cpus=1/0,1=20"
  PRESET               a machine that ships, scaled to the guest's 2 GiB
                       and 2 vCPUs (PRESETS): "nps4", "cxl", "flex32"

The command-line tools also take virtme-ng's own spelling, repeated
--numa NODE and --numa-distance I,J=D options (see add_arguments()).
Everything is checked before QEMU starts: a spec that QEMU or Linux would
not take is one line saying what is wrong (TopologyError), never a boot
that goes wrong later.
"""

from dataclasses import dataclass
import re

# The guest configs build x86_64's default NODES_SHIFT=6: 64 nodes.  With
# configs/nodes10.config (NODES_SHIFT=10, as Debian builds) the limit is
# QEMU's, 128.
NODES_SHIFT = 6
QEMU_MAX_NODES = 128


def max_nodes(nodes_shift=NODES_SHIFT):
    return min(1 << nodes_shift, QEMU_MAX_NODES)


def _check_count(count, nodes_shift):
    if not 1 <= count <= max_nodes(nodes_shift):
        why = (f"x86_64 NODES_SHIFT={nodes_shift}" if (1 << nodes_shift) < QEMU_MAX_NODES
               else "QEMU's limit")
        raise TopologyError(f"{count} nodes: this kernel takes 1..{max_nodes(nodes_shift)} ({why})")
# Less than this a node leaves the kernel too little to boot on 64 nodes
# of a 2 GiB guest; QEMU wants 2 MiB alignment.
MIN_NODE_MIB = 32
NODE_ALIGN_MIB = 2
MAX_CPUS = 64
DEFAULT_TOTAL = "2G"
DEFAULT_CPUS = 2


class TopologyError(ValueError):
    """A topology that QEMU or Linux would not take."""


def _preset(nodes, cpu_nodes, distance):
    """A preset's spec: NODES nodes of 2 GiB / NODES each, one vCPU on each
    of cpu_nodes (in order), and distance(i, j) for every pair whose
    distance is not QEMU's default 20."""
    mib = 2048 // nodes
    parts = [f"{mib}M" + (f",cpus={cpu_nodes.index(i)}" if i in cpu_nodes else "")
             for i in range(nodes)]
    dists = [f"{i},{j}={distance(i, j)}" for i in range(nodes) for j in range(i + 1, nodes)
             if distance(i, j) != 20]
    return "/".join(parts + dists)


def _cxl_distance(i, j):
    """cxl: sockets of nodes 0-1 and 2-3 (SNC: 12 within, 21 across); CPU-less
    CXL expanders 4-5 behind the first socket, 6-7 behind the second."""
    socket = lambda n: (n // 2) % 2         # 0,1,4,5 -> 0; 2,3,6,7 -> 1
    cxl_i, cxl_j = i >= 4, j >= 4
    if not cxl_i and not cxl_j:
        return 12 if socket(i) == socket(j) else 21
    if cxl_i and cxl_j:
        return 60 if socket(i) == socket(j) else 80
    return 50 if socket(i) == socket(j) else 70


# Machines that ship, as the hog and the workloads measure them: each has
# 2 GiB and 2 vCPUs, which a spilling load fills from the vCPUs' own nodes.
PRESETS = {
    # 2-socket AMD EPYC in NPS4: 4 nodes a socket, a vCPU on nodes 0 and 4.
    "nps4": _preset(8, [0, 4], lambda i, j: 12 if i // 4 == j // 4 else 32),
    # Xeon in SNC with CXL memory expanders as CPU-less nodes.
    "cxl": _preset(8, [0, 2], _cxl_distance),
    # A Superdome Flex-class machine: 32 sockets, vCPUs on nodes 0 and 16.
    "flex32": _preset(32, [0, 16], lambda i, j: 20),
}


def parse_size_mib(text):
    """'2G', '512M', '1536' (MiB) -> MiB as an int."""
    m = re.fullmatch(r"\s*(\d+)\s*([MmGg]?)(?:i?[Bb])?\s*", str(text))
    if not m:
        raise TopologyError(f"bad memory size {text!r}: use e.g. 512M or 2G")
    value = int(m.group(1))
    return value * 1024 if m.group(2).lower() == "g" else value


def _cpu_range(text, node):
    m = re.fullmatch(r"(\d+)(?:-(\d+))?", text)
    if not m:
        raise TopologyError(f"node {node}: bad cpus={text!r}: use cpus=N or cpus=A-B")
    first, last = int(m.group(1)), int(m.group(2) or m.group(1))
    if last < first:
        raise TopologyError(f"node {node}: cpus={text} runs backwards")
    return first, last


def _node(text, i):
    """'1G,cpus=0-1' -> (MiB, (first, last) or None)."""
    size, *opts = text.split(",")
    mib = parse_size_mib(size)
    cpus = None
    for opt in opts:
        key, _, value = opt.partition("=")
        if key != "cpus" or not value:
            raise TopologyError(f"node {i}: unknown option {opt!r} (only cpus=A-B)")
        cpus = _cpu_range(value, i)
    return mib, cpus


@dataclass(frozen=True)
class Topology:
    mem_mib: tuple          # memory of each node, MiB
    cpus: tuple             # each node's (first, last) CPU, or None
    distances: tuple = ()   # ((i, j, d), ...), each applied both ways
    preset: str = ""        # the PRESETS name it was made from, if any

    @property
    def nodes(self):
        return len(self.mem_mib)

    @property
    def total_mib(self):
        return sum(self.mem_mib)

    @property
    def total_cpus(self):
        return sum(last - first + 1 for first, last in filter(None, self.cpus))

    def cpu_counts(self):
        return tuple(0 if c is None else c[1] - c[0] + 1 for c in self.cpus)

    @classmethod
    def parse(cls, spec, cpus=DEFAULT_CPUS, nodes_shift=NODES_SHIFT):
        """A topology string (see the module's doc) -> Topology.  cpus is
        the CPU count of the COUNT[:TOTAL] form, all on node 0; nodes_shift
        the kernel's CONFIG_NODES_SHIFT."""
        spec = str(spec).strip()
        if spec in PRESETS:
            topo = cls.parse(PRESETS[spec], cpus, nodes_shift)
            return cls(topo.mem_mib, topo.cpus, topo.distances, spec)
        if not spec:
            raise TopologyError("empty topology: give a node count (4) or nodes (1G/1G)")
        m = re.fullmatch(r"(\d+)(?::(\S+))?", spec)
        if m:
            return cls.even(int(m.group(1)), m.group(2) or DEFAULT_TOTAL, cpus, nodes_shift)
        nodes, dists = [], []
        for part in spec.split("/"):
            if re.fullmatch(r"\d+,\d+=\d+", part):
                dists.append(part)
                continue
            if dists:
                raise TopologyError(f"node {part!r} after the distances: nodes come first")
            try:
                nodes.append(_node(part, len(nodes)))
            except TopologyError as e:
                if "/" in spec:
                    raise
                raise TopologyError(f"bad topology {spec!r}: give a node count (4), a count "
                                    "and total (4:2G), or nodes (1G,cpus=0-1/1G)") from e
        return cls.from_nodes(nodes, dists, nodes_shift)

    @classmethod
    def even(cls, count, total=DEFAULT_TOTAL, cpus=DEFAULT_CPUS, nodes_shift=NODES_SHIFT):
        """COUNT equal nodes of TOTAL memory in all, cpus CPUs on node 0."""
        _check_count(count, nodes_shift)
        size = parse_size_mib(total)
        each = size // count
        if size % count or each % NODE_ALIGN_MIB:
            raise TopologyError(f"{size} MiB does not split into {count} equal nodes of whole "
                                f"{NODE_ALIGN_MIB} MiB: use a power of two, or give each "
                                "node's size (1G/512M/512M)")
        ncpus = int(cpus)
        return cls.from_nodes([(each, (0, ncpus - 1) if ncpus else None)]
                              + [(each, None)] * (count - 1), nodes_shift=nodes_shift)

    @classmethod
    def from_nodes(cls, nodes, dists=(), nodes_shift=NODES_SHIFT):
        """[(MiB, (first, last) or None), ...] and ['I,J=D', ...] -> Topology."""
        _check_count(len(nodes), nodes_shift)
        for i, (mib, _) in enumerate(nodes):
            if mib < MIN_NODE_MIB or mib % NODE_ALIGN_MIB:
                raise TopologyError(f"node {i} has {mib} MiB: a node needs at least "
                                    f"{MIN_NODE_MIB} MiB, in whole {NODE_ALIGN_MIB} MiB")
        cpus = [c for _, c in nodes]
        if not any(cpus):
            cpus[0] = (0, DEFAULT_CPUS - 1)
        used = sorted(n for c in filter(None, cpus) for n in range(c[0], c[1] + 1))
        if used != list(range(len(used))):
            raise TopologyError(f"CPUs {','.join(map(str, used))}: each CPU once, numbered "
                                "from 0 without gaps")
        if len(used) > MAX_CPUS:
            raise TopologyError(f"{len(used)} CPUs: at most {MAX_CPUS}")
        matrix = []
        for d in dists:
            m = re.fullmatch(r"(\d+),(\d+)=(\d+)", d)
            if not m:
                raise TopologyError(f"bad distance {d!r}: use I,J=D, e.g. 0,1=20")
            i, j, val = map(int, m.groups())
            if i >= len(nodes) or j >= len(nodes):
                raise TopologyError(f"distance {d}: there are only {len(nodes)} nodes")
            if i == j:
                raise TopologyError(f"distance {d}: a node's distance to itself is 10")
            if not 10 < val <= 255:
                raise TopologyError(f"distance {d}: must be 11..255")
            matrix.append((i, j, val))
        return cls(tuple(m for m, _ in nodes), tuple(cpus), tuple(matrix))

    def spec(self):
        """The topology as a string that parse() takes back."""
        parts = [f"{m}M" + ("" if not c else f",cpus={c[0]}" if c[0] == c[1]
                             else f",cpus={c[0]}-{c[1]}")
                 for m, c in zip(self.mem_mib, self.cpus)]
        return "/".join(parts + [f"{i},{j}={d}" for i, j, d in self.distances])

    def describe(self):
        mem = (f"{self.mem_mib[0]}M each" if len(set(self.mem_mib)) == 1
               else ",".join(f"{m}M" for m in self.mem_mib))
        return f"{self.nodes} node{'s' if self.nodes > 1 else ''}, {mem}, {self.total_cpus} CPUs"

    def label(self):
        """A short name for file names and progress lines: 4n, 2n-4096M,
        2n-6144M-1024M; -cpus and -dist mark CPUs beyond node 0 and distances;
        a preset's name."""
        if self.preset:
            return self.preset
        if len(set(self.mem_mib)) == 1:
            name = f"{self.nodes}n" + ("" if self.total_mib == 2048 else f"-{self.total_mib}M")
        else:
            name = f"{self.nodes}n-" + "-".join(f"{m}M" for m in self.mem_mib)
        if any(self.cpus[1:]) or self.cpus[0] != (0, DEFAULT_CPUS - 1):
            name += "-cpus" + "".join(str(c) for c in self.cpu_counts())
        return name + ("-dist" if self.distances else "")

    def qemu_args(self):
        """The -m, -smp, -object and -numa options for this topology."""
        smp = str(self.total_cpus)
        if sum(1 for c in self.cpus if c) > 1:
            # CPUs on several nodes: each its own socket.  QEMU's default
            # puts them all in one socket, whose shared cache then spans
            # nodes, and the guest warns (topology_sane) at boot.
            smp += f",sockets={self.total_cpus},cores=1,threads=1"
        args = ["-m", f"{self.total_mib}M", "-smp", smp]
        for i, (mem, cpus) in enumerate(zip(self.mem_mib, self.cpus)):
            args += ["-object", f"memory-backend-ram,id=m{i},size={mem}M"]
            node = f"node,nodeid={i},memdev=m{i}"
            if cpus:
                node += f",cpus={cpus[0]}" if cpus[0] == cpus[1] else f",cpus={cpus[0]}-{cpus[1]}"
            args += ["-numa", node]
        for i, j, d in self.distances:
            args += ["-numa", f"dist,src={i},dst={j},val={d}",
                     "-numa", f"dist,src={j},dst={i},val={d}"]
        return args


def add_arguments(parser, default="1"):
    """The topology options of every command-line tool: --topology SPEC, or
    virtme-ng's repeated --numa NODE and --numa-distance I,J=D."""
    parser.add_argument("--topology", "--nodes", default=None,
                        help=f"topology, e.g. 4, 2:4G or 1G,cpus=0-1/1G (default {default})")
    parser.add_argument("--numa", action="append", default=[], metavar="SIZE[,cpus=A-B]",
                        help="one node, as virtme-ng takes it; repeat per node")
    parser.add_argument("--numa-distance", action="append", default=[], metavar="I,J=D",
                        help="a distance between two nodes, as virtme-ng takes it")
    parser.set_defaults(topology_default=default)


def from_arguments(args):
    """The Topology of add_arguments()'s options; TopologyError on a bad one."""
    if args.numa or args.numa_distance:
        if args.topology:
            raise TopologyError("give --topology or --numa nodes, not both")
        if not args.numa:
            raise TopologyError("--numa-distance without --numa nodes")
        return Topology.parse("/".join(args.numa + args.numa_distance))
    return Topology.parse(args.topology or args.topology_default)
