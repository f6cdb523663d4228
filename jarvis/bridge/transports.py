"""The transports the bridge can serve on, by name, and the one a configuration asks for.

    choice = pick(config)            # the player bot when [bot] names a host or a Realm, else the plugin API
    serve(config.bridge, jarvis, transport=choice)

Each transport's module declares its kind (jarvis.bridge.transport.TransportKind): its settings' type and
table, its line width and count, how it whispers, its checks and its connection. Adding a transport is its
module and one line in ``TRANSPORTS``.
"""
from __future__ import annotations

from jarvis.bridge.connection import PLUGIN_API
from jarvis.bridge.player import PLAYER_BOT
from jarvis.bridge.transport import BridgeError, TransportChoice, TransportKind, choose

TRANSPORTS: dict[str, TransportKind] = {kind.name: kind for kind in (
    PLUGIN_API,     # the default
    PLAYER_BOT,
)}
DEFAULT = PLUGIN_API.name


def pick(tables) -> TransportChoice:
    """The transport ``tables`` ask for, checked (``choose``): of the registered kinds other than the default, the
    one whose settings (``getattr(tables, kind.section)``: a jarvis.config.Config, or any object with the tables
    as attributes) ask for it; the default when none does. A BridgeError when several do."""
    asked = [kind for name, kind in TRANSPORTS.items()
             if name != DEFAULT and kind.asked_for(getattr(tables, kind.section, None))]
    if len(asked) > 1:
        raise BridgeError(f"the settings ask for {len(asked)} transports ({', '.join(k.name for k in asked)}): "
                          "set one")
    kind = asked[0] if asked else TRANSPORTS[DEFAULT]
    return choose(kind, getattr(tables, kind.section))


def default_transport(bridge) -> TransportChoice:
    """The default transport (the plugin API) with the bridge's settings, checked."""
    return choose(TRANSPORTS[DEFAULT], bridge)
