"""The script the host starts: ``python -I -S -B -u boot.py IN_FD OUT_FD``.

-I leaves this folder off sys.path (a cell's ``import channel`` must not find our
modules by accident), so this folder becomes the package ``_deskmate_sandbox`` by path,
and its modules import each other relatively, as they do on the host.
"""

import importlib.util
import sys
from pathlib import Path

PACKAGE = "_deskmate_sandbox"


def load_package() -> None:
    here = Path(__file__).parent
    spec = importlib.util.spec_from_file_location(
        PACKAGE, here / "__init__.py", submodule_search_locations=[str(here)])
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)


if __name__ == "__main__":
    load_package()
    sys.exit(importlib.import_module(f"{PACKAGE}.main").main(sys.argv))
