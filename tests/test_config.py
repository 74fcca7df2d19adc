"""Configuration: the environment and command line, validated once, and the error-to-status table."""

from __future__ import annotations

import os
import signal

import pytest

from harness.run.backends import backend_env
from scenarios.config import BackendConfig
from scenarios.errors import BackendUnavailable, Cancelled, InvalidArgument, NotFound, ScenarioError
from servers.common import ServerConfig, catches, parse_config, status_of


def test_backend_config_from_env() -> None:
    config = BackendConfig.from_env(
        {
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
            "AWS_DEFAULT_REGION": "eu-west-1",
            "AWS_ACCESS_KEY_ID": "key",
            "AWS_SECRET_ACCESS_KEY": "secret",
            "MONGO_URI": "mongodb://db:27017",
            "MONGO_DB": "other",
        }
    )
    assert (config.s3_endpoint, config.s3_region, config.s3_access_key, config.s3_secret_key) == (
        "http://127.0.0.1:9000",
        "eu-west-1",
        "key",
        "secret",
    )
    assert (config.mongo_uri, config.mongo_db) == ("mongodb://db:27017", "other")
    assert "secret" not in repr(config)


def test_backend_config_defaults_mean_real_aws_and_local_mongo() -> None:
    config = BackendConfig.from_env({})
    assert config.s3_endpoint is None
    assert (config.mongo_uri, config.mongo_db) == ("mongodb://127.0.0.1:27017", "bench")


def test_backend_config_rejects_a_bad_mongo_uri() -> None:
    with pytest.raises(ValueError, match="MONGO_URI must start with mongodb://"):
        BackendConfig.from_env({"MONGO_URI": "http://db"})


def test_sync_server_command_line() -> None:
    config = parse_config(["-w", "1", "--port", "0"], prog="p", description="d", stack="threads")
    assert (config.workers, config.port, config.host, config.grace) == (1, 0, "127.0.0.1", 5.0)


def test_async_server_command_line() -> None:
    config = parse_config(["-l", "uvloop", "--pool-size", "7"], prog="p", description="d", stack="loop")
    assert (config.loop, config.pool_size, config.port) == ("uvloop", 7, 50051)


@pytest.mark.parametrize(
    ("argv", "stack", "message"),
    [
        (["-w", "0"], "threads", "workers must be >= 1"),
        (["--port", "70000"], "threads", "port must be 0-65535"),
        (["-l", "trio"], "loop", "invalid choice: 'trio'"),
        (["--grace", "-1"], "loop", "grace must be >= 0"),
    ],
)
def test_bad_command_lines_exit_with_a_message(
    argv: list[str], stack: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as raised:
        parse_config(argv, prog="p", description="d", stack=stack)  # type: ignore[arg-type]
    assert raised.value.code == 2
    assert message in capsys.readouterr().err


def test_server_config_validates() -> None:
    with pytest.raises(ValueError, match="pool size"):
        ServerConfig(pool_size=0)


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidArgument("bucket", "bad"), "INVALID_ARGUMENT"),
        (NotFound("gone"), "NOT_FOUND"),
        (BackendUnavailable("S3", OSError()), "UNAVAILABLE"),
        (Cancelled("gone away"), "CANCELLED"),
        (ScenarioError("other"), "INTERNAL"),
    ],
)
def test_status_of_domain_errors(error: ScenarioError, status: str) -> None:
    assert status_of(error) == status


def test_a_worker_of_a_multi_process_server_is_started_with_the_same_settings() -> None:
    loop = parse_config(
        [
            *("-p", "2", "--port", "5000", "-l", "uvloop", "--pool-size", "7", "--mongo-driver", "pymongo"),
            *("--s3-client", "per-request"),
        ],
        prog="p",
        description="d",
        stack="loop",
    )
    assert loop.worker_argv() == [
        *("--host", "127.0.0.1", "--port", "5000", "--grace", "5.0", "-p", "1", "--shared-port"),
        *("--s3-client", "per-request"),
        *("-l", "uvloop", "--pool-size", "7", "--mongo-driver", "pymongo"),
    ]
    limited = parse_config(
        ["-p", "2", "--port", "5000", "--max-concurrent-rpcs", "3"], prog="p", description="d", stack="loop"
    )
    assert limited.worker_argv()[9:11] == ["--max-concurrent-rpcs", "3"]
    threads = parse_config(
        ["-p", "3", "--port", "5000", "-w", "4", "--max-concurrent-rpcs", "9"],
        prog="p",
        description="d",
        stack="threads",
    )
    assert threads.worker_argv()[-7:] == [
        "--shared-port",
        "--max-concurrent-rpcs",
        "9",
        "--s3-client",
        "per-process",
        "-w",
        "4",
    ]


def test_a_call_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="max concurrent RPCs must be >= 1"):
        ServerConfig(max_concurrent_rpcs=0)


def test_catches_reads_whether_a_process_handles_a_signal() -> None:
    previous = signal.signal(signal.SIGUSR1, lambda *_: None)
    try:
        assert catches(os.getpid(), signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert not catches(os.getpid(), signal.SIGUSR2)  # default action: not caught
    assert not catches(2**22 + 1, signal.SIGTERM)  # no such process


def test_backend_timeouts_come_from_the_environment() -> None:
    config = BackendConfig.from_env({"BACKEND_READ_TIMEOUT": "2.5", "BACKEND_CONNECT_TIMEOUT": "1"})
    assert (config.read_timeout, config.connect_timeout) == (2.5, 1.0)
    assert BackendConfig.from_env({}).read_timeout == 30.0
    with pytest.raises(ValueError, match="BACKEND_READ_TIMEOUT must be a number of seconds, got 'soon'"):
        BackendConfig.from_env({"BACKEND_READ_TIMEOUT": "soon"})
    assert backend_env(config)["BACKEND_READ_TIMEOUT"] == "2.5"
