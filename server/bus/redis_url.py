"""What a Redis bus URL says beyond redis-py's own fields: its own module, since the cardroom
(the leases) reads it as well as the bus.

The URL may carry ``channel_prefix`` (``redis://host:6379/0?channel_prefix=prod:``): pub/sub
ignores the database number, so two deployments (or two test runs) on one Redis keep apart
by prefix; the nodes of one cardroom must share it. ``cluster=yes`` says the address is a
node of a Redis Cluster (any one: the others are found through it).
"""

from __future__ import annotations

from typing import NamedTuple
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_YES, _NO = {"yes", "true", "1", "on"}, {"no", "false", "0", "off", ""}


class RedisTarget(NamedTuple):
    """What a bus URL says: redis-py's URL (ours without our own fields), the channel prefix,
    and whether it names a node of a Redis Cluster."""

    url: str
    prefix: str
    cluster: bool


def split_url(url: str) -> RedisTarget:
    """The Redis URL without our own query fields (``channel_prefix``, ``cluster``), and what
    they say.

    >>> split_url("redis://r:6379/0?channel_prefix=a:&socket_timeout=3&cluster=yes")
    RedisTarget(url='redis://r:6379/0?socket_timeout=3', prefix='a:', cluster=True)
    """
    parts = urlsplit(url)
    fields = parse_qsl(parts.query, keep_blank_values=True)
    prefix = "".join(value for key, value in fields if key == "channel_prefix")
    cluster = any(_flag(key, value) for key, value in fields if key == "cluster")
    query = urlencode(
        [(key, value) for key, value in fields if key not in ("channel_prefix", "cluster")]
    )
    if cluster and parts.scheme not in ("redis", "rediss"):
        raise ValueError(f"a Redis Cluster is reached over redis:// or rediss://, not {url!r}")
    if cluster and ("{" in prefix or "}" in prefix):
        # The first braces of a name are its hash tag: the prefix's would put every channel
        # and every lease in one slot.
        raise ValueError(f"channel_prefix {prefix!r}: no braces on a Redis Cluster")
    return RedisTarget(urlunsplit(parts._replace(query=query)), prefix, cluster)


def _flag(key: str, value: str) -> bool:
    if value.lower() in _YES:
        return True
    if value.lower() in _NO:
        return False
    raise ValueError(f"{key}={value!r}: yes or no")
