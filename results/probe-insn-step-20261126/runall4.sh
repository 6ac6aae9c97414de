#!/bin/sh
/usr/bin/python3 profile.py /tmp/prof/bzImage-final 2:2G /tmp/prof/tb-final-on.txt "PCT=12 hogprof.sh on 3"
/usr/bin/python3 profile.py /tmp/prof/bzImage-final 2:2G /tmp/prof/tb-final-off.txt "PCT=12 hogprof.sh off 3"
/usr/bin/python3 profile.py /tmp/prof/bzImage-final 64:2G /tmp/prof/tb-final-64-on1.txt "PCT=90 hogprof2.sh -m on -r 1"
