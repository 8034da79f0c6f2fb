"""The agent loop (ATLAS-style code orchestration). Knows nothing about Textual."""
