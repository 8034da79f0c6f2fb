"""The Textual app. Nothing here is imported until the app starts."""
