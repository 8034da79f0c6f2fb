"""Data shipped inside the wheel: default config, model registry, styles, eval suites.

Read with ``importlib.resources.files("deskmate.assets")`` so it works from a wheel as well
as from a checkout.
"""
