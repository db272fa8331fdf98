"""Building the text pipeline (both vocabularies) from training pairs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from core.data import Pair
from core.text import SPECIALS, TextPipeline, Vocab, segment_words, to_simplified, tokenize_en, tokenize_zh


def build_pipeline(train: Sequence[Pair], zh_tokenizer: str, min_freq: int) -> TextPipeline:
    """Source words and target units seen at least min_freq times in training.

    jieba_backoff keeps frequent multi-character words and every training character, so a
    rare word is spelt out in characters instead of becoming <unk>.
    """
    src_vocab = Vocab.build((tokenize_en(p.en) for p in train), min_freq)
    targets = [to_simplified(p.zh) for p in train]
    if zh_tokenizer == "jieba_backoff":
        word_counts = Counter(w for t in targets for w in segment_words(t) if len(w) > 1)
        words = sorted((w for w, c in word_counts.items() if c >= min_freq), key=lambda w: (-word_counts[w], w))
        chars = Vocab.build(tokenize_zh(t, "char") for t in targets).itos[len(SPECIALS) :]
        tgt_vocab = Vocab([*SPECIALS, *words, *(c for c in chars if c not in set(words))])
    else:
        tgt_vocab = Vocab.build((tokenize_zh(t, zh_tokenizer) for t in targets), min_freq)
    return TextPipeline(src_vocab, tgt_vocab, zh_tokenizer)
