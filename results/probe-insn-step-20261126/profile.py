"""Boot a kernel under QEMU -icount with tbprof.so and run hogprof.sh:
python3 profile.py KERNEL TOPOLOGY OUT 'PCT=90 hogprof.sh on 3'"""
import os, sys
sys.path.insert(0, "/work/main")
from zlctool import guest
from zlctool.topology import Topology

kernel, topo, out, cmd = sys.argv[1:5]
here = os.path.dirname(os.path.abspath(__file__))
res = guest.run(kernel, Topology.parse(topo), cmd,
                binaries=["/work/main/build/7.3/selftests/zonelist_cache_memhog",
                          os.path.join(here, "hogprof.sh"), os.path.join(here, "hogprof2.sh"), os.path.join(here, "hogprof3.sh"), os.path.join(here, "zonelist_cache_memhog_p")],
                timeout=3000, stage="probe", name=os.path.basename(out), append=("nokaslr " + os.environ.get("APPEND", "")).strip(),
                extra=guest.ICOUNT_ARGS + ["-plugin", f"/tmp/tbprof.so,out={os.path.abspath(out)}"])
for line in res.lines:
    if " real " in line or line.startswith(("zlc", "numa")):
        print(line)
