"""Kubernetes, without a client library or cluster credentials in stackpeel: ``stackpeel fleet
--k8s-manifest`` prints a manifest (JSON, which ``kubectl apply -f -`` reads) of a ConfigMap
holding stackpeel's bundle and a DaemonSet that runs ``stackpeel check --format json`` once in
the image of your training job on every GPU node, prints the report, and then sleeps so the
report stays readable with ``kubectl logs``. The collector is ``stackpeel fleet --from``:

    stackpeel fleet --k8s-manifest --image my-training-image:tag | kubectl apply -f -
    kubectl -n stackpeel rollout status ds/stackpeel
    for p in $(kubectl -n stackpeel get pods -o name); do
      kubectl -n stackpeel logs "$p" > "${p#pod/}.json"; done
    stackpeel fleet --from *.json
    kubectl delete -f <(stackpeel fleet --k8s-manifest --image my-training-image:tag)

The pod gets the node's GPUs the way a training pod would (``nvidia.com/gpu`` limit, or the
runtime class you name), so the report is what that job would see.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Dict, List, Optional

from .bundle import make_bundle

MOUNT = "/opt/stackpeel-bundle"
#: the container's command; {python_arg} is filled from --python
CONTAINER_SCRIPT = (
    'd=$(mktemp -d) && tar -xzf ' + MOUNT + '/bundle.tgz -C "$d" && '
    'py=$(command -v python3 || command -v python) && '
    'PYTHONPATH="$d" PYTHONDONTWRITEBYTECODE=1 "$py" -m stackpeel check --format json{python_arg}{extra} '
    '> "$d/report.json" 2> "$d/stderr"; rc=$?; cat "$d/report.json"; '
    'echo "stackpeel exited $rc" >&2; tail -5 "$d/stderr" >&2; rm -rf "$d"; exec sleep infinity'
)


def manifest(image: str, namespace: str = "stackpeel", python: Optional[str] = None, gpus: int = 1,
             runtime_class: Optional[str] = None, node_selector: Optional[Dict[str, str]] = None,
             check_args: List[str] = ()) -> Dict[str, Any]:
    bundle = base64.b64encode(make_bundle()).decode("ascii")
    python_arg = f" --python {python}" if python else ""
    extra = "".join(" " + a for a in check_args)
    container: Dict[str, Any] = {
        "name": "stackpeel",
        "image": image,
        "command": ["/bin/sh", "-c", CONTAINER_SCRIPT.format(python_arg=python_arg, extra=extra)],
        "volumeMounts": [{"name": "bundle", "mountPath": MOUNT, "readOnly": True}],
        "resources": {"limits": {"nvidia.com/gpu": gpus}} if gpus else {},
    }
    spec: Dict[str, Any] = {
        "containers": [container],
        "volumes": [{"name": "bundle", "configMap": {"name": "stackpeel-bundle"}}],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "terminationGracePeriodSeconds": 5,
    }
    if runtime_class:
        spec["runtimeClassName"] = runtime_class
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    labels = {"app.kubernetes.io/name": "stackpeel"}
    return {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}},
            {"apiVersion": "v1", "kind": "ConfigMap",
             "metadata": {"name": "stackpeel-bundle", "namespace": namespace, "labels": labels},
             "binaryData": {"bundle.tgz": bundle}},
            {"apiVersion": "apps/v1", "kind": "DaemonSet",
             "metadata": {"name": "stackpeel", "namespace": namespace, "labels": labels},
             "spec": {"selector": {"matchLabels": labels},
                      "template": {"metadata": {"labels": labels}, "spec": spec}}},
        ],
    }


def render_manifest(**kw: Any) -> str:
    return json.dumps(manifest(**kw), indent=2) + "\n"
