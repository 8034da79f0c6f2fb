"""Rubrics: reward arithmetic by hand, the TOML round trip, parsing the judge's rubric."""

from __future__ import annotations

import json

import pytest

from deskmate.app.agent.scripted import ScriptedModel
from deskmate.finetune.rubrics import (
    DEFAULT_WEIGHTS,
    Checks,
    Criterion,
    Rubric,
    RubricEntry,
    RubricError,
    RubricSet,
    criteria_from_json,
    criteria_to_json,
    dump_toml,
    generate_rubric,
    load_toml,
    parse_generated,
    reward,
    rubric_score,
    write_toml,
)

TF, TA, TG, PA = "task_fulfillment", "tool_appropriateness", "tool_grounding", "parameter_accuracy"


def test_reward_hand_computed_with_missing_categories_and_checks():
    rubric = Rubric((Criterion(TF, "answers", 2.0), Criterion(TF, "concise", 1.0),
                     Criterion(TA, "uses git", 1.0)),
                    Checks(answer_contains=("paris", "London")))
    # TF: (2·1 + 1·0.4) / 3 = 0.8; TA: 0.5; weights 0.4 and 0.2 renormalised over 0.6
    assert rubric_score(rubric.criteria, [1.0, 0.4, 0.5]) == pytest.approx(
        0.4 / 0.6 * 0.8 + 0.2 / 0.6 * 0.5)
    # + checks: "Paris" found, "London" not → 0.5
    assert reward(rubric, [1.0, 0.4, 0.5], "It is Paris!") == pytest.approx(0.7 + 0.5)


def test_reward_all_categories_and_custom_weights():
    criteria = (Criterion(TF, "a"), Criterion(TA, "b"), Criterion(TG, "c"), Criterion(PA, "d"))
    scores = [1.0, 0.5, 0.0, 0.25]
    assert rubric_score(criteria, scores) == pytest.approx(0.4 + 0.1 + 0.0 + 0.05)
    weights = {TF: 1.0, TA: 1.0, TG: 1.0, PA: 1.0}
    assert rubric_score(criteria, scores, weights) == pytest.approx(1.75 / 4)
    with pytest.raises(ValueError):
        rubric_score(criteria, [1.0])


def test_checks_only_and_nothing():
    assert reward(Rubric(checks=Checks(answer_regex=r"\b42\b")), [], "it is 42") == 1.0
    assert reward(Rubric(checks=Checks(answer_regex=r"\b42\b")), [], "it is 421") == 0.0
    assert Checks().score("anything") is None
    assert reward(Rubric(), [], "x") == 0.0


def _set() -> RubricSet:
    return RubricSet((
        RubricEntry("k1", 'Summarise "notes.md"\nin two lines — ünïcode',
                    Rubric((Criterion(TF, "Two lines that cover the notes", 3.0),
                            Criterion(TG, "Only facts from the file", 1.5)),
                           Checks(("notes",), r"^\w"))),
        RubricEntry("k2", "No tools here", Rubric((Criterion(TF, "Says hello", 1.0),))),
    ), weights={**DEFAULT_WEIGHTS, TF: 0.7})


def test_toml_round_trip(tmp_path):
    path = tmp_path / "rubrics.toml"
    write_toml(path, _set())
    text = path.read_text()
    assert text.startswith("# deskmate rubrics")
    loaded = load_toml(path)
    assert loaded == _set()
    assert dump_toml(loaded) == text
    # a user's edit survives the next round
    path.write_text(text.replace("weight = 1.5", "weight = 2.5"))
    assert load_toml(path).entries[0].rubric.criteria[1].weight == 2.5


@pytest.mark.parametrize(("edit", "message"), [
    (("category = \"tool_grounding\"", "category = \"vibes\""), "tasks[0].criteria[1].category"),
    (("weight = 3.0", "weight = -1"), "tasks[0].criteria[0].weight"),
    (("task_fulfillment = 0.7", "speed = 0.7"), "weights.speed"),
    (('key = "k2"', 'key = ""'), "tasks[1].key"),
    (("answer_regex = ", "answer_rx = "), "unknown check"),
])
def test_bad_rubric_files_name_the_key(tmp_path, edit, message):
    path = tmp_path / "r.toml"
    path.write_text(dump_toml(_set()).replace(*edit, 1))
    with pytest.raises(RubricError, match=message.replace("[", r"\[").replace("]", r"\]")) as err:
        load_toml(path)
    assert str(path) in str(err.value)


def test_criteria_json_reads_ours_and_eval_suites():
    criteria = (Criterion(TF, "does it", 2.0), Criterion(PA, "right path"))
    assert criteria_from_json(criteria_to_json(criteria)) == criteria
    suite = json.dumps([{"criterion": "answer names the file", "category": TF, "weight": 1}])
    assert criteria_from_json(suite) == (Criterion(TF, "answer names the file", 1.0),)


def test_parse_generated_keeps_good_items_and_guarantees_fulfillment():
    text = json.dumps({"criteria": [
        {"category": TA, "text": "Calls git_log once", "weight": 2},
        {"category": TA, "text": "calls git_log once", "weight": 1},  # duplicate
        {"category": "style", "text": "Looks nice", "weight": 1},  # unknown category
    ]})
    got = parse_generated(text, "Show the last commit")
    assert [c.category for c in got] == [TF, TA]
    assert "Show the last commit" in got[0].text
    with pytest.raises(RubricError):
        parse_generated("not json", "x")


def test_generate_rubric_asks_for_schema_json():
    reply = json.dumps({"criteria": [{"category": TF, "text": "Names the capital", "weight": 3},
                                     {"category": TG, "text": "Uses the page", "weight": 1}]})
    model = ScriptedModel([reply])
    rubric = generate_rubric(model, "What is the capital on the page?", "fetch.fetch(url)")
    assert [c.category for c in rubric.criteria] == [TF, TG]
    params = model.params[0]
    assert params.json_schema is not None and params.temperature == 0.0
    assert "fetch.fetch(url)" in model.calls[0][0].content


@pytest.mark.slow
def test_generate_rubric_with_the_real_tiny_model(tiny_model):
    rubric = generate_rubric(tiny_model, "List the files in the project folder.",
                             "filesystem.list_directory(path: str)", max_tokens=200)
    assert rubric.criteria and rubric.criteria[0].category == TF
    assert all(c.category in DEFAULT_WEIGHTS and c.weight > 0 for c in rubric.criteria)
