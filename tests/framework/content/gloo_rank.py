"""One rank of a real gloo all_reduce(SUM), run as a script by test_allreduce_gloo.py.

usage: python gloo_rank.py RANK WORLD PORT INPUTS.npz OUT_DIR

INPUTS.npz holds ``<case>-rank<r>`` for every case; each case is summed in turn, in one
process group (torch is imported and the group set up once for all of them), into
``OUT_DIR/<case>-rank<r>.npy``.
"""

import os
import sys

import numpy as np
import torch
import torch.distributed as dist

rank, world, port, inputs, out_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
dist.init_process_group("gloo", rank=rank, world_size=world)
data = np.load(inputs)
for case in sorted({key.rsplit("-rank", 1)[0] for key in data.files}):
    t = torch.from_numpy(data[f"{case}-rank{rank}"].copy())
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    np.save(os.path.join(out_dir, f"{case}-rank{rank}.npy"), t.numpy())
dist.destroy_process_group()
