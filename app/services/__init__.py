"""Operations both faces offer, written once: the CLI and the TUI call these.

What belongs here: an operation a user can start from ``deskmate …`` and from a screen
(choose a model, add, import, toggle or test an MCP server, run a recorded turn, resume
a session), taking plain values and returning typed results. User errors are
``ValueError`` subclasses whose message is fit to show as is; each face turns them into
its own output (a toast, an exit code).

What does not: Textual, click, printing or prompting. The faces keep their own I/O:
click echo and prompts in ``app/cli``, workers, messages and widgets in ``app/ui``.
Arrows point down only: this package may import ``app.agent``, ``app.store``,
``app.llm``, ``app.config``, ``tools`` and ``finetune``; nothing here imports
``app.ui`` or ``app.cli``, and nothing below imports this package.

The modules: ``models`` (what can be chosen, make one the configured model),
``servers`` (MCP server config edits and a test connect), ``conversation`` (the agent
session: runtime, policy, recorder, recorded turns, new session, resume), ``adapters``
(serve a finetune run's adapter).
"""
