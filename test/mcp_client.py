"""An MCP client nobody here wrote, driving Testrun's MCP server: the Python `mcp` package from PyPI
(pinned in test/python-requirements.txt, installed by scripts/python-tools.sh). test/mcp.e2e.test.ts
runs it over both transports and checks what it prints.

    python test/mcp_client.py remote URL PLAN          the gateway's /v1/mcp (Streamable HTTP)
    python test/mcp_client.py stdio PLAN COMMAND ARG…  a server it launches (`testrun mcp`)

The key is TESTRUN_API_KEY (and for stdio the server gets TESTRUN_URL too), never an argument. It
lists the tools and the test plans, starts PLAN, reads the run with get_run waiting 30 s until it
finished, makes one request the API refuses (a run that does not exist), and prints one JSON object.
"""

import asyncio
import json
import os
import sys

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client


def payload(result):
    """The tool result's JSON text, parsed."""
    return json.loads("".join(block.text for block in result.content if block.type == "text"))


async def session(client, plan):
    seen = {}
    async with client:
        tools = (await client.list_tools()).tools
        seen["tools"] = sorted(tool.name for tool in tools)
        seen["readOnly"] = sorted(
            tool.name for tool in tools if tool.annotations and tool.annotations.read_only_hint
        )
        plans = await client.call_tool("list_test_plans", {})
        seen["plans"] = [p["name"] for p in payload(plans)["testPlans"]]
        started = await client.call_tool("start_run", {"testPlan": plan})
        run = payload(started)
        seen["started"] = {"id": run["id"], "status": run["status"], "url": run["url"]}
        reads = 0
        while not run["finished"] and reads < 20:
            run = payload(await client.call_tool("get_run", {"runId": run["id"], "waitSeconds": 30}))
            reads += 1
        seen["finished"] = {
            "id": run["id"],
            "status": run["status"],
            "url": run["url"],
            "passedTests": run["passedTests"],
            "reads": reads,
        }
        missing = await client.call_tool("get_run", {"runId": "run_00000000000000000000000000"})
        seen["missing"] = {"isError": missing.is_error, **payload(missing)}
    return seen


async def main():
    mode, *rest = sys.argv[1:]
    key = os.environ["TESTRUN_API_KEY"]
    if mode == "remote":
        url, plan = rest
        headers = {"Authorization": f"Bearer {key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            return await session(Client(streamable_http_client(url, http_client=http)), plan)
    plan, command, *args = rest
    env = {"TESTRUN_URL": os.environ["TESTRUN_URL"], "TESTRUN_API_KEY": key}
    return await session(Client(StdioServerParameters(command=command, args=args, env=env)), plan)


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main())))
