"""The parts of benchmarks/rerank.py: the fusion, and the letter scores of the real tiny
model on llama.cpp."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # benchmarks/ is no package

from benchmarks.rerank import LetterScorer, fused, prompt, rank, recall

HITS = [("s", "a"), ("s", "b"), ("s", "c")]


def test_no_model_share_keeps_the_search_order_and_a_large_one_follows_the_model():
    logprobs = [math.log(0.1), math.log(0.2), math.log(0.7)]
    assert fused(HITS, logprobs, 0.0) == HITS
    assert fused(HITS, logprobs, 100.0) == [("s", "c"), ("s", "b"), ("s", "a")]
    assert rank(fused(HITS, logprobs, 100.0), {("s", "a"), ("x", "y")}) == 3
    assert rank(HITS, {("x", "y")}) is None
    assert recall([1, 3, None, 7]) == {"recall_at_1": 0.25, "recall_at_5": 0.5,
                                       "recall_at_10": 0.75}


@pytest.mark.slow
def test_the_tiny_model_scores_each_letter_once_and_reuses_the_shared_prefix(tiny_model_path):
    scorer = LetterScorer(tiny_model_path, top=3)
    lines = ["A. time: get_current_time(timezone: str)", "B. git: git_log(repo_path: str)",
             "C. fetch: fetch(url: str)"]
    first = scorer(prompt("What time is it in Oslo?", lines), 3)
    assert len(first) == 3 and all(lp <= 0 for lp in first)
    assert sum(math.exp(lp) for lp in first) <= 1.0 + 1e-6
    spent = scorer.tokens
    again = scorer(prompt("What time is it in Paris?", lines), 3)
    assert scorer.tokens - spent < spent / 2  # the list and the system text were cached
    assert len(again) == 3
