"""The entry of a worker process (``python -m runner.workers.main``): Playwright's
driver starts before the worker's own imports, not after them.

A worker imports the runner (about 200 ms) and loads the project before it can run
anything, and Playwright's driver (a Node process) takes about as long to start: begun
first (:mod:`runner.browser.early_driver`), it comes up while those run, so each worker of a
collection or of ``unotest watch`` is ready sooner. Only the standard library and the
early driver are imported here before the start.
"""

from __future__ import annotations

import gc
import signal
import sys

__all__ = ["main"]


def main() -> int:
    # Before the driver starts: it inherits what is ignored, as it did when the worker
    # started it itself (the orchestrator decides what a Ctrl-C or a closed terminal
    # means; both reach every process of the group).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # The imports make almost no garbage, but their allocations would set off
    # collections walking everything imported so far (about 15 % of their CPU, which
    # the driver's start and the other workers need): off until they are done, then on
    # with the imported modules frozen, never walked again.
    gc.disable()
    from runner.browser import early_driver

    early_driver.start()
    try:
        from runner.workers import worker
    except BaseException:
        early_driver.discard()
        raise
    finally:
        gc.freeze()
        gc.enable()
    code = worker.main(early_driver.take())
    # The process ends now: its objects are left to the OS rather than walked by
    # Python's last collection (tens of milliseconds the orchestrator waits for).
    gc.freeze()
    return code


if __name__ == "__main__":
    sys.exit(main())
