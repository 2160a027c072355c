"""The official Python MCP SDK (mcp==2.3.0) as the person a delegate's permission question reaches.

Usage: delegate_questions.py BINARY WORKSPACE TRANSPORT, with the server's environment in SERVER_ENV
(JSON: the real claude's sandbox, pointed at the mock model).
  TRANSPORT: stdio, or http (`serve --http` with a bearer token, as in client.py): the question
  reaches the client of the HTTP session that made the call.

The SDK calls claude at read-only with a shell command claude asks about; the question arrives
at the elicitation callback; accept lets the command run (its output, 42, is in the answer);
decline does not, and the answer says what was denied. On the `initialize` handshake (the
question is an elicitation/create request) and on the 2026-07-28 lifecycle (`auto`: the call
answers InputRequiredResult while claude waits, the SDK asks the callback and retries with the
answer). Exits non-zero on the first failure.
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from client import check, http_server
from elicit import text_of

SHELL = "RUN_SHELL: sh -c \"expr 6 '*' 7\""
# The handshake of 2025-11-25, then the 2026-07-28 lifecycle.
MODES = ("legacy", "auto")


class Person:
    def __init__(self) -> None:
        self.answer = types.ElicitResult(action="decline")
        self.questions: list[str] = []

    async def __call__(self, context, params) -> types.ElicitResult:
        self.questions.append(params.message)
        return self.answer


async def main(binary: str, workspace: str, transport: str) -> None:
    env = json.loads(os.environ["SERVER_ENV"])
    if transport == "http":
        # The HTTP server runs where its calls' workspace defaults to.
        os.chdir(workspace)
        with http_server(binary, env) as (url, token):
            headers = {"Authorization": f"Bearer {token}"}
            async with create_mcp_http_client(headers=headers) as http:
                for mode in MODES:
                    await exercise(streamable_http_client(url, http_client=http), mode)
    else:
        for mode in MODES:
            server = StdioServerParameters(command=binary, args=["serve"], env=env,
                                           cwd=workspace)
            await exercise(server, mode)
    print(f"ok (delegate questions over {transport})")


async def exercise(server, mode: str) -> None:
    person = Person()
    async with Client(server, mode=mode, read_timeout_seconds=170,
                      elicitation_callback=person) as client:
        person.answer = types.ElicitResult(action="accept", content={"allow": True})
        result = await client.call_tool("claude", {"prompt": SHELL})
        check(not result.is_error, f"the allowed call failed: {text_of(result)}")
        check(person.questions and "Bash" in person.questions[-1],
              f"the question: {person.questions}")
        check("tool said: 42" in text_of(result), f"the allowed command did not run: {text_of(result)}")
        await check_recorded(client, result, "allowed")

        person.answer = types.ElicitResult(action="decline")
        asked = len(person.questions)
        result = await client.call_tool("claude", {"prompt": SHELL})
        said = text_of(result)
        check(len(person.questions) == asked + 1, "the declined question was not asked")
        check("tool said: 42" not in said, f"a declined command ran: {said}")
        check("denied claude's Bash" in said and "higher permission level" in said,
              f"the answer does not say what was denied: {said}")
        await check_recorded(client, result, "declined")


async def check_recorded(client: Client, result, answer: str) -> None:
    """The job's transcript holds the question about Bash, answered `answer` by this client."""
    job = (result.structured_content or {}).get("job_id")
    page = await client.call_tool("job_result", {"job_id": job, "transcript": True,
                                                 "limit": 10_000})
    events = [json.loads(line) for line in (page.structured_content or {}).get("text", "").splitlines()]
    questions = [event for event in events if event["type"] == "question"]
    check(len(questions) == 1 and questions[0]["tool"] == "Bash"
          and questions[0]["answer"] == answer and questions[0]["answered_by"],
          f"the transcript's question, {answer}: {questions}")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:4])
