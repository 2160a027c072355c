"""The official Python MCP SDK (mcp==2.3.0) against cli-agent-mcp's resources, prompts and
completion, with the fake CLI.

Usage: resources.py BINARY FAKE_BIN_DIR MODE TRANSPORT
  MODE: legacy (the initialize handshake: resources/subscribe) or auto (2026-07-28:
  subscriptions/listen); TRANSPORT: stdio or http.

Lists the prompts and gets `delegate` with arguments; completes an agent name; starts a
background job that hangs, finds it in resources/list, reads its summary through the template,
subscribes to it, cancels it with job_cancel and waits for the update; reads the summary again
(cancelled) and completes the job id. Exits non-zero with a message on the first failure.
"""

import json
import os
import shutil
import sys
import tempfile
import time

import anyio
from mcp import Client, types

from client import AGENTS, DEADLINE_SECONDS, check, connected


async def prompts_and_agent_completion(client: Client) -> None:
    listed = await client.list_prompts()
    names = [prompt.name for prompt in listed.prompts]
    check(names == ["second_opinion", "delegate", "best_of"], f"prompts: {names}")
    got = await client.get_prompt("delegate", {"agent": "claude", "task": "fix the bug"})
    text = got.messages[0].content.text
    for expected in ("`claude`", "fix the bug", "job_diff", "job_apply"):
        check(expected in text, f"{expected!r} not in the delegate prompt: {text}")
    completed = await client.complete(
        types.PromptReference(type="ref/prompt", name="delegate"), {"name": "agent", "value": "cla"}
    )
    check(completed.completion.values == ["claude"], f"agent completion: {completed}")


async def read_json(client: Client, uri: str) -> dict:
    read = await client.read_resource(uri)
    contents = read.contents[0]
    check(contents.uri == uri, f"read {uri}: {read}")
    return json.loads(contents.text)


async def start_hanging_job(client: Client) -> str:
    started = await client.call_tool("codex", {"prompt": "hang", "background": True})
    job = (started.structured_content or {}).get("job_id")
    check(isinstance(job, str) and job.startswith("job_"), f"no job id: {started}")
    return job


async def listed_and_read(client: Client, job: str) -> str:
    uri = f"job://{job}"
    listed = await client.list_resources()
    uris = [str(resource.uri) for resource in listed.resources]
    check(uri in uris, f"{uri} not in resources/list: {uris}")
    templates = await client.list_resource_templates()
    shapes = [template.uri_template for template in templates.resource_templates]
    check("job://{job_id}/answer" in shapes, f"templates: {shapes}")
    summary = await read_json(client, uri)
    check(summary["job_id"] == job and summary["status"] in ("queued", "running"), f"{summary}")
    return uri


async def cancelled_and_completed(client: Client, job: str, uri: str) -> None:
    summary = await read_json(client, uri)
    check(summary["status"] == "cancelled", f"after the update: {summary}")
    completed = await client.complete(
        types.ResourceTemplateReference(type="ref/resource", uri="job://{job_id}"),
        {"name": "job_id", "value": job[:8]},
    )
    check(job in completed.completion.values, f"job id completion: {completed}")


async def cancel(client: Client, job: str) -> None:
    cancelled = await client.call_tool("job_cancel", {"job_id": job})
    check(not cancelled.is_error, f"job_cancel: {cancelled}")


async def legacy_subscription(client: Client, updates: list[str]) -> None:
    job = await start_hanging_job(client)
    uri = await listed_and_read(client, job)
    await client.subscribe_resource(uri)
    await cancel(client, job)
    deadline = time.monotonic() + DEADLINE_SECONDS
    while uri not in updates:
        check(time.monotonic() < deadline, f"no notifications/resources/updated for {uri}: {updates}")
        await anyio.sleep(0.05)
    await client.unsubscribe_resource(uri)
    await cancelled_and_completed(client, job, uri)


async def listen_subscription(client: Client) -> None:
    job = await start_hanging_job(client)
    uri = await listed_and_read(client, job)
    async with client.listen(resource_subscriptions=[uri]) as subscription:
        await cancel(client, job)
        with anyio.fail_after(DEADLINE_SECONDS):
            async for event in subscription:
                if getattr(event, "uri", None) == uri:
                    break
    await cancelled_and_completed(client, job, uri)


async def exercise(client: Client, mode: str, updates: list[str]) -> None:
    await prompts_and_agent_completion(client)
    if mode == "legacy":
        await legacy_subscription(client, updates)
    else:
        check(client.protocol_version == "2026-07-28", f"negotiated {client.protocol_version}")
        await listen_subscription(client)


def recording(updates: list[str]):
    """A message handler that notes the URI of every notifications/resources/updated."""

    async def handle(message) -> None:
        notification = getattr(message, "root", message)
        if getattr(notification, "method", None) == "notifications/resources/updated":
            updates.append(str(notification.params.uri))

    return handle


async def main(binary: str, fake_bin: str, mode: str, transport: str) -> None:
    env = {f"CAM_{agent.upper()}_BIN": os.path.join(fake_bin, agent) for agent in AGENTS}
    env["CAM_GRACE_SECS"] = "1"
    state = tempfile.mkdtemp(prefix="cam-interop-resources-")
    env["CAM_STATE_DIR"] = state
    updates: list[str] = []
    try:
        async with connected(binary, env, transport, mode=mode, read_timeout_seconds=60,
                             message_handler=recording(updates)) as client:
            await exercise(client, mode, updates)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    print(f"ok ({mode} over {transport})")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:5])
