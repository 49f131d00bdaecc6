"""Breaks one rank of stackpeel's all-reduce harness from outside, for the tests only.

The product carries no fault hook: the tests put this folder on PYTHONPATH of the target
interpreter, so Python's ``site`` imports this module in every process the probe starts,
the rank workers included, and set ``STACKPEEL_TEST_ALLREDUCE_FAULT`` to ``KIND:RANK``:

- ``raise:1``  rank 1's ``torch.distributed.all_reduce`` raises RuntimeError
- ``hang:0``   rank 0 never returns from ``all_reduce``
- ``wrong:1``  rank 1 contributes one more than its share (a silently wrong sum)

Nothing happens unless that variable is set. Standard library only (it runs in the target).
"""
import os
import sys
import time

_SPEC = os.environ.get("STACKPEEL_TEST_ALLREDUCE_FAULT", "")


def _patch(dist, kind, rank):
    real = dist.all_reduce

    def all_reduce(tensor, *args, **kwargs):
        if dist.get_rank() == rank:
            if kind == "raise":
                raise RuntimeError("fault injected from outside by the test: rank %d raises in all_reduce" % rank)
            if kind == "hang":
                time.sleep(10 ** 6)
            if kind == "wrong":
                tensor.add_(1)
        return real(tensor, *args, **kwargs)

    dist.all_reduce = all_reduce


class _PatchOnImport(object):
    """Meta-path finder that lets torch.distributed load normally, then patches it."""

    def __init__(self, kind, rank):
        self.kind, self.rank = kind, rank

    def find_spec(self, name, path=None, target=None):
        if name != "torch.distributed":
            return None
        sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module
        kind, rank = self.kind, self.rank

        def exec_module(module):
            real_exec(module)
            _patch(module, kind, rank)

        spec.loader.exec_module = exec_module
        return spec


if _SPEC:
    _kind, _, _rank = _SPEC.partition(":")
    sys.meta_path.insert(0, _PatchOnImport(_kind, int(_rank)))
