# stackpeel run: bootstrap loaded by the monitored Python through PYTHONPATH.
#
# It starts the unmask monitor (a copy of stackpeel/unmask/monitor.py that sits next to
# this file as _stackpeel_unmask_monitor.py), takes its own directory off sys.path again,
# and then imports the sitecustomize this one shadows, if any, exactly as site.py would.
# Any Python may read this file (even an old one found through a shebang), so it uses no
# syntax newer than Python 2.7 and does nothing at all before Python 3.8.
import sys
import os

_here = os.path.dirname(os.path.abspath(__file__))


def _stackpeel_load():
    if sys.version_info < (3, 8) or not os.environ.get("STACKPEEL_UNMASK_DIR"):
        return None
    try:
        import _stackpeel_unmask_monitor
        return _stackpeel_unmask_monitor
    except Exception:
        # never change what the program does: a broken monitor just records nothing
        return None


def _stackpeel_start(mod):
    if mod is not None:
        try:
            mod.install_from_env()
        except Exception:
            pass


def _stackpeel_chain():
    """Import the next sitecustomize on sys.path (the one this file shadows)."""
    me = sys.modules.get("sitecustomize")
    del sys.modules["sitecustomize"]
    try:
        import sitecustomize  # noqa: F401 - the shadowed one, if any
    except ImportError as exc:
        if getattr(exc, "name", None) != "sitecustomize":
            raise   # site.py reports it as an error in sitecustomize, as without us
        sys.modules["sitecustomize"] = me


_stackpeel_mod = _stackpeel_load()
while _here in sys.path:
    sys.path.remove(_here)
try:
    _stackpeel_chain()
finally:
    _stackpeel_start(_stackpeel_mod)
