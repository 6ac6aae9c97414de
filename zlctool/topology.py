"""NUMA topologies for QEMU: parsing, validation and the command-line options.

A topology is a node count, the memory of each node, the CPUs of each node
and an optional distance matrix.  Everything is checked before QEMU starts,
so that a bad topology costs a one-line error instead of a confusing boot.
"""

from dataclasses import dataclass
import re

# x86_64 NODES_SHIFT=6: Linux handles 64 nodes (QEMU itself would take 128).
MAX_NODES = 64
# Linux on x86 ignores nodes below 4 MiB; QEMU wants 2 MiB alignment.
MIN_NODE_MIB = 4
NODE_ALIGN_MIB = 2


class TopologyError(ValueError):
    """A topology that QEMU or Linux would not take."""


def parse_size_mib(text):
    """'2G', '512M', '1536' (MiB) -> MiB as an int."""
    m = re.fullmatch(r"\s*(\d+)\s*([MmGg]?)(?:i?[Bb])?\s*", str(text))
    if not m:
        raise TopologyError(f"bad memory size {text!r}: use e.g. 512M or 2G")
    value = int(m.group(1))
    return value * 1024 if m.group(2).lower() == "g" else value


def _split_list(text):
    return [p for p in re.split(r"[,\s]+", str(text).strip()) if p != ""]


def parse_distances(text, nodes):
    """'10,20;20,10' (rows separated by ';') -> list of rows of ints."""
    rows = [r for r in str(text).strip().split(";") if r.strip() != ""]
    if len(rows) != nodes:
        raise TopologyError(
            f"distance matrix has {len(rows)} rows, expected {nodes} (one per node)")
    matrix = []
    for i, row in enumerate(rows):
        cells = _split_list(row)
        if len(cells) != nodes:
            raise TopologyError(
                f"distance matrix row {i} has {len(cells)} entries, expected {nodes}")
        try:
            values = [int(c) for c in cells]
        except ValueError:
            raise TopologyError(f"distance matrix row {i} is not all integers: {row.strip()!r}")
        matrix.append(values)
    for i in range(nodes):
        for j in range(nodes):
            d = matrix[i][j]
            if i == j and d != 10:
                raise TopologyError(f"distance from node {i} to itself must be 10, not {d}")
            if i != j and not 10 < d <= 255:
                raise TopologyError(
                    f"distance from node {i} to node {j} must be 11..255, not {d}")
    return matrix


@dataclass(frozen=True)
class Topology:
    mem_mib: tuple          # memory of each node, MiB
    cpus: tuple             # CPUs of each node
    distances: tuple = None  # rows of the distance matrix, or None

    @property
    def nodes(self):
        return len(self.mem_mib)

    @property
    def total_mib(self):
        return sum(self.mem_mib)

    @property
    def total_cpus(self):
        return sum(self.cpus)

    @classmethod
    def make(cls, nodes, mem="2G", cpus="2", dist=None, mem_is_total=True):
        """Build and check a topology.

        nodes: node count.  mem: one size, or a list of sizes (one per node);
        a single size is the total, split evenly, unless mem_is_total is
        False, when it is per node.  cpus: one count for node 0, or a list
        (one per node).  dist: an optional 'a,b;c,d' matrix.
        """
        try:
            nodes = int(nodes)
        except (TypeError, ValueError):
            raise TopologyError(f"node count must be a whole number, not {nodes!r}")
        if not 1 <= nodes <= MAX_NODES:
            raise TopologyError(f"node count must be 1..{MAX_NODES}, not {nodes}")

        mems = _split_list(mem)
        if len(mems) == 1:
            size = parse_size_mib(mems[0])
            if mem_is_total:
                if size % nodes:
                    raise TopologyError(
                        f"{size} MiB does not divide evenly over {nodes} nodes")
                mem_mib = [size // nodes] * nodes
            else:
                mem_mib = [size] * nodes
        elif len(mems) == nodes:
            mem_mib = [parse_size_mib(m) for m in mems]
        else:
            raise TopologyError(f"{len(mems)} memory sizes given for {nodes} nodes")
        for i, m in enumerate(mem_mib):
            if m < MIN_NODE_MIB or m % NODE_ALIGN_MIB:
                raise TopologyError(
                    f"node {i} memory {m} MiB: must be at least {MIN_NODE_MIB} MiB "
                    f"and a multiple of {NODE_ALIGN_MIB} MiB")

        cpu_list = _split_list(cpus)
        try:
            cpu_counts = [int(c) for c in cpu_list]
        except ValueError:
            raise TopologyError(f"CPU counts must be whole numbers: {cpus!r}")
        if len(cpu_counts) == 1:
            cpu_counts = cpu_counts + [0] * (nodes - 1)
        if len(cpu_counts) != nodes:
            raise TopologyError(f"{len(cpu_counts)} CPU counts given for {nodes} nodes")
        if any(c < 0 for c in cpu_counts) or sum(cpu_counts) < 1:
            raise TopologyError("CPU counts must be >= 0 with at least one CPU in all")
        if sum(cpu_counts) > 64:
            raise TopologyError(f"{sum(cpu_counts)} CPUs: at most 64")

        matrix = None
        if dist:
            matrix = tuple(tuple(r) for r in parse_distances(dist, nodes))
        return cls(tuple(mem_mib), tuple(cpu_counts), matrix)

    def describe(self):
        mem = (f"{self.mem_mib[0]}M each" if len(set(self.mem_mib)) == 1
               else ",".join(f"{m}M" for m in self.mem_mib))
        return f"{self.nodes} node{'s' if self.nodes > 1 else ''}, {mem}, {self.total_cpus} CPUs"

    def qemu_args(self):
        """The -m, -smp, -object and -numa options for this topology."""
        args = ["-m", f"{self.total_mib}M", "-smp", str(self.total_cpus)]
        cpu = 0
        for i, (mem, ncpu) in enumerate(zip(self.mem_mib, self.cpus)):
            args += ["-object", f"memory-backend-ram,id=m{i},size={mem}M"]
            node = f"node,nodeid={i},memdev=m{i}"
            if ncpu:
                node += f",cpus={cpu}" if ncpu == 1 else f",cpus={cpu}-{cpu + ncpu - 1}"
                cpu += ncpu
            args += ["-numa", node]
        if self.distances:
            for i, row in enumerate(self.distances):
                for j, d in enumerate(row):
                    if i != j:
                        args += ["-numa", f"dist,src={i},dst={j},val={d}"]
        return args
