"""torch's own modules holding our weights, to compare against."""

import torch
from torch import nn

from core.model.attention import MultiHeadAttention


def copy_into_torch(ours: MultiHeadAttention) -> nn.MultiheadAttention:
    """An nn.MultiheadAttention with our q/k/v/out projections (packed into its in_proj), in eval mode."""
    ref = nn.MultiheadAttention(ours.n_heads * ours.head_dim, ours.n_heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    return ref.eval()
