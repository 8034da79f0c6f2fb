"""deskmate: a local terminal agent."""

__version__ = "0.1.0"
