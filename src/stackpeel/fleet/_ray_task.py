"""The task a Ray node runs (standard library only: Ray pickles it by value, so the node needs
no stackpeel installed). It runs bundle.remote_command with the bundle on its stdin, the way
SSH and srun do, with the Ray worker's own interpreter as the one that runs stackpeel."""


def node_task(command, bundle, timeout):
    import os
    import socket
    import subprocess
    import sys

    import signal

    env = dict(os.environ, STACKPEEL_FLEET_PY=sys.executable)
    proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(bundle, timeout=timeout)
        rc = proc.returncode
    except subprocess.TimeoutExpired:  # end stackpeel and every probe it started, then say so
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        rc, err = None, err + b"\nstackpeel did not finish within the timeout"
    return {"rc": rc, "stdout": out, "stderr": err[-4000:], "hostname": socket.gethostname(),
            "python": sys.executable}
