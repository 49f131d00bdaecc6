import os
import signal
import sys


def raises(inp):
    raise OSError("libfoo.so.1: cannot open shared object file (raised by the test plugin's probe)")


def segfaults(inp):
    sys.stderr.write("about to crash\n")
    sys.stderr.flush()
    os.kill(os.getpid(), signal.SIGSEGV)


def junk(inp):
    print("\x00\xff not json {{{")
    return ["not", "a", "dict"]
