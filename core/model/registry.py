"""The architecture registry: everything that differs between architectures, in one place.

Every caller asks the spec of a config's `arch` (which attention kinds it has, the shape of its
trace, how to describe it, what the app should say it lacks) instead of testing the name."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from core.model.base import Seq2Seq
from core.model.config import ModelConfig
from core.model.intervention import HeadRef
from core.model.rnn import BahdanauSeq2Seq
from core.model.transformer import Transformer

ATTENTION_KINDS = {
    "encoder": "encoder self-attention",
    "decoder": "decoder masked self-attention",
    "cross": "cross-attention",
}
KIND_BY_LABEL = {label: kind for kind, label in ATTENTION_KINDS.items()}


@dataclass(frozen=True)
class ArchSpec:
    name: str  # the value of ModelConfig.arch
    title: str  # what people read
    model_class: type[Seq2Seq]
    # (n_enc_layers, n_dec_layers) -> layers of each attention kind; 0 = the kind does not exist
    attention_layers: Callable[[int, int], dict[str, int]]
    describe: Callable[[ModelConfig], str]  # the shape in a few words
    shape_rows: Callable[[ModelConfig], list[tuple[str, str]]]  # the shape as (label, value) rows
    check: Callable[[ModelConfig], None] = lambda config: None  # raise ValueError beyond ModelConfig.validate
    fixed_config: Mapping[str, int] = field(default_factory=dict)  # config fields the architecture fixes
    # feature -> what a page says when this architecture lacks it (features: "positions", "masks",
    # "self_attention", "heads")
    lacks: Mapping[str, str] = field(default_factory=dict)

    def attention_kinds(self, config: ModelConfig) -> list[str]:
        """The attention kinds this model has, in ATTENTION_KINDS order."""
        layers = self.attention_layers(config.n_enc_layers, config.n_dec_layers)
        return [kind for kind in ATTENTION_KINDS if layers[kind]]


def _check_rnn(config: ModelConfig) -> None:
    if config.n_heads != 1 or config.d_model % 2:
        raise ValueError("arch='rnn' has one additive attention (n_heads=1) and needs an even d_model")


TRANSFORMER = ArchSpec(
    name="transformer",
    title="Transformer",
    model_class=Transformer,
    attention_layers=lambda enc, dec: {"encoder": enc, "decoder": dec, "cross": dec},
    describe=lambda c: f"d_model {c.d_model}, {c.n_heads} heads, {c.n_enc_layers}+{c.n_dec_layers} layers",
    shape_rows=lambda c: [
        ("d_model", str(c.d_model)),
        ("Attention heads", f"{c.n_heads} (d_k = {c.head_dim})"),
        ("Layers (encoder + decoder)", f"{c.n_enc_layers} + {c.n_dec_layers}"),
        ("Feed-forward width", str(c.d_ff)),
        ("Layer norm", "pre-LN" if c.norm_first else "post-LN (as in the paper)"),
    ],
)
GRU = ArchSpec(
    name="rnn",
    title="GRU + Bahdanau attention",
    model_class=BahdanauSeq2Seq,
    attention_layers=lambda enc, dec: {"encoder": 0, "decoder": 0, "cross": 1},
    describe=lambda c: f"width {c.d_model}, {c.n_enc_layers}+{c.n_dec_layers} GRU layers",
    shape_rows=lambda c: [
        ("Width (embedding, GRU state)", f"{c.d_model} (encoder: {c.d_model // 2} per direction)"),
        ("GRU layers (encoder + decoder)", f"{c.n_enc_layers} + {c.n_dec_layers}"),
        ("Attention", "additive (Bahdanau): vᵀ tanh(W_s s + W_h h)"),
    ],
    check=_check_rnn,
    fixed_config={"n_heads": 1},
    lacks={
        "positions": "The active model is a GRU with Bahdanau attention: it has no positional encoding "
        "(a GRU reads the words in order).",
        "masks": "The active model is a GRU with Bahdanau attention: it has no padding-and-causal masks of "
        "multi-head attention (its additive attention masks only source padding).",
        "self_attention": "This GRU model has no self-attention: its recurrent state carries the tokens so far.",
        "heads": "This GRU model has one attention, from the decoder to the source (Bahdanau's additive "
        "attention): no self-attention, no heads, no layers of attention.",
    },
)
ARCHITECTURES = {spec.name: spec for spec in (TRANSFORMER, GRU)}


def spec_for(arch: str) -> ArchSpec:
    """The spec of an architecture name; ValueError for an unknown one (uploads pass here)."""
    spec = ARCHITECTURES.get(arch) if isinstance(arch, str) else None
    if spec is None:
        raise ValueError(f"arch={arch!r} is not known; expected one of {', '.join(ARCHITECTURES)}")
    return spec


def check_config(config: ModelConfig) -> None:
    """Everything a config must satisfy to build a model: the generic limits and its architecture's."""
    config.validate()
    spec_for(config.arch).check(config)


def build_model(config: ModelConfig) -> Seq2Seq:
    check_config(config)
    return spec_for(config.arch).model_class(config)


def check_heads(config: ModelConfig, heads: frozenset[HeadRef]) -> None:
    """ValueError naming the first head this model does not have (1-based, as typed)."""
    spec = spec_for(config.arch)
    layers = spec.attention_layers(config.n_enc_layers, config.n_dec_layers)
    for head in sorted(heads):
        if not layers[head.kind]:
            raise ValueError(f"{head.spec()}: this {spec.title} model has no {ATTENTION_KINDS[head.kind]}")
        if head.layer >= layers[head.kind]:
            raise ValueError(
                f"{head.spec()}: layer {head.layer + 1} does not exist; {ATTENTION_KINDS[head.kind]} has {layers[head.kind]}"
            )
        if head.head >= config.n_heads:
            raise ValueError(
                f"{head.spec()}: head {head.head + 1} does not exist; the model has {config.n_heads} per layer"
            )


def all_heads(config: ModelConfig) -> list[HeadRef]:
    """Every attention head of the model, kind by kind, layer by layer."""
    layers = spec_for(config.arch).attention_layers(config.n_enc_layers, config.n_dec_layers)
    return [
        HeadRef(kind, layer, head)
        for kind in ATTENTION_KINDS
        for layer in range(layers[kind])
        for head in range(config.n_heads)
    ]
