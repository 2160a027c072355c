"""The official Python MCP SDK (mcp==2.3.0) against cli-agent-mcp with the fake CLI.

Usage: client.py BINARY FAKE_BIN_DIR TAG MODE [TRANSPORT]
  MODE: legacy or auto; TRANSPORT: stdio (the default) or http. Over http the script starts
  `serve --http 127.0.0.1:0` with a bearer token, connects by URL with the token, and at the
  end stops the server with SIGTERM and expects exit 0.

Lists the tools, calls one and receives its progress, lets a hanging call time out (the SDK
then sends notifications/cancelled), checks on /proc that the call's processes are gone,
and calls once more. Then starts a background job, waits for it with job_wait and pages its
answer back with job_result. Exits non-zero with a message on the first failure.
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

# Generous for a loaded 2-core machine.
DEADLINE_SECONDS = 30
# Long enough for the hanging call's processes to start, short enough to keep the test quick.
CANCEL_TIMEOUT_SECONDS = 6


def tagged_pids(tag: str) -> list[int]:
    """Live processes whose environment carries FAKE_CLI_TAG=<tag>."""
    needle = f"FAKE_CLI_TAG={tag}".encode()
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:
                if needle in environ.read().split(b"\0"):
                    pids.append(int(entry))
        except OSError:
            continue
    return pids


def check(condition: bool, message: str) -> None:
    if not condition:
        raise SystemExit(f"FAIL: {message}")


async def wait_until(what: str, condition) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        check(time.monotonic() < deadline, f"timed out waiting until {what}")
        await anyio.sleep(0.05)


async def call_with_progress(client: Client) -> None:
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, message))

    result = await client.call_tool(
        "codex", {"prompt": "stream=2 tool answer=interop_ok"}, progress_callback=on_progress
    )
    check(not result.is_error, f"the call failed: {result}")
    check(result.content[0].text == "interop ok", f"answer: {result.content}")
    structured = result.structured_content or {}
    check(structured.get("status") == "completed", f"structured: {structured}")
    check(bool(progress), "no progress arrived")
    values = [value for value, _ in progress]
    check(values == sorted(set(values)), f"progress not rising: {values}")
    check(all((m or "").startswith("codex: ") for _, m in progress), f"messages: {progress}")


async def cancel_by_timeout(client: Client, tag: str) -> None:
    seen = anyio.Event()

    async def watch() -> None:
        await wait_until("the hanging call's processes run", lambda: len(tagged_pids(tag)) >= 3)
        seen.set()

    async with anyio.create_task_group() as group:
        group.start_soon(watch)
        try:
            await client.call_tool(
                "claude",
                {"prompt": f"hang children=1 session-child daemon tag={tag}"},
                read_timeout_seconds=CANCEL_TIMEOUT_SECONDS,
            )
            raise SystemExit("FAIL: the hanging call returned instead of timing out")
        except MCPError as error:
            check(error.code == -32001, f"expected a request timeout, got {error.code}: {error}")
    check(seen.is_set(), "the hanging call's processes never ran")
    await wait_until("the cancelled call's processes are gone", lambda: not tagged_pids(tag))


async def background_job_paged(client: Client) -> None:
    size = 50_000
    started = await client.call_tool(
        "opencode", {"prompt": f"answer-bytes={size}", "background": True}
    )
    job = (started.structured_content or {}).get("job_id")
    check(isinstance(job, str) and job.startswith("job_"), f"no job id: {started}")
    waited = {}
    deadline = time.monotonic() + DEADLINE_SECONDS
    while waited.get("ended") != 1:
        check(time.monotonic() < deadline, f"the job never ended: {waited}")
        result = await client.call_tool("job_wait", {"job_ids": [job], "timeout_secs": 10})
        check(not result.is_error, f"job_wait failed: {result}")
        waited = result.structured_content or {}
    check(waited["jobs"][0]["status"] == "completed", f"job_wait: {waited}")
    answer, offset = "", 0
    while offset is not None:
        page = await client.call_tool(
            "job_result", {"job_id": job, "offset": offset, "limit": 15_000}
        )
        structured = page.structured_content or {}
        answer += structured.get("text", "")
        offset = structured.get("next_offset")
    check(answer == "x" * size, f"the pages make {len(answer)} characters, not the answer")


@contextlib.contextmanager
def http_server(binary: str, env: dict[str, str]):
    """`serve --http` on a free loopback port with a token; yields (url, token)."""
    token = "interop-" + os.urandom(16).hex()
    server_env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", ""),
                  **env, "CAM_HTTP_TOKEN": token, "CAM_LOG": "info"}
    process = subprocess.Popen([binary, "serve", "--http", "127.0.0.1:0"], env=server_env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in process.stderr:
            found = re.search(r"url=(http://\S+)", line)
            if found:
                url = found.group(1)
                break
        check(url is not None, "the HTTP server never said where it listens")
        # Keep reading its log, so a full pipe never blocks the server.
        threading.Thread(target=process.stderr.read, daemon=True).start()
        yield url, token
        process.send_signal(signal.SIGTERM)
        check(process.wait(timeout=DEADLINE_SECONDS) == 0, "the server did not exit 0 on SIGTERM")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@contextlib.asynccontextmanager
async def connected(binary: str, env: dict[str, str], transport: str, cwd: str | None = None,
                    **client_options):
    """A Client of `serve` over `transport`: stdio, or http (its own server, with a token)."""
    if transport == "http":
        with http_server(binary, env) as (url, token):
            headers = {"Authorization": f"Bearer {token}"}
            async with create_mcp_http_client(headers=headers) as http:
                server = streamable_http_client(url, http_client=http)
                async with Client(server, **client_options) as client:
                    yield client
    else:
        server = StdioServerParameters(command=binary, args=["serve"], env=env, cwd=cwd)
        async with Client(server, **client_options) as client:
            yield client


# The agent tools in the server's order, as the Rust side names them.
AGENTS = os.environ["INTEROP_AGENTS"].split(",")


async def exercise(client: Client, tag: str) -> None:
    tools = await client.list_tools()
    names = [tool.name for tool in tools.tools]
    expected = AGENTS + ["job_wait", "job_result", "job_cancel", "job_list",
                         "job_diff", "job_apply", "job_discard", "job_revert"]
    check(names == expected, f"tools: {names}")
    await call_with_progress(client)
    await cancel_by_timeout(client, tag)
    again = await client.call_tool("gemini", {"prompt": "hi"})
    check(not again.is_error, f"the server stopped serving: {again}")
    await background_job_paged(client)


async def main(binary: str, fake_bin: str, tag: str, mode: str, transport: str = "stdio") -> None:
    env = {f"CAM_{agent.upper()}_BIN": os.path.join(fake_bin, agent) for agent in AGENTS}
    env["CAM_GRACE_SECS"] = "1"
    state = tempfile.mkdtemp(prefix="cam-interop-state-")
    env["CAM_STATE_DIR"] = state
    try:
        async with connected(binary, env, transport, mode=mode, read_timeout_seconds=60) as client:
            await exercise(client, tag)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    print(f"ok ({mode} over {transport})")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:6])
