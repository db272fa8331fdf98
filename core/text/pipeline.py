"""The text pipeline: both sides' tokenization and vocabularies (what a checkpoint needs to read and
write text), and building it from training pairs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from core.text.data import Pair
from core.text.tokenize import ZH_TOKENIZERS, segment_words, to_simplified, tokenize_en, tokenize_zh
from core.text.vocab import BOS_ID, EOS_ID, SPECIALS, Vocab


class TextPipeline:
    """Both sides' tokenization and vocabularies: what a checkpoint needs to read and write text."""

    def __init__(self, src_vocab: Vocab, tgt_vocab: Vocab, zh_tokenizer: str = "char"):
        if zh_tokenizer not in ZH_TOKENIZERS:
            raise ValueError(f"unknown Chinese tokenizer {zh_tokenizer!r}")
        self.src_vocab = src_vocab
        self.tgt_vocab = tgt_vocab
        self.zh_tokenizer = zh_tokenizer
        self._known_words = frozenset(t for t in tgt_vocab.itos if len(t) > 1)

    def source_tokens(self, text: str) -> list[str]:
        return tokenize_en(text)

    def target_tokens(self, text: str) -> list[str]:
        return tokenize_zh(to_simplified(text), self.zh_tokenizer, self._known_words)

    def source_ids(self, tokens: Sequence[str]) -> list[int]:
        """Encoder input: token ids then <eos>."""
        return self.src_vocab.encode(tokens) + [EOS_ID]

    def target_ids(self, tokens: Sequence[str]) -> list[int]:
        """Decoder sequence: <bos>, token ids, <eos>."""
        return [BOS_ID] + self.tgt_vocab.encode(tokens) + [EOS_ID]

    def settings(self) -> dict[str, str]:
        return {"src": "en_words", "tgt": self.zh_tokenizer, "tgt_normalize": "t2s"}


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
