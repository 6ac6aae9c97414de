#!/bin/sh
K=/work/main/build/7.3/guest-distro/arch/x86/boot/bzImage
for v in "cmpP:-m compare -P -r 1" "cmp:-m compare -r 1" "on2:-m on -r 2" "on1:-m on -r 1"; do
  n=${v%%:*}; a=${v#*:}
  echo "== $n $a"
  /usr/bin/python3 profile.py $K 64:2G /tmp/prof/tb-64-$n.txt "PCT=90 hogprof2.sh $a"
done
