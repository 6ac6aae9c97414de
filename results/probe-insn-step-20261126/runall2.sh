#!/bin/sh
/usr/bin/python3 profile.py /tmp/prof/bzImage-7c73 64:2G /tmp/prof/tb-64-pl1.txt "PCT=90 hogprof3.sh -m on -r 1"
/usr/bin/python3 profile.py /tmp/prof/bzImage-exp 2:2G /tmp/prof/tb-exp-2n12.txt "PCT=12 hogprof2.sh -m on -r 3"
/usr/bin/python3 profile.py /tmp/prof/bzImage-exp 64:2G /tmp/prof/tb-exp-64-on1.txt "PCT=90 hogprof2.sh -m on -r 1"
