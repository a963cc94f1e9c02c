#!/usr/bin/env python3
"""Runs a command with its standard error on a pseudo-terminal, as a person at a terminal
would see it, for the tests of what Galley draws only on a terminal (progress bars).

Usage: pty_run.py COMMAND [ARGS...]
Writes what the command printed to the terminal on standard error (bytes as they came, escape
sequences included), passes its standard output through, and exits with its status.
"""
import os
import pty
import subprocess
import sys

master, slave = pty.openpty()
process = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
os.close(slave)
terminal = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:  # EIO: the command closed the terminal's last descriptor
        break
    if not chunk:
        break
    terminal += chunk
out = process.stdout.read()
status = process.wait()
sys.stdout.buffer.write(out)
sys.stderr.buffer.write(terminal)
sys.exit(status)
