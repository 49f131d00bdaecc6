"""A user's input pipeline: a torch DataLoader with two worker processes, each batch a tensor
that the worker hands to the main process through shared memory (/dev/shm), then one step on
the GPU when there is one.

With Docker's default 64 MiB /dev/shm (no --shm-size, no --ipc=host) the workers' batches do
not fit: torch's worker dies with a bus error ('This might be caused by insufficient shared
memory (shm)') or cannot write its segment ('unable to write to file </torch_...>'). Used by
the suite's ``dataloader-docker-shm`` scenario; ``--batches`` and ``--mib`` size the load (the
default, 2 workers x prefetch 2 x 48 MiB in flight, is far above 64 MiB and far below any
host's /dev/shm). Measured with torch 2.x on CPU under a 64 MiB tmpfs: each worker prints
'RuntimeError: unable to allocate shared memory(shm) for file </torch_...>: No space left on
device (28)' from its queue's feeder thread, and the loop then waits; ``--timeout`` (DataLoader's
own) turns that wait into 'DataLoader timed out after N seconds'.

``--pieces N`` makes each batch a list of N small tensors instead of one: with torch's default
``file_descriptor`` sharing strategy every tensor travels as its own file descriptor, so a low
open-files limit (``ulimit -n``) runs out (the suite's ``open-files-limit`` scenario).
"""

import argparse
import sys

import torch
from torch.utils.data import DataLoader, Dataset


class Batches(Dataset):
    def __init__(self, n: int, mib: int, pieces: int = 0):
        self.n, self.elems, self.pieces = n, mib * (1 << 20) // 4, pieces

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        if self.pieces:
            return [torch.full((16,), float(i)) for _ in range(self.pieces)]
        return torch.full((self.elems,), float(i))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--mib", type=int, default=48)
    # a worker whose batch cannot be put in shared memory dies in the queue's feeder thread and the
    # main process waits for that batch for ever (seen with torch 2.x): a deadline, as careful jobs set
    ap.add_argument("--timeout", type=float, default=30)
    ap.add_argument("--pieces", type=int, default=0, help="each batch a list of this many small tensors")
    args = ap.parse_args()
    loader = DataLoader(Batches(args.batches, args.mib, args.pieces), batch_size=None, num_workers=2, prefetch_factor=2,
                        timeout=args.timeout)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    total = 0.0
    for i, batch in enumerate(loader):
        first = batch[0] if args.pieces else batch
        total += float(first.to(device)[:16].sum())
        if float(first[0]) != float(i):
            print(f"user dataloader WRONG BATCH {i}")
            return 1
    print(f"user dataloader OK batches={args.batches} mib={args.mib} device={device}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
