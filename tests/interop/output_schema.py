"""The official Python MCP SDK against cli-agent-mcp's `output_schema`, with the fake CLI.

Usage: output_schema.py BINARY FAKE_BIN_DIR TRANSPORT  (TRANSPORT: stdio or http; legacy handshake)

Checks that each agent tool's input schema offers `output_schema`; that a conforming answer
comes back validated as structuredContent.output from codex (the schema passed by its flag)
and from gemini (the schema in its prompt, the answer validated by the server); that a
non-conforming answer is an error result naming why, keeping the raw answer; and that an
invalid schema is refused before any CLI starts. The fake CLI writes its argv and prompt to a
file (the sandbox is off so it may write outside the workspace), which shows where the schema
went. Exits non-zero with a message on the first failure.
"""

import json
import os
import shutil
import sys
import tempfile

import anyio
from mcp import Client

from client import AGENTS, check, connected

SCHEMA = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["ok", "bad"]},
        "score": {"type": "integer"},
    },
    "required": ["verdict", "score"],
}


def argv_seen(path: str) -> tuple[str, str]:
    with open(path, encoding="utf-8") as seen:
        recorded = json.load(seen)
    return json.dumps(recorded["argv"]), recorded["prompt"]


async def tools_offer_it(client: Client) -> None:
    tools = await client.list_tools()
    for tool in tools.tools:
        if tool.name in AGENTS:
            check("output_schema" in tool.input_schema.get("properties", {}),
                  f"{tool.name} offers no output_schema: {tool.input_schema}")


async def conforming(client: Client, argv_out: str) -> None:
    answer = '{"verdict":"ok","score":7}'
    for agent in ("codex", "gemini"):
        result = await client.call_tool(
            agent, {"prompt": f"answer={answer} argv-out={argv_out}", "output_schema": SCHEMA})
        check(not result.is_error, f"{agent} failed: {result}")
        output = (result.structured_content or {}).get("output")
        check(output == {"verdict": "ok", "score": 7}, f"{agent} output: {result}")
        check(result.content[0].text == answer, f"{agent} text: {result.content}")
        argv, prompt = argv_seen(argv_out)
        if agent == "codex":
            check("--output-schema=" in argv, f"codex got no --output-schema: {argv}")
            check("JSON Schema" not in prompt, f"codex got the schema in its prompt: {prompt}")
        else:
            check("exactly one JSON value" in prompt, f"gemini's prompt: {prompt}")
            check('"required":["verdict","score"]' in prompt, f"gemini's prompt: {prompt}")


async def non_conforming(client: Client) -> None:
    wrong = '{"verdict":"maybe"}'
    result = await client.call_tool(
        "gemini", {"prompt": f"answer={wrong}", "output_schema": SCHEMA})
    check(result.is_error, f"a non-conforming answer passed: {result}")
    report = result.structured_content or {}
    error = report.get("error", {})
    check(error.get("kind") == "invalid_output", f"error: {report}")
    check("at `/verdict`" in error.get("message", ""), f"the message names no path: {error}")
    check("required" in error.get("message", ""), f"the message names no reason: {error}")
    check(report.get("answer") == wrong, f"the raw answer was not kept: {report}")
    check("output" not in report, f"an invalid answer came back as output: {report}")


async def invalid_schema_refused(client: Client, argv_out: str) -> None:
    os.remove(argv_out)
    result = await client.call_tool(
        "codex", {"prompt": f"argv-out={argv_out}", "output_schema": {"type": "no-such-type"}})
    check(result.is_error, f"an invalid schema was accepted: {result}")
    text = " ".join(getattr(part, "text", "") for part in result.content)
    check("not a valid JSON Schema" in text and "Fix the schema" in text, f"refusal: {text}")
    check(not os.path.exists(argv_out), "a CLI started for an invalid schema")


async def exercise(client: Client, argv_out: str) -> None:
    await tools_offer_it(client)
    await conforming(client, argv_out)
    await non_conforming(client)
    await invalid_schema_refused(client, argv_out)


async def main(binary: str, fake_bin: str, transport: str) -> None:
    env = {f"CAM_{agent.upper()}_BIN": os.path.join(fake_bin, agent) for agent in AGENTS}
    state = tempfile.mkdtemp(prefix="cam-interop-schema-")
    env["CAM_STATE_DIR"] = os.path.join(state, "state")
    env["CAM_SANDBOX"] = "off"
    argv_out = os.path.join(state, "argv.json")

    try:
        async with connected(binary, env, transport, cwd=state, mode="legacy",
                             read_timeout_seconds=60) as client:
            await exercise(client, argv_out)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    print(f"ok (output_schema over {transport})")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
