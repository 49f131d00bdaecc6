"""Writes known bytes, then ends the way argv[1] says: ok, exit3, uncaught, sigterm, sigsegv."""
import os
import signal
import sys

sys.stdout.write("out: argv=%r\n" % (sys.argv,))
sys.stdout.write("out: path=%r\n" % (sys.path,))
sys.stdout.flush()
sys.stdout.buffer.write(b"\xff\xfe raw bytes \x00\n")
sys.stdout.flush()
sys.stderr.write("err: one line\n")
sys.stderr.flush()
try:
    {}["key"]
except KeyError:
    pass
mode = sys.argv[1]
if mode == "exit3":
    sys.exit(3)
elif mode == "uncaught":
    raise RuntimeError("boom")
elif mode == "sigterm":
    os.kill(os.getpid(), signal.SIGTERM)
elif mode == "sigsegv":
    os.kill(os.getpid(), signal.SIGSEGV)
sys.stdout.write("no newline at the end")
