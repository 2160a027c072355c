"""The official Python MCP SDK against cli-agent-mcp: MCP logging and a complete job_result.

Usage: logging_and_result.py BINARY FAKE_BIN_DIR TRANSPORT  (TRANSPORT: stdio or http; legacy handshake,
where logging/setLevel governs what arrives)

Checks the logging capability, sets the level to warning and, over http, has the server
refuse a request from a foreign Origin: its warning must arrive as notifications/message
(over stdio the SDK sends nothing the server warns about; tests/fast/mcp_logging.rs covers it).
Then a failed call's job_result carries its status, error with hint and session id.
Exits non-zero with a message on the first failure.
"""

import os
import shutil
import sys
import tempfile
import time

import anyio
import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from client import AGENTS, DEADLINE_SECONDS, check, http_server


async def failed_job_result(client: Client) -> None:
    failed = await client.call_tool("codex", {"prompt": "fail=quota_exceeded_for_this_account"})
    check(failed.is_error, f"the call did not fail: {failed}")
    job = (failed.structured_content or {}).get("job_id")
    page = await client.call_tool("job_result", {"job_id": job})
    report = page.structured_content or {}
    check(report.get("status") == "failed", f"job_result: {report}")
    check("quota exceeded" in report.get("error", {}).get("message", ""), f"error: {report}")
    check(isinstance(report.get("error", {}).get("hint"), str), f"no hint: {report}")
    check(isinstance(report.get("session_id"), str), f"no session: {report}")


async def warning_arrives(logged: list, url: str, token: str) -> None:
    async with httpx2.AsyncClient() as http:
        refused = await http.post(url, headers={"Authorization": f"Bearer {token}",
                                                "Origin": "http://evil.example"}, json={})
    check(refused.status_code == 403, f"a foreign Origin was not refused: {refused.status_code}")
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not any("Origin" in str(params.data) for params in logged):
        check(time.monotonic() < deadline, f"no warning arrived: {logged}")
        await anyio.sleep(0.05)
    warning = next(params for params in logged if "Origin" in str(params.data))
    check(warning.level == "warning", f"level: {warning}")
    check((warning.logger or "").startswith("cli_agent_mcp"), f"logger: {warning}")


async def main(binary: str, fake_bin: str, transport: str) -> None:
    env = {f"CAM_{agent.upper()}_BIN": os.path.join(fake_bin, agent) for agent in AGENTS}
    state = tempfile.mkdtemp(prefix="cam-interop-logging-")
    env["CAM_STATE_DIR"] = state
    logged = []

    async def on_log(params) -> None:
        logged.append(params)

    def connect(server) -> Client:
        return Client(server, mode="legacy", read_timeout_seconds=60, logging_callback=on_log)

    try:
        if transport == "http":
            with http_server(binary, env) as (url, token):
                headers = {"Authorization": f"Bearer {token}"}
                async with create_mcp_http_client(headers=headers) as http:
                    async with connect(streamable_http_client(url, http_client=http)) as client:
                        check(client.server_capabilities.logging is not None, "no logging")
                        await client.set_logging_level("warning")
                        await warning_arrives(logged, url, token)
                        await failed_job_result(client)
        else:
            server = StdioServerParameters(command=binary, args=["serve"], env=env)
            async with connect(server) as client:
                check(client.server_capabilities.logging is not None, "no logging capability")
                await client.set_logging_level("warning")
                await failed_job_result(client)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    print(f"ok (logging over {transport})")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
