"""Corpora: many recordings checked at once (``callscope check``, the window's Open folder).

- :mod:`.verdict`: the verdict of one recording, a pure function of one file (:func:`.verdict.check_recording`),
  small enough to cross a process or a Ray task boundary cheaply;
- :mod:`.summary`: the aggregate (counts by rule, model, server and client profile, TTFD percentiles, the
  worst recordings), a monoid: batches are summarised where they were checked and merged anywhere;
- :mod:`.paths`: what ``PATH...`` names (files, folders, proxy session folders, globs, shipped names);
- :mod:`.executors`: where the function runs (this process, a process pool, a Ray cluster), one
  :class:`~.executors.ExecutorSpec` each.

Qt-free, like the rest of the engine; recordings are read by :mod:`callscope.engine.recordings.replay`,
the reader ``callscope replay`` uses, never a second one.
"""
