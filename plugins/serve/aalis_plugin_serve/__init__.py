"""``aalis serve``: the memory as a JSON API, a live event stream and a web page.

See docs/host/serve.md.
"""

from aalis_plugin_serve.app import create_app
from aalis_plugin_serve.broker import EventBroker
from aalis_plugin_serve.config import ServeConfig
from aalis_plugin_serve.plugin import Serve

__all__ = ["EventBroker", "Serve", "ServeConfig", "create_app"]
