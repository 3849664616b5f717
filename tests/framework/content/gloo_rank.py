"""One rank of a real gloo all_reduce(SUM), run as a script by test_allreduce_gloo.py.

usage: python gloo_rank.py RANK WORLD PORT INPUTS.npz OUT_DIR
"""

import os
import sys

import numpy as np
import torch
import torch.distributed as dist

rank, world, port, inputs, out_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
dist.init_process_group("gloo", rank=rank, world_size=world)
t = torch.from_numpy(np.load(inputs)[f"rank{rank}"].copy())
dist.all_reduce(t, op=dist.ReduceOp.SUM)
np.save(os.path.join(out_dir, f"rank{rank}.npy"), t.numpy())
dist.destroy_process_group()
