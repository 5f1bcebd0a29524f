"""The ``stagegate`` console script: the CLI imported with the cyclic collector off.

Importing the CLI and what it stands on (click, stagegate's modules; PyYAML where the
command reads a file) makes tens of thousands of objects that live as long as the
process and no garbage at all, yet the collector, counting allocations, runs several
full passes over them on the way: about 7 ms of a 50 ms ``stagegate status``
(``bench/run.py startup``). So the collector is off while the CLI is imported; what the
import made is then frozen (``gc.freeze``: kept out of every later pass) and the
command runs with the collector on, like any Python program.

Only the console script does this. ``import stagegate`` (the pytest plugin, scripts that
call ``stagegate.flags``) and ``stagegate.cli.run`` leave the collector alone.
"""

from __future__ import annotations

from typing import NoReturn


def main() -> NoReturn:
    import gc

    gc.disable()
    try:
        from stagegate.cli import main as run_cli
    finally:
        gc.freeze()
        gc.enable()
    run_cli()
