"""The official Python MCP SDK (mcp==2.3.0) as the person a delegate's permission question reaches.

Usage: delegate_questions.py BINARY WORKSPACE, with the server's environment in SERVER_ENV (JSON:
the real claude's sandbox, pointed at the mock model).

The SDK calls claude at read-only with a shell command claude asks about; the question arrives
at the elicitation callback; accept lets the command run (its output, 42, is in the answer);
decline does not, and the answer says what was denied. Exits non-zero on the first failure.
"""

import json
import os
import sys

import anyio
from mcp import Client, StdioServerParameters, types

from client import check
from elicit import text_of

SHELL = "RUN_SHELL: sh -c \"expr 6 '*' 7\""


class Person:
    def __init__(self) -> None:
        self.answer = types.ElicitResult(action="decline")
        self.questions: list[str] = []

    async def __call__(self, context, params) -> types.ElicitResult:
        self.questions.append(params.message)
        return self.answer


async def main(binary: str, workspace: str) -> None:
    env = json.loads(os.environ["SERVER_ENV"])
    person = Person()
    server = StdioServerParameters(command=binary, args=["serve"], env=env, cwd=workspace)
    async with Client(server, mode="legacy", read_timeout_seconds=170,
                      elicitation_callback=person) as client:
        person.answer = types.ElicitResult(action="accept", content={"allow": True})
        result = await client.call_tool("claude", {"prompt": SHELL})
        check(not result.is_error, f"the allowed call failed: {text_of(result)}")
        check(person.questions and "Bash" in person.questions[-1],
              f"the question: {person.questions}")
        check("tool said: 42" in text_of(result), f"the allowed command did not run: {text_of(result)}")

        person.answer = types.ElicitResult(action="decline")
        asked = len(person.questions)
        result = await client.call_tool("claude", {"prompt": SHELL})
        said = text_of(result)
        check(len(person.questions) == asked + 1, "the declined question was not asked")
        check("tool said: 42" not in said, f"a declined command ran: {said}")
        check("denied claude's Bash" in said and "higher permission level" in said,
              f"the answer does not say what was denied: {said}")
    print("ok (delegate questions)")


if __name__ == "__main__":
    anyio.run(main, *sys.argv[1:3])
