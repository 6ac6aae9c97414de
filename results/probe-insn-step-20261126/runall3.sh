#!/bin/sh
while pgrep -f runall2.sh > /dev/null; do sleep 5; done
/usr/bin/python3 profile.py /tmp/prof/bzImage-7c73 64:2G /tmp/prof/tb-64-pl2.txt "PCT=90 hogprof3.sh -m on -r 2"
/usr/bin/python3 profile.py /tmp/prof/bzImage-exp2 2:2G /tmp/prof/tb-exp2-2n12.txt "PCT=12 hogprof2.sh -m on -r 3"
