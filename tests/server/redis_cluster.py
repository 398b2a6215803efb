"""A Redis Cluster of the tests' own: three masters (``redis-server`` processes in cluster mode
on free ports, nothing saved) made one cluster by ``redis-cli --cluster create``, so the bus and
the leases run on a Redis Cluster in the tests as on one Redis. The machine's shared Redis is
never touched.

Used by ``backends`` (one cluster for the whole run, ``redis_cluster``) and by the node
processes of ``tests/cluster`` (one a test, to restart at will).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import IO, Any

MASTERS = 3


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class LocalRedisCluster:
    """``masters`` redis-servers on 127.0.0.1 made one Redis Cluster (no replicas): started,
    stopped, killed and started again (empty, the cluster's shape kept in each node's
    configuration file) at will. Every server writes its log to ``log_path``."""

    def __init__(
        self, directory: Path, masters: int = MASTERS, log_path: Path | None = None
    ) -> None:
        self.directory = directory
        self.ports = [free_port() for _ in range(masters)]
        self.bus_ports = [free_port() for _ in range(masters)]  # the cluster's own links
        self.log_path = log_path or directory / "redis-cluster.log"
        self.processes: list[subprocess.Popen[bytes] | None] = [None] * masters
        self._log: IO[Any] | None = None
        self.created = False

    @property
    def url(self) -> str:
        """The URL a node is given: one master's address, and ``cluster=yes``."""
        return f"redis://127.0.0.1:{self.ports[0]}/0?cluster=yes"

    @property
    def addresses(self) -> list[str]:
        return [f"127.0.0.1:{port}" for port in self.ports]

    def start(self, timeout: float = 30) -> None:
        """Every master up (the cluster made, the first time), and the cluster's state ``ok``
        on every one of them."""
        binary = shutil.which("redis-server")
        assert binary is not None, "redis-server is not installed (apt-get install redis-server)"
        self.directory.mkdir(parents=True, exist_ok=True)
        if self._log is None:
            self._log = self.log_path.open("a")
        for index in range(len(self.ports)):
            if self.processes[index] is None:
                self.processes[index] = subprocess.Popen(
                    self._arguments(binary, index), stdout=self._log, stderr=subprocess.STDOUT
                )
        deadline = time.monotonic() + timeout
        for index in range(len(self.ports)):
            while not self.ping(index):
                process = self.processes[index]
                assert process is not None and process.poll() is None, self.tail()
                assert time.monotonic() < deadline, f"redis-server did not start\n{self.tail()}"
                time.sleep(0.02)
        if not self.created:
            self.cli(
                "--cluster", "create", *self.addresses, "--cluster-replicas", "0", "--cluster-yes"
            )
            self.created = True
        self.wait_ok(deadline - time.monotonic())

    def _arguments(self, binary: str, index: int) -> list[str]:
        port = self.ports[index]
        return [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--cluster-enabled",
            "yes",
            "--cluster-port",
            str(self.bus_ports[index]),
            "--cluster-config-file",
            str(self.directory / f"nodes-{port}.conf"),
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
        ]

    def wait_ok(self, timeout: float = 30) -> None:
        """Until every master says the cluster is ``ok`` and knows every other."""
        deadline = time.monotonic() + max(timeout, 0)
        while True:
            states = [self.info(index) for index in range(len(self.ports))]
            if all(
                state.get("cluster_state") == "ok"
                and state.get("cluster_known_nodes") == str(len(self.ports))
                and state.get("cluster_slots_ok") == "16384"
                for state in states
            ):
                return
            assert time.monotonic() < deadline, f"the cluster is not ok: {states}\n{self.tail()}"
            time.sleep(0.05)

    def info(self, index: int) -> dict[str, str]:
        """``CLUSTER INFO`` of one master (empty if it does not answer)."""
        try:
            text = self.command(index, "CLUSTER", "INFO")
        except subprocess.CalledProcessError:
            return {}
        return dict(line.split(":", 1) for line in text.split() if ":" in line)

    def ping(self, index: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.ports[index]), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def command(self, index: int, *args: Any) -> str:
        """A command to one master (redis-cli), its answer as text."""
        return self.cli("-p", self.ports[index], *args)

    def cli(self, *args: Any) -> str:
        return subprocess.run(
            ["redis-cli", "-h", "127.0.0.1", *map(str, args)],
            check=True,
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout

    def master_of(self, key: str | bytes) -> int:
        """The index of the master owning ``key``'s slot (a channel's as well)."""
        name = key.decode() if isinstance(key, bytes) else key
        slot = int(self.command(0, "CLUSTER", "KEYSLOT", name))
        for line in self.command(0, "CLUSTER", "NODES").splitlines():
            fields = line.split()
            if "master" not in fields[2]:
                continue
            port = int(fields[1].split("@")[0].rsplit(":", 1)[1])
            for part in fields[8:]:
                first, _, last = part.partition("-")
                if not first.startswith("[") and int(first) <= slot <= int(last or first):
                    return self.ports.index(port)
        raise AssertionError(f"no master owns slot {slot}")

    def stop_master(self, index: int, how: signal.Signals = signal.SIGTERM) -> None:
        process, self.processes[index] = self.processes[index], None
        if process is not None:
            process.send_signal(how)
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def stop(self) -> None:
        for index in range(len(self.ports)):
            self.stop_master(index)
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill(self) -> None:
        """SIGKILL to every master: every key and every subscription gone."""
        for index in range(len(self.ports)):
            self.stop_master(index, signal.SIGKILL)

    def restart(self) -> None:
        """Killed and started again, empty, the same cluster on the same ports."""
        self.kill()
        self.start()

    def tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        return ""
