"""The Dockerfile, .dockerignore and docker-compose.yml, checked without Docker.

No Docker engine runs here, so the image may use only what CI exercises: these tests read the
files and check that the install is the one `.ci/run` does, that the start command and every
node's command are ones `stud-server` accepts, that the health check passes against a real
`stud-server` started as the image starts it (and fails once it is gone), and that every file
the image copies is in the build context.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import yaml
from server_helpers import end_process

from server import cli
from server.db import migrate

REPO = Path(__file__).resolve().parents[3]
DOCKERFILE = REPO / "Dockerfile"
DOCKERIGNORE = REPO / ".dockerignore"
COMPOSE = REPO / "docker-compose.yml"
# The environment the server reads (server/settings.py): what the image and compose may set.
SERVER_ENV = re.compile(r"^(STUD_\w+|DATABASE_URL|REDIS_URL)$")


# ---------------------------------------------------------------------- reading a Dockerfile


@dataclass
class Instruction:
    keyword: str
    rest: str
    stage: int  # which FROM it follows (0: the first)

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form CMD/ENTRYPOINT/RUN, or None (shell form)."""
        text = self.rest.strip()
        if not text.startswith("["):
            return None
        value = json.loads(text)
        assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
        return value


@dataclass
class Dockerfile:
    instructions: list[Instruction] = field(default_factory=list)

    @property
    def final_stage(self) -> list[Instruction]:
        last = max(i.stage for i in self.instructions)
        return [i for i in self.instructions if i.stage == last]

    def final(self, keyword: str) -> list[Instruction]:
        return [i for i in self.final_stage if i.keyword == keyword]

    def env(self) -> dict[str, str]:
        """ENV of the final stage (``KEY=value`` pairs, or the old ``KEY value`` form)."""
        env: dict[str, str] = {}
        for instruction in self.final("ENV"):
            words = shlex.split(instruction.rest)
            if words and "=" not in words[0]:
                env[words[0]] = " ".join(words[1:])
                continue
            for word in words:
                key, sep, value = word.partition("=")
                assert sep, f"ENV {instruction.rest!r}"
                env[key] = value
        return env

    def workdir(self) -> PurePosixPath:
        workdir = PurePosixPath("/")
        for instruction in self.final("WORKDIR"):
            workdir = workdir / instruction.rest.strip()
        return workdir


def parse_dockerfile(text: str) -> Dockerfile:
    parsed = Dockerfile()
    stage = -1
    logical = ""
    for line in text.splitlines():
        stripped = line.strip()
        if not logical and (not stripped or stripped.startswith("#")):
            continue
        if logical and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if stripped.endswith("\\"):
            logical += stripped[:-1] + " "
            continue
        logical += stripped
        keyword, _, rest = logical.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            stage += 1
        assert stage >= 0, f"{keyword} before FROM"
        parsed.instructions.append(Instruction(keyword, rest.strip(), stage))
        logical = ""
    assert not logical, "the Dockerfile ends inside a continued line"
    return parsed


def run_commands(dockerfile: Dockerfile) -> list[list[str]]:
    """Every command of every RUN, split at ``&&`` / ``;`` into words."""
    commands: list[list[str]] = []
    for instruction in dockerfile.instructions:
        if instruction.keyword != "RUN":
            continue
        exec_form = instruction.exec_form()
        if exec_form is not None:
            commands.append(exec_form)
            continue
        lexer = shlex.shlex(instruction.rest, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        command: list[str] = []
        for word in lexer:
            if word in ("&&", ";", "||"):
                commands.append(command)
                command = []
            else:
                assert word not in ("|", "&", ">", "<", "(", ")"), instruction.rest
                command.append(word)
        commands.append(command)
    return [command for command in commands if command]


@dataclass(frozen=True)
class Copy:
    source: str  # relative to the build context
    destination: PurePosixPath  # absolute, in the image


def copies(dockerfile: Dockerfile) -> list[Copy]:
    """The build-context sources of every COPY/ADD, and where each lands."""
    found: list[Copy] = []
    workdir = PurePosixPath("/")
    for instruction in dockerfile.instructions:
        if instruction.keyword == "FROM":
            workdir = PurePosixPath("/")
        elif instruction.keyword == "WORKDIR":
            workdir = workdir / instruction.rest.strip()
        elif instruction.keyword in ("COPY", "ADD"):
            words = instruction.exec_form() or shlex.split(instruction.rest)
            flags = [w for w in words if w.startswith("--")]
            if any(flag.startswith("--from") for flag in flags):
                continue  # from another stage, not from the context
            *sources, destination = [w for w in words if not w.startswith("--")]
            assert sources, instruction.rest
            target = workdir / destination
            for source in sources:
                assert "*" not in source and "?" not in source, "no globs: name what is copied"
                if len(sources) > 1 or destination.endswith("/"):
                    landing = target if (REPO / source).is_dir() else target / Path(source).name
                else:
                    landing = target
                found.append(Copy(source.rstrip("/") or ".", landing))
    return found


# ---------------------------------------------------------------------- .dockerignore


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """A .dockerignore pattern as Docker reads it (Go's filepath.Match, plus ``**``)."""
    out = ""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out += "(?:.*/)?"
            i += 3
            continue
        if pattern.startswith("**", i):
            out += ".*"
            i += 2
            continue
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif char == "[":
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            out += "[" + ("^" + body[1:] if body.startswith("^") else body) + "]"
            i = end
        elif char == "\\" and i + 1 < len(pattern):
            i += 1
            out += re.escape(pattern[i])
        else:
            out += re.escape(char)
        i += 1
    return re.compile(out)


class DockerIgnore:
    def __init__(self, text: str) -> None:
        self.rules: list[tuple[bool, re.Pattern[str]]] = []
        for line in text.splitlines():
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            keep = line.startswith("!")
            pattern = os.path.normpath(line[1:] if keep else line).lstrip("/")
            self.rules.append((keep, _pattern_regex(pattern)))

    def excludes(self, path: str) -> bool:
        """Whether ``path`` (relative to the context) stays out: the last pattern matching it
        or one of its parent directories decides."""
        parts = PurePosixPath(path).parts
        prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        excluded = False
        for keep, regex in self.rules:
            if any(regex.fullmatch(prefix) for prefix in prefixes):
                excluded = not keep
        return excluded


def test_the_dockerignore_matcher_reads_patterns_as_docker_does() -> None:
    ignore = DockerIgnore("*.db\n**/__pycache__\ndocs\n!docs/keep.md\n/build\n")
    assert ignore.excludes("stud.db") and not ignore.excludes("server/stud.db")
    assert ignore.excludes("server/db/__pycache__/models.cpython-311.pyc")
    assert ignore.excludes("docs/rules.md") and not ignore.excludes("docs/keep.md")
    assert ignore.excludes("build/lib/x.py") and not ignore.excludes("server/build.py")


# ---------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def dockerfile() -> Dockerfile:
    return parse_dockerfile(DOCKERFILE.read_text())


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    loaded = yaml.safe_load(COMPOSE.read_text())  # merge keys (<<: *node) resolved
    assert isinstance(loaded, dict)
    return loaded


def _interpolate(value: str) -> str:
    """Compose's ``${VAR}`` / ``${VAR:-default}``, with nothing set: the defaults."""

    def one(match: re.Match[str]) -> str:
        default = match.group(2)
        assert default is not None, f"{match.group(0)} has no default"
        return default

    return re.sub(r"\$\{(\w+)(?::?-([^}]*))?\}", one, value)


def _environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) for item in env)
    return {key: _interpolate(str(value)) for key, value in env.items()}


def _command(value: str | list[str] | None) -> list[str]:
    if value is None:
        return []
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in value]


def _nodes(compose: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        name: service
        for name, service in compose["services"].items()
        if "build" in service  # the services built from this repository's Dockerfile
    }


def _entrypoint(dockerfile: Dockerfile) -> list[str]:
    (entrypoint,) = dockerfile.final("ENTRYPOINT")
    words = entrypoint.exec_form()
    assert words is not None, "ENTRYPOINT in exec form (signals reach the server)"
    return words


def _default_args(dockerfile: Dockerfile) -> list[str]:
    (cmd,) = dockerfile.final("CMD")
    words = cmd.exec_form()
    assert words is not None, "CMD in exec form"
    return words


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for key in list(os.environ):
        if SERVER_ENV.match(key):
            monkeypatch.delenv(key)
    return monkeypatch


# ---------------------------------------------------------------------- the Dockerfile


def test_the_image_runs_as_a_user_that_is_not_root(dockerfile: Dockerfile) -> None:
    users = dockerfile.final("USER")
    assert users, "no USER: the server would run as root"
    user = users[-1].rest.split(":")[0].strip()
    assert user not in ("root", "0", ""), user
    instructions = dockerfile.final_stage
    last_user = max(n for n, i in enumerate(instructions) if i.keyword == "USER")
    assert not any(i.keyword == "RUN" for i in instructions[last_user:]), "USER before the end"
    if user.isdigit():
        # a numeric user (what runAsNonRoot checks) must be one the image makes
        made = [c for c in run_commands(dockerfile) if c[0] == "useradd"]
        assert any(w == user for c in made for w in c), f"uid {user} is made by no useradd"


def test_the_health_check_gets_healthz_with_the_standard_library(dockerfile: Dockerfile) -> None:
    (check,) = dockerfile.final("HEALTHCHECK")
    options, _, command = check.rest.partition("CMD ")
    assert command, f"HEALTHCHECK {check.rest!r} has no CMD"
    assert "--interval" in options and "--start-period" in options
    words = Instruction("CMD", command, 0).exec_form()
    assert words is not None and words[:2] == ["python", "-c"], words
    assert "/healthz" in words[2] and "urllib.request" in words[2]
    assert not any(tool in command for tool in ("curl", "wget")), "not in slim images"


def test_the_install_is_the_one_ci_runs(dockerfile: Dockerfile) -> None:
    ci = (REPO / ".ci" / "run").read_text()
    ci_targets: set[str] = set()
    for line in ci.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if "pip" in words and "install" in words:
            ci_targets.update(w for w in words[words.index("install") + 1 :] if w[0] != "-")
    assert ci_targets == {"pip", ".[dev]"}, ci_targets  # what .ci/run installs today
    # The image may leave the dev extra out, nothing else.
    allowed = ci_targets | {target.split("[")[0] for target in ci_targets}
    quiet_flags = {"--quiet", "-q", "--upgrade", "-U", "--no-cache-dir"}

    installs = [c for c in run_commands(dockerfile) if "install" in c]
    for command in installs:
        assert command[:4] == ["python", "-m", "pip", "install"], command
        words = command[4:]
        editable = "-e" in words
        targets = [w for w in words if w not in quiet_flags and w != "-e"]
        assert targets and set(targets) <= allowed, f"{command}: not what CI installs"
        if targets != ["pip"]:
            assert editable, f"{command}: CI installs the repository editable"
    assert any(c[-1] in (".", ".[dev]") for c in installs), "the repository is not installed"
    commands = run_commands(dockerfile)
    assert any(c[1:3] == ["-m", "venv"] for c in commands), "CI installs into a venv"
    assert not any(c[0] in ("apt-get", "apt", "apk", "curl", "wget") for c in commands)


def test_the_image_starts_the_server_as_the_readme_does(dockerfile: Dockerfile) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    entrypoint = _entrypoint(dockerfile)
    assert entrypoint == ["stud-server"]
    assert project["scripts"]["stud-server"] == "server.cli:main"
    assert "\nstud-server --demo\n" in (REPO / "README.md").read_text()


def test_the_default_command_parses_and_listens_on_every_address(
    dockerfile: Dockerfile, clean_env: pytest.MonkeyPatch
) -> None:
    args = cli.build_parser().parse_args(_default_args(dockerfile))
    assert args.command in (None, "serve")
    for key, value in dockerfile.env().items():
        if SERVER_ENV.match(key):
            clean_env.setenv(key, value)
    settings = cli.settings_from(args)
    assert settings.host == "0.0.0.0"  # else nothing outside the container reaches it
    exposed = {int(p.split("/")[0]) for i in dockerfile.final("EXPOSE") for p in i.rest.split()}
    assert exposed == {settings.port}


def test_the_image_ships_what_the_migrations_need(dockerfile: Dockerfile) -> None:
    # server/db/migrate.py finds migrations/ next to the source tree, not in a package: the
    # image must hold them there and run the source tree in place (an editable install).
    assert migrate.MIGRATIONS_DIR == REPO / "migrations"
    landed = {copy.source: copy.destination for copy in copies(dockerfile)}
    workdir = dockerfile.workdir()
    assert landed.get("server") == workdir / "server"
    assert landed.get("migrations") == workdir / "migrations"
    assert landed.get("alembic.ini") == workdir / "alembic.ini"  # `alembic upgrade head` by hand
    # Every package root pyproject names, where it names it.
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    for root in pyproject["tool"]["setuptools"]["packages"]["find"]["where"]:
        packages = [p.name for p in (REPO / root).iterdir() if (p / "__init__.py").exists()]
        assert packages, root
        for package in sorted(packages):
            source = str(PurePosixPath(root) / package)
            covering = [
                c
                for c in copies(dockerfile)
                if source == c.source or source.startswith(c.source + "/")
            ]
            assert covering, f"{source} is not copied"
            relative = PurePosixPath(source).relative_to(covering[0].source)
            assert covering[0].destination / relative == workdir / source
    readme = pyproject["project"]["readme"]
    assert landed.get(readme) == workdir / readme  # the build reads it


def _git_ignored(paths: list[str]) -> set[str]:
    """Those of ``paths`` (relative to the repository) that git ignores: what a build or a
    run leaves in a checkout (``engine/build/`` after ``pip install ./engine``), none of the
    project's files. None outside a git checkout."""
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists() or not paths:
        return set()
    found = subprocess.run(
        [git, "-C", str(REPO), "check-ignore", "--stdin"],
        input="\n".join(paths),
        capture_output=True,
        text=True,
        timeout=60,
    )
    return set(found.stdout.splitlines())


def test_every_copied_file_is_in_the_build_context(dockerfile: Dockerfile) -> None:
    ignore = DockerIgnore(DOCKERIGNORE.read_text())
    sources = [copy.source for copy in copies(dockerfile)]
    assert sources
    for source in sources:
        path = REPO / source
        assert path.exists(), f"COPY {source}: no such file"
        assert not ignore.excludes(source), f"COPY {source}: excluded by .dockerignore"
        if path.is_dir():
            files = [
                f
                for f in path.rglob("*")
                if f.is_file() and "__pycache__" not in f.parts and f.suffix != ".pyc"
            ]
            left = _git_ignored([f.relative_to(REPO).as_posix() for f in files])
            files = [f for f in files if f.relative_to(REPO).as_posix() not in left]
            assert files, source
            for file in files:
                relative = file.relative_to(REPO).as_posix()
                assert not ignore.excludes(relative), f"{relative}: excluded by .dockerignore"
    # ... and the context leaves out what has no place in the image.
    for junk in (
        ".git",
        ".venv/bin/python",
        "stud.db",
        "stud-data/stud.db.deck-key",
        "cardroom.db-wal",
        ".env",
        "server/__pycache__/app.cpython-311.pyc",
        "stud_server.egg-info/PKG-INFO",
        # What building the engine's or the client's distribution in place leaves.
        "engine/build/lib/engine/hand.py",
        "clients/python/stud_client.egg-info/PKG-INFO",
        "tests/server/conftest.py",
    ):
        assert ignore.excludes(junk), f"{junk} would be sent to the build"


# ---------------------------------------------------------------------- the health check, run


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _health_check(dockerfile: Dockerfile, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    (check,) = dockerfile.final("HEALTHCHECK")
    words = Instruction("CMD", check.rest.partition("CMD ")[2], 0).exec_form()
    assert words is not None and words[0] == "python"
    return subprocess.run(
        [sys.executable, *words[1:]], env=env, capture_output=True, text=True, timeout=30
    )


@pytest.fixture
def image_env(dockerfile: Dockerfile, tmp_path: Path) -> dict[str, str]:
    """This machine's environment with the image's server settings (SQLite in tmp_path)."""
    env = {key: value for key, value in os.environ.items() if not SERVER_ENV.match(key)}
    env.update({key: value for key, value in dockerfile.env().items() if SERVER_ENV.match(key)})
    # The embedded default in the image's data directory, owner-only (/data is the image's).
    assert "DATABASE_URL" not in env and env.get("STUD_DATA_DIR") == "/data"
    (mkdir,) = [line for line in dockerfile.final("RUN") if "/data" in line.rest]
    assert "mkdir -m 0700 /data" in mkdir.rest and "chown stud:stud /data" in mkdir.rest
    env["STUD_DATA_DIR"] = str(tmp_path / "data")
    env["STUD_PORT"] = str(_free_port())
    return env


@pytest.fixture
def image_server(
    dockerfile: Dockerfile, image_env: dict[str, str], tmp_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """``stud-server`` started as the image starts it: its ENTRYPOINT, CMD and ENV."""
    found = shutil.which(_entrypoint(dockerfile)[0], path=str(Path(sys.executable).parent))
    assert found, "stud-server is not installed: pip install -e '.[dev]'"
    log_path = tmp_path / "server.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [found, *_entrypoint(dockerfile)[1:], *_default_args(dockerfile)],
            env=image_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield process
    finally:
        end_process(process)
        print(log_path.read_text())


def test_the_health_check_passes_on_the_started_image_and_fails_when_it_stops(
    dockerfile: Dockerfile, image_env: dict[str, str], image_server: subprocess.Popen[bytes]
) -> None:
    # The image gives it 30 s (--start-period); a busy test machine may need longer.
    deadline = time.monotonic() + 120
    while (check := _health_check(dockerfile, image_env)).returncode != 0:
        assert image_server.poll() is None, "stud-server exited"
        assert time.monotonic() < deadline, check.stderr
        time.sleep(0.2)
    # The image's data directory holds the database and the key the server made, its alone.
    data = Path(image_env["STUD_DATA_DIR"])
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    for name in ("stud.db", "stud.db.deck-key"):
        assert stat.S_IMODE((data / name).stat().st_mode) == 0o600, name
    image_server.terminate()
    image_server.wait(timeout=15)
    assert _health_check(dockerfile, image_env).returncode == 1


def test_the_health_check_fails_on_an_error_status(
    dockerfile: Dockerfile, image_env: dict[str, str]
) -> None:
    paths: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            paths.append(self.path)
            self.send_response(200 if self.path == "/healthz" and len(paths) == 1 else 503)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler) as fake:
        threading.Thread(target=fake.serve_forever, daemon=True).start()
        env = {**image_env, "STUD_PORT": str(fake.server_address[1])}
        try:
            assert _health_check(dockerfile, env).returncode == 0
            assert _health_check(dockerfile, env).returncode == 1
        finally:
            fake.shutdown()
    assert paths == ["/healthz", "/healthz"]


# ---------------------------------------------------------------------- docker-compose.yml


def test_compose_runs_postgresql_and_redis_with_health_checks(compose: dict[str, Any]) -> None:
    services = compose["services"]
    postgres, redis = services["postgres"], services["redis"]
    assert postgres["image"].startswith("postgres:16") and redis["image"].startswith("redis:7")
    assert "pg_isready" in _command(postgres["healthcheck"]["test"])
    assert _command(redis["healthcheck"]["test"])[-2:] == ["redis-cli", "ping"]
    volume = postgres["volumes"][0].split(":")
    assert volume[1] == "/var/lib/postgresql/data" and volume[0] in compose["volumes"]


def test_compose_runs_two_nodes_of_one_cardroom(
    compose: dict[str, Any], dockerfile: Dockerfile, clean_env: pytest.MonkeyPatch
) -> None:
    nodes = _nodes(compose)
    assert len(nodes) == 2, sorted(nodes)
    postgres_env = _environment(compose["services"]["postgres"])
    seen: dict[str, Any] = {}
    published: set[str] = set()
    for name, service in nodes.items():
        assert service["build"] in (".", {"context": "."}), service["build"]
        assert not service.get("entrypoint"), "the image's ENTRYPOINT (stud-server)"
        for dependency in ("postgres", "redis"):
            assert service["depends_on"][dependency]["condition"] == "service_healthy"
        args = cli.build_parser().parse_args(_command(service.get("command")))
        assert args.command in (None, "serve"), name
        with clean_env.context() as env:
            for key, value in {**dockerfile.env(), **_environment(service)}.items():
                if SERVER_ENV.match(key):
                    env.setenv(key, value)
            settings = cli.settings_from(args)
        assert args.node_id, f"{name}: no --node-id"
        assert settings.host == "0.0.0.0"
        ports = [str(port).split(":")[-2:] for port in service["ports"]]  # [ip:]host:container
        assert [int(container) for _, container in ports] == [settings.port], name
        published.update(host for host, _ in ports)
        seen.setdefault("node_ids", []).append(settings.node_id)
        seen.setdefault("databases", set()).add(settings.database_url)
        seen.setdefault("redis", set()).add(settings.redis_url)
    assert len(set(seen["node_ids"])) == 2, seen["node_ids"]
    assert published == {"8001", "8002"}
    (database,) = seen["databases"]
    (redis_url,) = seen["redis"]
    expected = (
        f"postgresql+asyncpg://{postgres_env['POSTGRES_USER']}:"
        f"{postgres_env['POSTGRES_PASSWORD']}@postgres:5432/{postgres_env['POSTGRES_DB']}"
    )
    assert database == expected
    assert redis_url is not None and re.fullmatch(r"redis://redis:6379/\d+", redis_url)


def test_compose_commands_match_the_readme(compose: dict[str, Any]) -> None:
    readme = (REPO / "README.md").read_text()
    header = COMPOSE.read_text()
    for text in (readme, header):
        assert "docker compose up --build" in text
        assert "docker compose exec node-a stud-server create-operator boss" in text
    assert "127.0.0.1:8001" in readme and "127.0.0.1:8002" in readme
