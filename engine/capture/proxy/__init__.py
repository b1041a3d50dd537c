"""The recording proxy: sit between any client and its server, forward everything unchanged, record each stream.

- :mod:`.config`: where it listens, the upstream, how paths map (:class:`ProxyConfig`);
- :mod:`.server`: the asyncio + h11 server that forwards byte for byte (:class:`ProxyServer`);
- :mod:`.lines`: what is kept of a streamed answer (decoded, split, stamped, masked);
- :mod:`.turn`: one exchange, its verdicts and its one-line summary (:class:`Turn`);
- :mod:`.session`: the session folder (a capture trace per streamed turn, an index of all).

``callscope proxy`` (:mod:`callscope.commands.proxy`) and the window's Proxy source
(:mod:`callscope.live.proxy`) are its two front ends; ``callscope bench proxy`` measures it.
"""

from callscope.engine.capture.proxy.config import ProxyConfig, check_upstream, is_loopback, parse_listen
from callscope.engine.capture.proxy.server import ProxyObserver, ProxyServer
from callscope.engine.capture.proxy.session import INDEX_NAME, SessionFolder, is_session_folder, turn_number
from callscope.engine.capture.proxy.turn import Turn

__all__ = [
    "INDEX_NAME",
    "ProxyConfig",
    "ProxyObserver",
    "ProxyServer",
    "SessionFolder",
    "Turn",
    "check_upstream",
    "is_loopback",
    "is_session_folder",
    "parse_listen",
    "turn_number",
]
