# Scenario "ranks_cache": four ranks (gloo, CPU) train the same small model and all-reduce
# its flattened gradients in a compiled function (a functional all_reduce, so Inductor logs a
# collective schedule). Only rank 3 starts with a warm Inductor cache: before the traced run,
# `WARM=1 python ranks_cache.py` (untraced) starts the same four ranks, and rank 3 alone runs
# the same steps without the all-reduce, filling its cache dir; the traced run then gives
# rank 3 a copy of that dir while ranks 0-2 get fresh, empty ones. So rank 3 hits the FX graph
# cache (and the AOTAutograd cache) for the model's forward and backward graphs, which the
# other ranks compile (misses), and every rank misses for allreduce_fn, which the warm-up never
# compiled. (The warm-up runs in spawned ranks, not in a plain process, because a plain
# process computed different FX cache keys for the same graphs.)
#
# Environment: TORCHINDUCTOR_CACHE_DIR is set per rank inside the worker, before anything is
# compiled, to RANK_CACHE_ROOT/rank_<r>.
import os
import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fcol
import torch.multiprocessing as mp
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def allreduce_fn(flat_grads):
    # a functional all_reduce, traced by Dynamo and scheduled by Inductor
    return fcol.all_reduce(flat_grads, "sum", dist.group.WORLD) / dist.get_world_size()


def train(world, all_reduce=True):
    torch.manual_seed(0)
    model = Net()
    cmodel = torch.compile(model)
    callreduce = torch.compile(allreduce_fn)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        x = torch.randn(8, 16)
        loss = cmodel(x).pow(2).mean()
        loss.backward()
        if all_reduce:
            params = list(model.parameters())
            flat = callreduce(torch.cat([p.grad.reshape(-1) for p in params]))
            for p, g in zip(params, flat.split([p.numel() for p in params])):
                p.grad = g.view_as(p)
        opt.step()
        opt.zero_grad()


def worker(rank, world):
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(os.environ["RANK_CACHE_ROOT"], "rank_%d" % rank)
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = "29541"
    dist.init_process_group("gloo", rank=rank, world_size=world)
    if os.environ.get("WARM") != "1":
        train(world)
    elif rank == 3:
        train(world, all_reduce=False)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    mp.spawn(worker, args=(4,), nprocs=4, join=True)
