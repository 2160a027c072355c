"""The official Python MCP SDK (mcp==2.3.0) as the person asked to lift a bound (elicitation).

Usage: elicit.py BINARY FAKE_BIN_DIR TRANSPORT
  TRANSPORT: stdio or http (as in client.py: `serve --http` with a bearer token).

The server allows one temp root at workspace-write and waits ASK_TIMEOUT_SECONDS for an answer.
A client with an elicitation callback calls codex above the ceiling and outside the root: an
accept with `allow` ticked runs the call as asked (the fake CLI records its argv and cwd); a
decline, an unticked or malformed accept, or no answer in time gives today's refusal and starts
nothing. All of it on the `initialize` handshake (2025-11-25: an elicitation/create request) and
on the 2026-07-28 lifecycle (`auto`: the call answers InputRequiredResult, the SDK asks the
callback and retries with the answer). A client without the callback is never asked and
refused. Exits non-zero on the first failure.
"""

import json
import os
import shutil
import sys
import tempfile

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from client import AGENTS, check, http_server

ASK_TIMEOUT_SECONDS = 2


class Person:
    """Answers every question with `answer` ("silent": never), and keeps the questions."""

    def __init__(self) -> None:
        self.answer: types.ElicitResult | str = "silent"
        self.questions: list[str] = []

    async def __call__(self, context, params) -> types.ElicitResult:
        self.questions.append(params.message)
        if self.answer == "silent":
            await anyio.sleep(ASK_TIMEOUT_SECONDS * 10)
            return types.ElicitResult(action="cancel")
        return self.answer


def accept(content: dict | None) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=content)


def text_of(result) -> str:
    return " ".join(block.text for block in result.content if hasattr(block, "text"))


class Dirs:
    """The allowed root, a directory outside it, and where the fake CLI records its call."""

    def __init__(self) -> None:
        self.root = os.path.realpath(tempfile.mkdtemp(prefix="cam-elicit-root-"))
        self.outside = os.path.realpath(tempfile.mkdtemp(prefix="cam-elicit-outside-"))
        self.record = os.path.join(self.root, "argv.json")

    def call(self, workspace: str, permission: str) -> dict:
        if os.path.exists(self.record):
            os.remove(self.record)
        return {"prompt": f"argv-out={self.record}", "workspace": workspace,
                "permission": permission}

    def recorded(self) -> dict | None:
        if not os.path.exists(self.record):
            return None
        with open(self.record) as file:
            return json.load(file)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.rmtree(self.outside, ignore_errors=True)


async def refused(client: Client, dirs: Dirs, arguments: dict, expected: str, why: str) -> None:
    result = await client.call_tool("codex", arguments)
    check(result.is_error, f"{why}: the call ran: {result}")
    check(expected in text_of(result), f"{why}: not today's refusal: {text_of(result)}")
    check(dirs.recorded() is None, f"{why}: a refused call started its CLI")


async def above_the_ceiling(client: Client, person: Person, dirs: Dirs) -> None:
    person.answer = accept({"allow": True})
    result = await client.call_tool("codex", dirs.call(dirs.root, "unlimited"))
    check(not result.is_error, f"an allowed call was refused: {text_of(result)}")
    check(person.questions and "unlimited" in person.questions[-1],
          f"the question: {person.questions}")
    argv = json.dumps(dirs.recorded())
    check("danger-full-access" in argv, f"the call did not run at unlimited: {argv}")
    denials = [("decline", types.ElicitResult(action="decline")),
               ("cancel", types.ElicitResult(action="cancel")),
               ("unticked", accept({"allow": False})),
               ("a wrong field", accept({"permit": True})),
               ("no content", accept(None)),
               ("no answer in time", "silent")]
    for why, answer in denials:
        person.answer = answer
        asked = len(person.questions)
        await refused(client, dirs, dirs.call(dirs.root, "unlimited"), "CAM_MAX_PERMISSION", why)
        check(len(person.questions) == asked + 1, f"{why}: the person was not asked")


async def outside_the_root(client: Client, person: Person, dirs: Dirs) -> None:
    person.answer = types.ElicitResult(action="decline")
    await refused(client, dirs, dirs.call(dirs.outside, "read-only"), "CAM_ALLOWED_ROOTS",
                  "declined workspace")
    person.answer = accept({"allow": True})
    result = await client.call_tool("codex", dirs.call(dirs.outside, "read-only"))
    check(not result.is_error, f"an allowed workspace was refused: {text_of(result)}")
    recorded = dirs.recorded() or {}
    check(recorded.get("cwd") == dirs.outside, f"ran elsewhere: {recorded.get('cwd')}")


async def never_asked(connect, dirs: Dirs, mode: str) -> None:
    async with connect(None, mode) as client:
        await refused(client, dirs, dirs.call(dirs.root, "unlimited"), "CAM_MAX_PERMISSION",
                      f"a client without elicitation ({mode})")


async def main(binary: str, fake_bin: str, transport: str) -> None:
    dirs = Dirs()
    env = {f"CAM_{agent.upper()}_BIN": os.path.join(fake_bin, agent) for agent in AGENTS}
    state = tempfile.mkdtemp(prefix="cam-elicit-state-")
    env.update({"CAM_GRACE_SECS": "1", "CAM_STATE_DIR": state, "CAM_SANDBOX": "off",
                "CAM_ALLOWED_ROOTS": dirs.root, "CAM_MAX_PERMISSION": "workspace-write",
                "CAM_ASK_TIMEOUT_SECS": str(ASK_TIMEOUT_SECONDS)})
    try:
        if transport == "http":
            with http_server(binary, env) as (url, token):
                headers = {"Authorization": f"Bearer {token}"}
                async with create_mcp_http_client(headers=headers) as http:
                    def connect(person, mode):
                        server = streamable_http_client(url, http_client=http)
                        return Client(server, mode=mode, read_timeout_seconds=60,
                                      elicitation_callback=person)
                    await exercise(connect, dirs)
        else:
            def connect(person, mode):
                server = StdioServerParameters(command=binary, args=["serve"], env=env)
                return Client(server, mode=mode, read_timeout_seconds=60,
                              elicitation_callback=person)
            await exercise(connect, dirs)
    finally:
        shutil.rmtree(state, ignore_errors=True)
        dirs.remove()
    print(f"ok (elicitation over {transport})")


async def exercise(connect, dirs: Dirs) -> None:
    for mode in ["legacy", "auto"]:
        person = Person()
        async with connect(person, mode) as client:
            await above_the_ceiling(client, person, dirs)
            await outside_the_root(client, person, dirs)
        await never_asked(connect, dirs, mode)


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
