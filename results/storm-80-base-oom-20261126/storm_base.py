import sys, json
sys.path.insert(0, "/work/main")
from zlctool import workloads
class P:
    def start(self, w): print("start", w, flush=True)
    def finish(self, w): print("finish", w, flush=True)
plan = dict(workloads.PLANS["full"]["storm"])
plan["base"] = "base base base base"
zl = workloads.build_zlcload()
try:
    s = workloads.run("storm", {"base": "build/7.3/guest-base-distro/arch/x86/boot/bzImage"}, plan,
                      "storm-base-probe-20261126", "build/7.3/selftests/zonelist_cache_memhog", zl, P(), append="nokaslr")
    print("samples", len(s))
    json.dump(s, open("/tmp/storm-base.json", "w"))
except Exception as e:
    print("ERROR", e)
