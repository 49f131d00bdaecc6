"""gpu36: where a whole `stackpeel check` spends its time in the CLI process (engine steps wrapped, nothing changed).
Usage: python prof2.py check --fresh --no-plugins --python T --format json > /dev/null  (timings on stderr)
"""
import time, sys, os, atexit
T0 = time.monotonic()
from stackpeel import engine, cli
import stackpeel.runner.zygote as Z
def stamp(name, f):
    def g(*a, **k):
        t = time.monotonic()
        try:
            return f(*a, **k)
        finally:
            print("%-28s %.3f -> %.3f (%.3f)" % (name, t - T0, time.monotonic() - T0, time.monotonic() - t), file=sys.stderr)
    return g
import stackpeel.runner.scheduler as SCH, stackpeel.diagnosis as DG, stackpeel.redact as RD
SCH.run_checks = stamp("run_checks", SCH.run_checks)
DG.diagnose = stamp("diagnose", DG.diagnose)
RD.redact_report_dict = stamp("redact", RD.redact_report_dict)
Z.Zygotes.release_loaded = stamp("release_loaded", Z.Zygotes.release_loaded)
engine.cache.store = stamp("cache.store", engine.cache.store)
Z.Zygotes.close = stamp("zygotes.close", Z.Zygotes.close)
engine.check = stamp("engine.check", engine.check)
engine.identify = stamp("identify", engine.identify)
engine.detect = stamp("detect", engine.detect)
atexit.register(lambda: print("atexit at", round(time.monotonic() - T0, 3), file=sys.stderr))
rc = cli.main(sys.argv[1:])
print("main returned at", round(time.monotonic() - T0, 3), file=sys.stderr)
