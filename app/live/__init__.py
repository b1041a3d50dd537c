"""Live sources: a model decoding on a worker thread, a server's stream read on the event loop.

Each is a :class:`~callscope.live.base.LiveController`, the one lifecycle every live
source shares (show at once, grow once per frame, swap in the final analysis, keep
what arrived on failure); :class:`~callscope.live.status.LiveStatus` puts any of
them in the status bar. A new live source subclasses the controller and nothing else.
"""
