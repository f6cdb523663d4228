"""Build small, real QA models locally (the hub is out of reach in tests and benchmarks).

A byte-level BPE tokenizer trained with ``tokenizers`` on the sample wiki's articles, wrapped
as a RoBERTa tokenizer, and a randomly initialised ``RobertaForQuestionAnswering``, saved with
``save_pretrained`` so Jarvis loads them through the same code path as a downloaded model.
Used by tests/conftest.py (a tiny model trained on MINECRAFT_TEXT) and bench/bench_reader.py
(roberta-base's shape, tokenizer trained on the sample wiki). ``build_distilbert_qa_model`` does
the same for DistilBERT: a WordPiece tokenizer (cased, [CLS]/[SEP], no token_type_ids) and a
random ``DistilBertForQuestionAnswering``, the shape of distilbert-base-cased-distilled-squad.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # RoBERTa's ids 0..4

# Fixed training text for the test tokenizer, so its vocabulary does not move when articles change.
MINECRAFT_TEXT = [
    "A cow is a passive mob found in grassy biomes of the Overworld. When killed, a cow drops 0-2 leather "
    "and 1-3 raw beef, and it can be milked with a bucket.",
    "Zombies spawn in the dark, where the block light level is 0, and burn in sunlight unless they wear a helmet.",
    "A creeper is a hostile mob that walks up to players, hisses and explodes, destroying nearby blocks.",
    "Torches are crafted from one coal or charcoal above one stick, and each craft gives four torches.",
    "Diamond ore is found deep underground and must be mined with an iron pickaxe or better.",
    "A furnace smelts raw iron into iron ingots using coal, charcoal, wood or a lava bucket as fuel.",
    "Skeletons shoot arrows from a bow and drop bones and arrows when killed by a player.",
    "Wolves can be tamed with bones; a tamed wolf follows the player and attacks hostile mobs.",
    "Obsidian forms where flowing water meets a lava source and is used to build a nether portal.",
    "The player sleeps in a bed to skip the night, and beds are crafted from wool and planks.",
]


def sample_wiki_texts() -> list[str]:
    from jarvis_lab.samplewiki.site import ARTICLES_DIR

    return [path.read_text(encoding="utf-8") for path in sorted(ARTICLES_DIR.glob("*.md"))]


def build_qa_model(out_dir: Path, texts: Iterable[str], tokenizer_vocab: int = 1000, seed: int = 0,
                   **config: int) -> Path:
    """Train a tokenizer on ``texts``, make a random RoBERTa QA model (``config`` overrides), save both."""
    import torch
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForQuestionAnswering, RobertaTokenizerFast

    out_dir = Path(out_dir)
    bpe_dir = out_dir / "bpe"
    bpe_dir.mkdir(parents=True, exist_ok=True)
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=tokenizer_vocab, min_frequency=2,
                            special_tokens=SPECIAL_TOKENS, show_progress=False)
    bpe.save_model(str(bpe_dir))
    tokenizer = RobertaTokenizerFast(str(bpe_dir / "vocab.json"), str(bpe_dir / "merges.txt"),
                                     model_max_length=512)

    settings = dict(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=128, max_position_embeddings=514, type_vocab_size=1)
    settings.update(config)
    torch.manual_seed(seed)
    model = RobertaForQuestionAnswering(RobertaConfig(
        pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, **settings))
    model_dir = out_dir / "model"
    tokenizer.save_pretrained(model_dir)
    model.save_pretrained(model_dir)
    return model_dir


BERT_SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def build_distilbert_qa_model(out_dir: Path, texts: Iterable[str], tokenizer_vocab: int = 1000, seed: int = 0,
                              **config: int) -> Path:
    """Train a cased WordPiece tokenizer on ``texts``, make a random DistilBERT QA model, save both."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import DistilBertConfig, DistilBertForQuestionAnswering, DistilBertTokenizerFast

    out_dir = Path(out_dir)
    vocab_dir = out_dir / "wordpiece"
    vocab_dir.mkdir(parents=True, exist_ok=True)
    wordpiece = BertWordPieceTokenizer(lowercase=False)
    wordpiece.train_from_iterator(list(texts), vocab_size=tokenizer_vocab, min_frequency=2,
                                  special_tokens=BERT_SPECIAL_TOKENS, show_progress=False)
    wordpiece.save_model(str(vocab_dir))
    tokenizer = DistilBertTokenizerFast(str(vocab_dir / "vocab.txt"), do_lower_case=False, model_max_length=512)

    settings = dict(vocab_size=len(tokenizer), dim=64, n_layers=2, n_heads=2, hidden_dim=128,
                    max_position_embeddings=512)
    settings.update(config)
    torch.manual_seed(seed)
    model = DistilBertForQuestionAnswering(DistilBertConfig(pad_token_id=tokenizer.pad_token_id, **settings))
    model_dir = out_dir / "model"
    tokenizer.save_pretrained(model_dir)
    model.save_pretrained(model_dir)
    return model_dir


def build_bert_models(out_dir: Path, texts: Iterable[str], tokenizer_vocab: int = 600, seed: int = 0,
                      **config: int) -> tuple[Path, Path]:
    """Train an uncased WordPiece tokenizer on ``texts`` and make two random BERT models of one tiny shape (2 layers,
    hidden 64), saved like downloaded ones: an encoder (``BertModel``: what Jarvis's passage encoder starts from) and
    a QA model (``BertForQuestionAnswering``: what its reader and reranker start from). Returns (encoder, qa) dirs."""
    import torch
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertConfig, BertForQuestionAnswering, BertModel, BertTokenizerFast

    out_dir = Path(out_dir)
    vocab_dir = out_dir / "wordpiece"
    vocab_dir.mkdir(parents=True, exist_ok=True)
    wordpiece = BertWordPieceTokenizer(lowercase=True)
    wordpiece.train_from_iterator(list(texts), vocab_size=tokenizer_vocab, min_frequency=1,
                                  special_tokens=BERT_SPECIAL_TOKENS, show_progress=False)
    wordpiece.save_model(str(vocab_dir))
    tokenizer = BertTokenizerFast(str(vocab_dir / "vocab.txt"), do_lower_case=True, model_max_length=512)
    settings = dict(vocab_size=len(tokenizer), hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=128, max_position_embeddings=512)
    settings.update(config)
    dirs = []
    for name, cls in (("encoder", BertModel), ("qa", BertForQuestionAnswering)):
        torch.manual_seed(seed)
        model = cls(BertConfig(pad_token_id=tokenizer.pad_token_id, **settings))
        model_dir = out_dir / name
        tokenizer.save_pretrained(model_dir)
        model.save_pretrained(model_dir)
        dirs.append(model_dir)
    return dirs[0], dirs[1]
