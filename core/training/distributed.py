"""Data-parallel training under torchrun: every process builds the same length-bucketed batches
and trains on its own slice of each, so N processes take the same optimizer steps as one
process on the whole (global) batch.

torchrun --nproc_per_node 2 -m core.train --data ... --out ...   (gloo on CPU, nccl on GPU)
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import Tensor

from core.text.vocab import PAD_ID


@dataclass(frozen=True)
class Workers:
    """This process's place among the training processes (rank 0 of 1 when not under torchrun)."""

    rank: int = 0
    world_size: int = 1

    @property
    def is_main(self) -> bool:
        """Only the main process evaluates, prints and writes files."""
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    def shard(self, src: Tensor, tgt: Tensor) -> tuple[Tensor, Tensor, float]:
        """This process's rows of a global batch, trimmed of all-padding columns, and the weight
        of its loss: 1 normally, 0 for a stand-in row when the batch has fewer rows than processes
        (every process must still run forward and backward, or the gradient all-reduce hangs)."""
        if not self.distributed:
            return src, tgt, 1.0
        rows = torch.arange(src.size(0), device=src.device)[self.rank :: self.world_size]
        weight = 1.0
        if rows.numel() == 0:
            rows, weight = rows.new_zeros(1), 0.0
        return _trim(src[rows]), _trim(tgt[rows]), weight

    def any(self, flag: bool, device: torch.device) -> bool:
        """True on every process if it is True on one (stop together, or the others wait forever)."""
        if not self.distributed:
            return flag
        value = torch.tensor([float(flag)], device=device)
        dist.all_reduce(value, op=dist.ReduceOp.MAX)
        return bool(value.item())

    def sum(self, value: float, device: torch.device) -> float:
        if not self.distributed:
            return value
        total = torch.tensor([value], dtype=torch.float64, device=device)
        dist.all_reduce(total)
        return float(total.item())


SINGLE_PROCESS = Workers()


def _trim(batch: Tensor) -> Tensor:
    """Drop trailing columns that are padding in every row of this slice."""
    width = int((batch != PAD_ID).sum(dim=1).max())
    return batch[:, :width]


def start(device_arg: str) -> tuple[Workers, torch.device]:
    """Join the process group when torchrun started us (WORLD_SIZE > 1), and pick the device:
    under torchrun with CUDA, each process takes the GPU of its LOCAL_RANK."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    cuda = torch.cuda.is_available() and device_arg in ("auto", "cuda")
    if world_size <= 1:
        return SINGLE_PROCESS, torch.device("cuda" if cuda else ("cpu" if device_arg == "auto" else device_arg))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = torch.device(f"cuda:{local_rank}") if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    dist.init_process_group("nccl" if cuda else "gloo")
    return Workers(dist.get_rank(), dist.get_world_size()), device


def stop(workers: Workers) -> None:
    if workers.distributed and dist.is_initialized():
        dist.destroy_process_group()
