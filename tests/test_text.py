"""Tokenizers, vocabulary and detokenization."""

import pytest

from core.text.pipeline import TextPipeline
from core.text.tokenize import detokenize_zh, to_simplified, tokenize_en, tokenize_zh
from core.text.vocab import BOS_ID, EOS_ID, PAD_ID, SPECIALS, UNK, UNK_ID, Vocab


def test_english_is_lowercased_with_punctuation_split_and_contractions_whole():
    assert tokenize_en("I don't know, Tom's cat!") == ["i", "don't", "know", ",", "tom's", "cat", "!"]
    assert tokenize_en("I DON’T know") == ["i", "don't", "know"]  # curly apostrophe -> same token


def test_english_drops_invisible_characters_and_folds_full_width():
    assert tokenize_en("Ｈｅｌｌｏ\u200b world\x07") == ["hello", "world"]
    assert tokenize_en("   \t ") == []


def test_chinese_characters_keep_latin_runs_and_full_width_punctuation():
    assert tokenize_zh("汤姆买了iPhone 5！", "char") == ["汤", "姆", "买", "了", "iPhone", "5", "！"]


def test_chinese_jieba_words_and_backoff_to_characters():
    words = tokenize_zh("我们这个东西还没有来过。", "jieba")
    assert "".join(words) == "我们这个东西还没有来过。" and "我们" in words and len(words) < 11
    backoff = tokenize_zh("我们这个东西还没有来过。", "jieba_backoff", {"我们", "东西"})
    assert backoff[:4] == ["我们", "这", "个", "东西"]
    assert all(len(t) == 1 or t in {"我们", "东西"} for t in backoff)
    with pytest.raises(ValueError):
        tokenize_zh("你好", "pinyin")


def test_detokenize_joins_chinese_and_spaces_only_latin_neighbours():
    text = "汤姆买了iPhone 5。"
    assert detokenize_zh(tokenize_zh(text, "char")) == text
    assert detokenize_zh(["我", "有", "3", "个", "GPU"]) == "我有3个GPU"


def test_traditional_is_normalised_to_simplified():
    assert to_simplified("我們這個東西還沒有來過") == "我们这个东西还没有来过"


def test_vocab_specials_min_freq_and_json_round_trip():
    vocab = Vocab.build([["a", "b", "a"], ["a", "c", "b"]], min_freq=2)
    assert vocab.itos[:4] == list(SPECIALS) and (PAD_ID, UNK_ID, BOS_ID, EOS_ID) == (0, 1, 2, 3)
    assert vocab.itos[4:] == ["a", "b"]  # "c" seen once is cut
    assert vocab.encode(["a", "c"]) == [4, UNK_ID]
    again = Vocab.from_json(vocab.to_json())
    assert again.itos == vocab.itos
    with pytest.raises(ValueError):
        Vocab(["a", "b"])


def test_unknown_words_stay_visible_as_unk():
    vocab = Vocab([*SPECIALS, "i", "like"])
    assert vocab.decode(vocab.encode(["i", "like", "durian"]), strip_specials=False) == ["i", "like", UNK]


def test_pipeline_round_trip_of_ids():
    src = Vocab([*SPECIALS, "i", "like", "tea", "."])
    tgt = Vocab([*SPECIALS, "我", "喜", "欢", "茶", "。"])
    pipe = TextPipeline(src, tgt, "char")
    ids = pipe.target_ids(pipe.target_tokens("我喜歡茶。"))
    assert ids[0] == BOS_ID and ids[-1] == EOS_ID and UNK_ID not in ids
    assert detokenize_zh(tgt.decode(ids)) == "我喜欢茶。"
    assert pipe.source_ids(pipe.source_tokens("I like tea.")) == [4, 5, 6, 7, EOS_ID]
