"""Several nodes, one cardroom: which node runs which table, and commands for tables run elsewhere.

Leases. A node runs a table while it holds the table's lease: a Redis key naming the node,
set only if absent and renewed every third of its lifetime (``lease_seconds``). When a node
dies its leases run out and the other nodes take its tables over. A lease alone does not
guard the database (a node stalled past its lease may wake up still believing it runs the
table), so taking a table over also raises the table's fencing token in the database
(:func:`server.store.fencing.claim_table`); every write of the table checks it, and the stale
node's first write is refused (:class:`~server.store.records.TableTakenOver`), before it changes
anything. Redis is only ever asked who may try; the database says who succeeded.

One process without Redis holds every lease itself (:class:`LocalLeases`): the same code
path, with nobody to share with.

Commands. A websocket on any node may play any table. A command for a table this node does
not run is published on the table's command channel, which only its running node listens
to; the answer comes back on this node's reply channel. Events never take that road: they
fan out from the running node over the bus to every node's websockets. Pub/sub keeps nothing
for a listener to come, so a command that reached no node (the table's node died, and no
other has taken the table yet) is refused at once, ``table_unavailable`` with a
``retry_after`` of one lease round, by when the next node may run it (sooner when its node
went quiet and its lease lapses before then); it is never left to wait for an answer that
cannot come. A node that heard the command but does not answer
(frozen: its sockets open, nothing running) is found out the same way its players' tables
are: once the cardroom hears another node run the table, or nobody for a lease, the
sender is refused with the same hint, without waiting out its timeout.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Protocol

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError, RedisError

from engine.errors import Refusal
from engine.protocol import ErrorCode
from server.bus.memory import Bus, Subscription, table_reply_channel, table_tag
from server.bus.redis_url import split_url
from server.table import commands as cmd
from server.table.ports import CommandRefused

log = logging.getLogger(__name__)

COMMAND_QUEUE_SIZE = 4096
# How long a node keeps hearing a table's reply channel after its last command for the table.
REPLY_LINGER_SECONDS = 60.0


def command_channel(table_id: int) -> str:
    """Commands for the table, heard by the node running it (in the slot of the table's events
    and lease on a Redis Cluster: :func:`~server.bus.memory.table_tag`)."""
    return f"{table_tag(table_id)}:commands"


def reply_channel(node_id: str) -> str:
    """Answers to the orders this node sent to other nodes. (A table's answers to its
    commands come on ``table_reply_channel(table, "node:<id>")``, in line with its events.)"""
    return f"node:{node_id}:replies"


def order_channel(node_id: str) -> str:
    """What other nodes ask of this node itself: take a table handed to it, drain."""
    return f"node:{node_id}:orders"


LOBBY_CHANNEL = "cardroom:lobby"  # each node's table summaries, every lease renewal


class Leases(Protocol):
    """Who runs which table; see the module's docstring."""

    node_id: str
    lapses: bool  # whether a lease not renewed in time may pass to another node

    async def acquire(self, table_id: int) -> bool:
        """Take the table's lease if nobody holds it."""

    async def renew(self, table_id: int) -> bool:
        """Keep the lease; False when another node holds it now. Raises when Redis does
        not answer (the caller keeps the table until its lease would have run out)."""

    async def renew_many(self, table_ids: Collection[int]) -> dict[int, bool]:
        """:meth:`renew` for every table at once, in one round trip: a node's lease round
        must not take a round trip per table (with a hundred tables on a busy loop, the
        last ones' leases would lapse while the first are renewed). Raises as ``renew``
        does, for all of them."""

    async def release(self, table_id: int) -> None: ...

    async def reserve(self, table_id: int, node_id: str, *, ours: bool) -> bool:
        """Set the table's lease aside for ``node_id``, which takes it with ``acquire`` (nobody
        else can, until the reservation lapses a lease later): from nobody's (a new table
        placed on another node), or from this node's own (``ours``: a table handed over
        between hands). False when the lease is not as expected."""

    async def unreserve(self, table_id: int, node_id: str) -> bool:
        """Give back a reservation for ``node_id`` it did not take (True if it was there)."""

    async def close(self) -> None: ...


class LocalLeases:
    """One node and nobody else: every lease is this node's."""

    lapses = False

    def __init__(self, node_id: str) -> None:
        self.node_id = node_id

    async def acquire(self, table_id: int) -> bool:
        return True

    async def renew(self, table_id: int) -> bool:
        return True

    async def renew_many(self, table_ids: Collection[int]) -> dict[int, bool]:
        return dict.fromkeys(table_ids, True)

    async def release(self, table_id: int) -> None:
        return None

    async def reserve(self, table_id: int, node_id: str, *, ours: bool) -> bool:
        return False  # nobody to set it aside for

    async def unreserve(self, table_id: int, node_id: str) -> bool:
        return False

    async def close(self) -> None:
        return None


# Renew a lease that is ours; take it again if it vanished (a Redis restart): fencing keeps
# that safe, since a node that took the table meanwhile made our token stale.
_RENEW = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if not held then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return 1
end
return 0
"""
# Set the key to ARGV[2] if it holds any of ARGV[3..] ('' standing for no key): a lease taken
# when free or reserved for this node, a reservation made from nobody's lease or from ours,
# a reservation given back.
_SWAP = """
local held = redis.call('GET', KEYS[1]) or ''
for i = 3, #ARGV do
    if held == ARGV[i] then
        if ARGV[2] == '' then
            redis.call('DEL', KEYS[1])
        else
            redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[1])
        end
        return 1
    end
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisLeases:
    """Leases as Redis keys ``<prefix>lease:table:{<id>}``, valued with this node's id and
    incarnation (a restarted node with the same id does not inherit its old leases).

    On a Redis Cluster (``?cluster=yes``) each key lives on the master of its table's slot,
    with the table's channels; a round's pipeline goes to every master holding one of the
    node's leases, side by side (redis-py's cluster pipeline), and ``SCRIPT LOAD`` to all."""

    lapses = True

    def __init__(self, url: str, node_id: str, lease_seconds: float) -> None:
        target = split_url(url)
        timeout = max(0.5, lease_seconds / 3)
        # The leases' own client (not the bus's connections: a lease round never waits
        # behind a burst of events); public for whoever inspects the leases in Redis.
        client = RedisCluster if target.cluster else Redis
        self.redis: Redis | RedisCluster = client.from_url(
            target.url, socket_timeout=timeout, socket_connect_timeout=timeout
        )
        self._prefix = target.prefix
        self.node_id = node_id
        self._value = f"{node_id} {secrets.token_hex(4)}"
        self._ttl_ms = int(lease_seconds * 1000)
        self._renew = self.redis.register_script(_RENEW)
        self._release = self.redis.register_script(_RELEASE)
        self._swap = self.redis.register_script(_SWAP)

    def key(self, table_id: int) -> str:
        """The Redis key of the table's lease, valued with the node holding it."""
        return f"{self._prefix}lease:{table_tag(table_id)}"

    async def acquire(self, table_id: int) -> bool:
        """Free, or set aside for this node (:meth:`reserve`)."""
        return await self._swap_lease(table_id, self._value, "", reserved_for(self.node_id))

    async def reserve(self, table_id: int, node_id: str, *, ours: bool) -> bool:
        held = self._value if ours else ""
        return await self._swap_lease(table_id, reserved_for(node_id), held)

    async def unreserve(self, table_id: int, node_id: str) -> bool:
        return await self._swap_lease(table_id, "", reserved_for(node_id))

    async def _swap_lease(self, table_id: int, value: str, *expected: str) -> bool:
        done = await self._swap(keys=[self.key(table_id)], args=[self._ttl_ms, value, *expected])
        return bool(done)

    async def renew(self, table_id: int) -> bool:
        return (await self.renew_many([table_id]))[table_id]

    async def renew_many(self, table_ids: Collection[int]) -> dict[int, bool]:
        """Every table's renewal script in one pipeline (no transaction: each key stands
        alone), by its hash. A Redis that lost its scripts (restarted, flushed) answers
        NOSCRIPT: the script is loaded and those tables asked again, a second trip only
        then (a pipeline given the script itself would ask SCRIPT EXISTS every round)."""
        ids = list(table_ids)
        answers = dict(zip(ids, await self._renew_pipeline(ids), strict=True))
        unknown = [t for t, answer in answers.items() if isinstance(answer, NoScriptError)]
        if unknown:
            self._renew.sha = await self.redis.script_load(_RENEW)
            answers.update(zip(unknown, await self._renew_pipeline(unknown), strict=True))
        for answer in answers.values():
            if isinstance(answer, Exception):
                raise answer
        return {table_id: bool(answer) for table_id, answer in answers.items()}

    async def _renew_pipeline(self, table_ids: list[int]) -> list[Any]:
        if not table_ids:
            return []
        pipe = self.redis.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.evalsha(self._renew.sha, 1, self.key(table_id), self._value, self._ttl_ms)
        return await pipe.execute(raise_on_error=False)

    async def release(self, table_id: int) -> None:
        await self._release(keys=[self.key(table_id)], args=[self._value])

    async def holder(self, table_id: int) -> str | None:
        """The node holding the table's lease, if any."""
        value = await self.redis.get(self.key(table_id))
        if value is None:
            return None
        text = value.decode() if isinstance(value, bytes) else str(value)
        return text.split(" ")[0]

    async def close(self) -> None:
        await self.redis.aclose()


def reserved_for(node_id: str) -> str:
    """The value of a lease set aside for ``node_id`` (its holder, read as a lease's, is that
    node: commands find the table's node-to-be at once)."""
    return f"{node_id} reserved"


class TableHandle(Protocol):
    """What a websocket needs of a table, wherever it runs."""

    async def submit(self, command: cmd.TableCommand) -> dict[str, Any]: ...


class ServedTable(TableHandle, Protocol):
    """A table this node runs (its actor): the router hands it other nodes' commands."""

    table_id: int


class RemoteTable:
    """A table run by another node: its commands travel over the bus."""

    def __init__(self, router: CommandRouter, table_id: int) -> None:
        self.router = router
        self.table_id = table_id

    async def submit(self, command: cmd.TableCommand) -> dict[str, Any]:
        return await self.router.send(self.table_id, command)


class TableUnavailable(Refusal):
    """No node runs the table this moment (it is changing hands): nothing was done, and in
    ``retry_after`` seconds another node may run it."""

    code = ErrorCode.TABLE_UNAVAILABLE

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


#: What a node does with a request another node sent it (an order, a table's command); its
#: answer goes back.
OrderHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class NodeUnreachable(Refusal):
    """The node asked did not hear the order, or did not answer it in time."""

    code = ErrorCode.NODE_UNAVAILABLE


class CommandRouter:
    """Sends this node's commands for tables run elsewhere; serves those for its own; carries
    orders between nodes (:meth:`order`, :meth:`serve_orders`).
    ``retry_after``: how soon a table no node runs may be run again (a lease round).
    ``runner``: which node the cardroom last heard run a table (None: nobody lately).
    ``back_in``: how soon a given table should run again, if sooner (its node went quiet
    and its lease lapses in a moment)."""

    def __init__(
        self,
        bus: Bus,
        node_id: str,
        *,
        timeout: float,
        retry_after: float,
        runner: Callable[[int], str | None] | None = None,
        back_in: Callable[[int], float] | None = None,
    ) -> None:
        self.bus = bus
        self.node_id = node_id
        self.timeout = timeout
        self.retry_after = retry_after
        self.runner = runner
        self.back_in = back_in
        self._replies_channel = reply_channel(node_id)
        self.reply_linger = REPLY_LINGER_SECONDS
        self._replies: Subscription | None = None
        # The tables whose reply channel this node hears, with their commands in flight; the
        # timers that let go of those with none left.
        self._table_replies: dict[int, int] = {}
        self._letting_go: dict[int, asyncio.TimerHandle] = {}
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._serving: dict[int, asyncio.Task[None]] = {}
        self._handling: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Task[None] | None = None
        self._serving_orders: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._replies = self._hear_replies()
        self._listener = asyncio.create_task(self._listen(), name="command-replies")

    def _hear_replies(self) -> Subscription:
        tables = [self._table_reply_channel(table_id) for table_id in self._table_replies]
        return self.bus.subscribe(self._replies_channel, *tables, size=COMMAND_QUEUE_SIZE)

    def _table_reply_channel(self, table_id: int) -> str:
        return table_reply_channel(table_id, f"node:{self.node_id}")

    def _reply_to(self, table_id: int) -> str:
        """The channel the table's answers to this node come on: in the table's slot, so an
        answer comes after the events its command caused on a Redis Cluster too. Heard from
        the first command for the table until ``reply_linger`` seconds after the last (the
        command leaves once Redis has confirmed the subscription: see the bus)."""
        channel = self._table_reply_channel(table_id)
        timer = self._letting_go.pop(table_id, None)
        if timer is not None:
            timer.cancel()
        if table_id not in self._table_replies:
            self._table_replies[table_id] = 0
            if self._replies is not None:
                self._replies.add(channel)
        self._table_replies[table_id] += 1
        return channel

    def _answered(self, table_id: int) -> None:
        left = self._table_replies.get(table_id, 1) - 1
        self._table_replies[table_id] = left
        if left == 0:
            self._letting_go[table_id] = asyncio.get_running_loop().call_later(
                self.reply_linger, self._let_go, table_id
            )

    def _let_go(self, table_id: int) -> None:
        self._letting_go.pop(table_id, None)
        if self._table_replies.get(table_id) == 0:
            del self._table_replies[table_id]
            if self._replies is not None:
                self._replies.remove(self._table_reply_channel(table_id))

    @property
    def reply_tables(self) -> set[int]:
        """The tables whose answers this node hears now."""
        return set(self._table_replies)

    async def send(self, table_id: int, command: cmd.TableCommand) -> dict[str, Any]:
        """The command's answer from the node running the table; ``table_unavailable`` at
        once when no node heard it, or when none answers in time (the table is changing
        hands: the client tries again)."""
        request_id, answer = self._expect()
        message = {
            "type": "command",
            "id": request_id,
            "table": table_id,
            "command": cmd.encode(command),
            "reply_to": self._reply_to(table_id),
        }
        try:
            async with asyncio.timeout(self.timeout):
                heard_by = self.runner(table_id) if self.runner is not None else None
                if not await self.bus.publish_heard(command_channel(table_id), message):
                    raise self._unavailable(table_id)
                reply = await self._answer_while_run(table_id, heard_by, answer)
        except TimeoutError:
            raise CommandRefused(
                "the table did not answer (it may be changing hands); try again",
                code=ErrorCode.TABLE_UNAVAILABLE,
            ) from None
        finally:
            self._waiting.pop(request_id, None)
            self._answered(table_id)
        return _outcome(reply, CommandRefused)

    async def order(self, node_id: str, order: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        """Node ``node_id``'s answer to ``order``; :class:`NodeUnreachable` when no node
        heard it or none answered within ``timeout`` seconds, a :class:`Refusal` with the
        node's code when it refused."""
        request_id, answer = self._expect()
        message = {"type": "order", "id": request_id, **order, "reply_to": self._replies_channel}
        try:
            async with asyncio.timeout(timeout):
                if not await self.bus.publish_heard(order_channel(node_id), message):
                    raise NodeUnreachable(f"node {node_id} is not there")
                reply = await answer
        except TimeoutError:
            raise NodeUnreachable(f"node {node_id} did not answer in time") from None
        finally:
            self._waiting.pop(request_id, None)
        return _outcome(reply, Refusal)

    def serve_orders(self, handler: OrderHandler) -> None:
        """Carry out the orders other nodes send this node, each as it comes."""
        self._serving_orders = asyncio.create_task(
            self._answering(order_channel(self.node_id), handler, "order_reply"),
            name="node-orders",
        )

    def _expect(self) -> tuple[str, asyncio.Future[dict[str, Any]]]:
        """A request's id, and the future its reply will settle (``_listen``)."""
        request_id = secrets.token_hex(8)
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = answer
        return request_id, answer

    async def _answering(self, channel: str, handle: OrderHandler, reply_type: str) -> None:
        """Answer every request heard on ``channel`` with ``handle``'s result or refusal,
        for as long as it runs. One task each, made in arrival order: each hands its
        request on at once (a table's actor sees its commands in the order they came)."""
        while True:
            requests = self.bus.subscribe(channel, size=COMMAND_QUEUE_SIZE)
            try:
                async for message in requests:
                    task = asyncio.create_task(self._reply(handle, message, reply_type))
                    self._handling.add(task)
                    task.add_done_callback(self._handling.discard)
            finally:
                requests.close()

    async def _reply(self, handle: OrderHandler, message: dict[str, Any], reply_type: str) -> None:
        reply_to = message.get("reply_to")
        if not isinstance(reply_to, str):
            return
        reply: dict[str, Any] = {"type": reply_type, "id": message.get("id")}
        try:
            reply["result"] = await handle(message)
        except Refusal as refusal:
            reply["error"] = {"code": refusal.code, "message": refusal.message}
        self.bus.publish_now(reply_to, reply)

    def _unavailable(self, table_id: int) -> TableUnavailable:
        wait = self.retry_after
        if self.back_in is not None:
            wait = min(wait, self.back_in(table_id))
        return TableUnavailable(
            f"no node runs the table this moment (it is changing hands); try again in {wait:.1f} s",
            retry_after=wait,
        )

    async def _answer_while_run(
        self, table_id: int, heard_by: str | None, answer: asyncio.Future[dict[str, Any]]
    ) -> dict[str, Any]:
        """The answer, unless the node that heard the command stops running the table
        first (another runs it now, or none has said so for a lease): then it never will."""
        if self.runner is None:
            return await answer
        while True:
            done, _ = await asyncio.wait({answer}, timeout=self.retry_after)
            if done:
                return answer.result()
            running = self.runner(table_id)
            if heard_by is None:
                heard_by = running
            elif running != heard_by:
                raise self._unavailable(table_id)

    async def _listen(self) -> None:
        while True:
            assert self._replies is not None
            async for reply in self._replies:
                waiting = self._waiting.get(str(reply.get("id")))
                if waiting is not None and not waiting.done():
                    waiting.set_result(reply)
            # Dropped for falling behind: listen again (the senders time out and retry).
            self._replies = self._hear_replies()

    def serve(self, actor: ServedTable) -> None:
        """Hand the commands other nodes send to the table over to its actor, in order."""
        self.unserve(actor.table_id)

        async def submit(message: dict[str, Any]) -> dict[str, Any]:
            return await actor.submit(cmd.decode(message.get("command")))

        self._serving[actor.table_id] = asyncio.create_task(
            self._answering(command_channel(actor.table_id), submit, "command_reply"),
            name=f"table-{actor.table_id}-commands",
        )

    def unserve(self, table_id: int) -> None:
        task = self._serving.pop(table_id, None)
        if task is not None:
            task.cancel()

    async def close(self) -> None:
        for timer in self._letting_go.values():
            timer.cancel()
        self._letting_go.clear()
        tasks = [*self._serving.values(), *self._handling]
        tasks += [t for t in (self._listener, self._serving_orders) if t is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._serving.clear()


def leases_for(redis_url: str | None, node_id: str, lease_seconds: float) -> Leases:
    """Redis leases when the nodes share a Redis; else this node holds them all."""
    if redis_url is None or redis_url.startswith("memory://"):
        return LocalLeases(node_id)
    return RedisLeases(redis_url, node_id, lease_seconds)


# What a lease call raises when Redis does not answer (not a bug of ours).
LEASE_FAILURES = (RedisError, OSError, TimeoutError)


def renewal_failed(error: BaseException) -> bool:
    """Whether a lease call failed because Redis did not answer (not a bug of ours)."""
    return isinstance(error, LEASE_FAILURES)


def _outcome(reply: dict[str, Any], refused: type[Refusal]) -> dict[str, Any]:
    """A reply's result, or its refusal raised as ``refused`` with the other node's code."""
    error = reply.get("error")
    if isinstance(error, dict):
        raise refused(str(error.get("message")), code=_error_code(error.get("code")))
    result = reply.get("result")
    return result if isinstance(result, dict) else {}


def _error_code(value: Any) -> ErrorCode:
    """The code in another node's answer. One this node does not know (a newer node's) is
    logged and passed on as ``internal_error``."""
    try:
        return ErrorCode(value)
    except ValueError:
        log.warning("cluster: an answer with an unknown error code %r", value)
        return ErrorCode.INTERNAL_ERROR
