"""An agent end to end over MCP with the official SDK's client (streamable HTTP and stdio); a human merges over REST."""
import json
import os
import sys

import anyio
import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import World, live_server
from differential_server.api import create_app

TOOLS = {"create_branch", "run_sql", "list_tables", "describe_table", "branch_changes", "branch_diff", "propose"}


def agent_client(url, token):
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(f"{url}/mcp", http_client=http))


async def tool(client, tool_name, /, **arguments):
    result = await client.call_tool(tool_name, arguments)
    text = result.content[0].text
    if result.is_error:
        return "error", json.loads(text[text.index("{"):])
    return "ok", json.loads(text)


async def agent_flow(client, branch, on_conflict=None, price=999):
    """The agent's whole part: create, write, read changes and diff, propose. Returns the proposal id."""
    assert (await tool(client, "create_branch", database="shop", name=branch, ttl_hours=24))[0] == "ok"
    status, result = await tool(client, "run_sql", database="shop", branch=branch,
                                sql=f"UPDATE items SET price = {price} WHERE id = 3")
    assert status == "ok" and result["changed"]
    status, changes = await tool(client, "branch_changes", database="shop", branch=branch)
    assert [(t["table"], t["updated"]) for t in changes["tables"]] == [("items", 1)]
    status, page = await tool(client, "branch_diff", database="shop", branch=branch, table="items")
    assert page["rows"][0]["changed"] == ["price"] and page["rows"][0]["after"]["price"] == price
    status, proposal = await tool(client, "propose", database="shop", branch=branch, on_conflict=on_conflict)
    assert status == "ok", proposal
    return proposal["merge"]["id"]


def test_agent_proposes_over_mcp_and_a_human_merges_over_rest(tmp_path):
    world = World(tmp_path / "repo")
    try:
        with live_server(create_app(world.service, sweep=False)) as url:
            anyio.run(_scenario, world, url)
    finally:
        world.close()


async def _scenario(world, url):
    rest = httpx.AsyncClient(base_url=url, timeout=120)

    async def merge(branch, pid, who="rob"):
        return await rest.post(f"/api/branch/shop/branches/{branch}/merge", json={"proposal_id": pid},
                               headers=world.h(who))

    async def main_sql(sql):
        response = await rest.post("/api/branch/shop/sql", json={"sql": sql}, headers=world.h("alice"))
        assert response.status_code == 200, response.text

    async with agent_client(url, world.tokens["agent"][:-4] + "AAAA") as forged:
        status, body = await tool(forged, "list_tables", database="shop")
        assert (status, body["code"]) == ("error", "unauthenticated")
        assert world.tokens["agent"][-10:] not in json.dumps(body)
    async with agent_client(url, world.tokens["agent"]) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        status, body = await tool(client, "run_sql", database="shop", sql="DELETE FROM items")
        assert (status, body["code"]) == ("error", "write_requires_branch")
        status, tables = await tool(client, "list_tables", database="shop")
        assert [t["table"] for t in tables] == ["customers", "items"]
        status, described = await tool(client, "describe_table", database="shop", table="items")
        assert described["primary_key"] == ["id"]

        pid = await agent_flow(client, "first")
        assert (await merge("first", pid, who="agent")).json()["code"] == "branch_only_token"
        response = await merge("first", pid)
        assert response.status_code == 200, response.text
        rows = (await rest.post("/api/branch/shop/sql", json={"sql": "SELECT price FROM items WHERE id = 3"},
                                headers=world.h("rob"))).json()["rows"]
        assert rows == [[999]]

        pid = await agent_flow(client, "moved", on_conflict="branch", price=555)
        await main_sql("UPDATE items SET price = 5 WHERE id = 3")
        assert (await merge("moved", pid)).json()["code"] == "conflicts_changed"
        await tool(client, "run_sql", database="shop", branch="moved", sql="UPDATE items SET name = 'x' WHERE id = 1")
        status, proposal = await tool(client, "propose", database="shop", branch="moved", on_conflict="branch")
        await tool(client, "run_sql", database="shop", branch="moved", sql="UPDATE items SET name = 'y' WHERE id = 1")
        assert (await merge("moved", proposal["merge"]["id"])).json()["code"] == "proposal_stale"

        first = (await tool(client, "propose", database="shop", branch="moved", on_conflict="branch"))[1]
        second = (await tool(client, "propose", database="shop", branch="moved", on_conflict="main"))[1]
        replaced = (await merge("moved", first["merge"]["id"])).json()
        assert (replaced["code"], replaced["open_proposal"]) == ("proposal_replaced", second["merge"]["id"])
        assert (await merge("moved", second["merge"]["id"])).status_code == 200
    await rest.aclose()


def test_stdio_transport_serves_the_same_tools(tmp_path):
    from conftest import seed
    from differential_server import tokens
    from differential_server.config import Settings
    from differential_server.state import State
    from differential_testing import EXTENSION
    repository = tmp_path / "repo"
    seed(repository)
    state = State(Settings(repository=repository).state_path)
    token = tokens.mint(state, tokens.ensure_principal(state, "agent", "member"), "agent", branch_only=True)[1]
    env = dict(os.environ, DIFFERENTIAL_TOKEN=token, DIFFERENTIAL_EXTENSION=str(EXTENSION))
    params = StdioServerParameters(command=sys.executable, env=env,
                                   args=["-m", "differential_server.cli", "mcp-stdio", "--repository", str(repository)])

    async def scenario():
        async with Client(params) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            status, body = await tool(client, "run_sql", database="shop", sql="UPDATE items SET price = 0")
            assert (status, body["code"]) == ("error", "write_requires_branch")
            pid = await agent_flow(client, "over-stdio")
            assert pid >= 1
    anyio.run(scenario)
