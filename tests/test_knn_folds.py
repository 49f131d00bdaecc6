"""bench/knn_folds.py measures explain's guess by resemblance across repositories: its index must
score and vote as explain's (:class:`stackpeel.explain.similar.Index`), or the figures it reports
say nothing about explain."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path

from stackpeel.explain import similar

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("knn_folds", ROOT / "bench" / "knn_folds.py")
knn_folds = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("knn_folds", knn_folds)
_spec.loader.exec_module(knn_folds)

#: real messages of the stack (CUDA runtime loader, torch's caching allocator, Python's import
#: system, torch's C++ extension builder), each with the code its kind of thread established
EXEMPLARS = [
    ("cuda-runtime-missing", "https://github.com/a/a/issues/1",
     "ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory"),
    ("cuda-runtime-missing", "https://github.com/b/b/issues/2",
     "OSError: libcudart.so.12: cannot open shared object file: No such file or directory"),
    ("gpu-oom", "https://github.com/c/c/issues/3",
     "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 15.77 GiB total "
     "capacity; 14.20 GiB already allocated)"),
    ("triton-not-installed", "https://github.com/d/d/issues/4",
     "ModuleNotFoundError: No module named 'triton'"),
    ("cuda-home-missing", "https://github.com/e/e/issues/5",
     "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root."),
]

QUERIES = [
    "ImportError: libcudart.so.11.0: cannot open shared object file",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "ModuleNotFoundError: No module named 'triton.language'",
    "OSError: CUDA_HOME environment variable is not set.",
    "ModuleNotFoundError: No module named 'distutils'",
]


def test_the_harness_index_answers_as_explains_index():
    rows = [(code, url, Counter(similar.tokens(text))) for code, url, text in EXEMPLARS]
    theirs = similar.Index([(code, url, dict(c)) for code, url, c in rows])
    ours = knn_folds.Idx(rows, "tfidf")
    answered = 0
    for q in QUERIES:
        expected = [g.code for g in theirs.nearest(q)]
        got = knn_folds.vote(ours.sims(q), similar.K, similar.MIN_SIMILARITY)
        assert got == expected, (q, got, expected)
        answered += bool(got)
    # the fixed text does exercise both answers and refusals (the missing 'distutils' resembles
    # no thread whose missing module was another)
    assert 0 < answered < len(QUERIES)


def test_the_folds_cut_across_the_validation_split():
    """The folds use another digit of the hash than the split: training repositories fall in all
    five folds, not in a few."""
    split = knn_folds.corpus_split.compute_split()
    folds = Counter(knn_folds.fold(h.repository) for h in split.training)
    assert sorted(folds) == list(range(knn_folds.FOLDS))
    assert min(folds.values()) > len(split.training) / (3 * knn_folds.FOLDS)
