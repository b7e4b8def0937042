"""The garbage collector is paused while a `deftly` command starts.

Starting a command imports some 550 modules. Each allocates objects that live for the
whole process, and the collector walks them again and again as they pile up: about a tenth
of the start-up time, for nothing it could free. So the console script pauses collection
before importing anything (`pause`); once the command has built its runtime, or its event
loop first waits (`resume`, whichever comes first), what exists is frozen out of the
collector's view (`gc.freeze`) and collection resumes. A command that never gets there
(`--help`, a usage error) ends before it could matter.
"""

from __future__ import annotations

import gc


class _Collection:
    paused = False  # by `pause`, so `resume` never enables what someone else disabled


def pause() -> None:
    """Pause collection until `resume` (the console script's first step)."""
    if gc.isenabled():
        gc.disable()
        _Collection.paused = True


def resume() -> None:
    """Freeze what start-up made and collect again; nothing if `pause` did not pause."""
    if _Collection.paused:
        _Collection.paused = False
        gc.freeze()
        gc.enable()
