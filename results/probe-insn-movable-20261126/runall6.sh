#!/bin/sh
APPEND="movablecore=50%" /usr/bin/python3 profile.py /tmp/prof/bzImage-final 64:2G /tmp/prof/tb-final-mov-on2.txt "PCT=90 hogprof2.sh -m on -r 2"
APPEND="movablecore=50%" /usr/bin/python3 profile.py /tmp/prof/bzImage-final 64:2G /tmp/prof/tb-final-mov-pl2.txt "PCT=90 hogprof3.sh -m on -r 2"
