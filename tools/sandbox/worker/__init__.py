"""The code that runs inside the sandbox: the worker process and its protocol.

The host starts ``python -I -S boot.py IN_FD OUT_FD`` inside whatever isolation the OS
offers (isolation.py binds this whole folder, and nothing else of deskmate, into the
jail). Every module here is standard library only — no site-packages are visible in
there — and imports its siblings relatively: boot.py loads this folder as the package
``_deskmate_sandbox``, the host imports it as ``deskmate.tools.sandbox.worker`` (for
protocol.py). Start reading at main.py:

- protocol.py: length-prefixed JSON frames (both sides import it).
- channel.py: the worker's end of the frames: cells in, tool calls out, interrupts.
- namespace.py: what a cell sees: one object per server, the helpers, ToolError.
- cell.py: ``run_cell``: one cell compiled, run, its value and status; its error text.
- rlimits.py: resource limits, the per-cell CPU budget and the worker's CPU life.
- paths.py: a cell's file calls on the user's paths: through the tools, or an error.
- connected_files.py: those file calls carried by a server's file tools.
- hints.py: the hint appended to an error (misspelled server, bare tool, no network).
- state.py: what the parts share: the toolspace and whether a cell runs.
"""
