"""Exercise every way of handling an exception inside a (fake) library; prints nothing."""
import subprocess
import sys
import threading

import fakelib

for name in ("swallow", "finally_reraise", "nomatch", "with_reraise", "suppress", "translate", "raise_e",
             "warn_fallback", "log_fallback", "probe"):
    try:
        getattr(fakelib, name)()
    except Exception:
        pass
fakelib.loop(1000)
t = threading.Thread(target=fakelib.swallow_in_thread, name="worker-1")
t.start()
t.join()
if len(sys.argv) > 1 and sys.argv[1] == "child":
    subprocess.run([sys.executable, "-c", "import fakelib; fakelib.suppress()"], check=True)
