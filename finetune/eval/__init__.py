"""Evaluation: task suites over real local MCP servers, scored by deterministic checks.

``suite`` (load and validate a suite folder), ``workspace`` (a task's folder and its
servers), ``site`` (the local web site fetch tasks read), ``checks`` (the score),
``runner`` (the agent on each task, in each mode), ``results`` (what a task run gives),
``record`` (SQLite), ``report`` (aggregates, tables, chart). ``deskmate eval``
(app/cli/eval.py) is the front end.
"""

from deskmate.finetune.eval.checks import CheckResult, Score, score_task
from deskmate.finetune.eval.results import TaskRun
from deskmate.finetune.eval.runner import EvalOutcome, EvalSettings, run_eval, run_task
from deskmate.finetune.eval.suite import Suite, SuiteError, Task, load_suite

__all__ = ["CheckResult", "EvalOutcome", "EvalSettings", "Score", "Suite", "SuiteError",
           "Task", "TaskRun", "load_suite", "run_eval", "run_task", "score_task"]
