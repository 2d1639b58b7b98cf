"""The review page in Debian's headless Chromium, driven by Playwright: a whole review with two tokens, from the
inbox through the row diff, the conflicts' preview and main's history to a confirmed merge and discard."""
import pathlib
import shutil

import pytest
from playwright.sync_api import sync_playwright

from conftest import World, live_server
from differential_server.api import create_app

REPO_ROOT = pathlib.Path(__file__).resolve().parents[3]
ARTIFACTS = REPO_ROOT / "build" / "test-artifacts"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


def window(browser, url):
    """A tab of its own (the token lives in the tab's sessionStorage) that may reach nothing but the server."""
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(url) else route.abort())
    return page


def login(page, url, token):
    page.goto(url + "/#inbox")
    page.fill("#token", token)
    page.click("#login-form button[type=submit]")
    page.wait_for_selector("#app:not([hidden])")


def logout(page):
    page.click("#logout")
    page.wait_for_selector("#login:not([hidden])")


def texts(page, selector):
    return [t.strip() for t in page.locator(selector).all_text_contents()]


def wait_text(page, selector, text):
    page.wait_for_function("([s, t]) => (document.querySelector(s)?.textContent || '').includes(t)",
                           arg=[selector, text])


def refusal(page, code):
    wait_text(page, "#refusal-code", code)
    assert page.is_visible("#refusal")
    return page.text_content("#refusal-message")


def confirm(page, button, key):
    """Opens the confirmation of `button` and answers it from the keyboard (Enter confirms, Escape cancels)."""
    page.click(button)
    page.wait_for_selector("#confirm[open]")
    assert page.evaluate("document.activeElement.id") == "confirm-ok"
    page.keyboard.press(key)
    page.wait_for_selector("#confirm:not([open])", state="attached")


def no_horizontal_overflow(page):
    return page.evaluate("""() => {
        const root = document.documentElement, app = document.getElementById('app');
        return root.scrollWidth <= root.clientWidth && app.scrollWidth <= app.clientWidth
            && app.getBoundingClientRect().right <= root.clientWidth;
    }""")


def _seed_review(world):
    """An agent's branch: one updated row that conflicts with main, one inserted row, and 60 more for paging."""
    assert world.create("agent", "fix").status_code == 201
    assert world.sql("agent", "UPDATE items SET price = 999, name = 'renamed' WHERE id = 3",
                     branch="fix").status_code == 200
    assert world.sql("agent", "INSERT INTO items VALUES (77, 'new', 7, 'sku-77')", branch="fix").status_code == 200
    assert world.sql("agent", "INSERT INTO items SELECT i, 'bulk ' || i, i, 'sku-' || i FROM range(100, 160) t(i)",
                     branch="fix").status_code == 200
    assert world.sql("alice", "UPDATE items SET price = 555 WHERE id = 3").status_code == 200
    assert world.propose("agent", "fix").status_code == 200
    assert world.create("agent", "scratch", ttl_hours=2).status_code == 201
    assert world.sql("agent", "DELETE FROM customers WHERE id = 1", branch="scratch").status_code == 200
    assert world.create("alice", "elsewhere", db="other").status_code == 201
    assert world.sql("alice", "UPDATE customers SET city = 'bern' WHERE id = 2", branch="elsewhere",
                     db="other").status_code == 200
    assert world.propose("alice", "elsewhere", db="other").status_code == 200


def _inbox(page, url, world):
    login(page, url, world.tokens["rob"])
    page.wait_for_selector("#proposals tr[data-proposal]")
    assert "rob (admin)" in page.text_content("#who")
    rows = page.locator("#proposals tbody tr")
    assert rows.count() == 2  # shop's and other's, oldest first
    first = texts(page, "#proposals tbody tr:nth-child(1) td")
    assert first[:7] == ["shop/fix #1", "agent", "1", "61", "1", "0", "1"]
    assert texts(page, "#proposals tbody tr:nth-child(2) td")[:2] == ["other/elsewhere #2", "alice"]
    assert texts(page, "#expiring tbody tr td")[:2] == ["shop/scratch", "agent"]
    page.screenshot(path=str(ARTIFACTS / "review-inbox.png"))


def _proposal_view(page):
    # From the keyboard: the inbox's link opens the proposal.
    page.focus("#proposals tr[data-proposal='1'] a")
    page.keyboard.press("Enter")
    page.wait_for_selector("#changes tr[data-table='items']")
    assert texts(page, "#changes tr[data-table='items'] td") == ["items", "modified", "61", "1", "0", "1"]
    wait_text(page, "#diff-range", "rows 1–50 of 62")
    changed = page.locator("#diff td.changed")
    assert sorted((c.get_attribute("data-column"), c.text_content()) for c in changed.all()) == [
        ("name", "item 3 → renamed"), ("price", "30 → 999")]
    assert page.locator("#diff tr.insert").count() == 49
    page.click("#diff-next")
    wait_text(page, "#diff-range", "rows 51–62 of 62")
    assert texts(page, "#diff tbody tr:last-child td")[:3] == ["insert", "159", "bulk 159"]
    assert page.is_disabled("#diff-next")
    page.click("#diff-prev")
    wait_text(page, "#diff-range", "rows 1–50 of 62")
    assert "items: no column changes" in page.text_content("#schema")
    assert "PRIMARY KEY" in page.text_content("#schema pre")

    conflict = texts(page, "#preview tbody tr td")
    assert conflict == ["items", "id=3", "cell", "price", "30", "555", "999", "555", "999"]
    assert "without on_conflict the merge refused (merge_conflict); main wins: merges; branch wins: merges" in (
        page.text_content("#choices"))
    timeline = texts(page, "#timeline li")
    assert [t.split(" ", 2)[2] for t in timeline] == [
        "agent create", "agent write", "agent write", "agent write", "agent propose",
        "agent merge refused: branch_only_token (a branch-only token cannot merge: a merge writes main)"]
    history = texts(page, "#history tbody tr:first-child td")
    assert history[2:4] == ["alice", "write on main by alice"]
    assert texts(page, "#history tbody tr:last-child td")[4] == "seed"
    page.screenshot(path=str(ARTIFACTS / "review-proposal.png"))


def _merge(page, agent, world):
    before = world.rows("SELECT price, name FROM items WHERE id = 3")
    confirm(page, "#merge", "Escape")
    wait_text(page, "#outcome", "merge cancelled")
    confirm(page, "#merge", "Enter")
    assert "propose again with on_conflict main or branch" in refusal(page, "merge_conflict")
    assert world.rows("SELECT price, name FROM items WHERE id = 3") == before == [[555, "item 3"]]
    wait_text(page, "#timeline", "rob merge refused: merge_conflict")

    # The proposer, in its own window, proposes again with a policy; the reviewer's page still holds the
    # proposal it showed, which the server now refuses.
    agent.select_option("#policy", "branch")
    agent.click("#propose")
    wait_text(agent, "#outcome", "proposed as merge 3")
    wait_text(agent, "#summary", "proposal #3 by agent, on conflict: branch")
    confirm(page, "#merge", "Enter")
    assert "read the open one, then merge it by its id" in refusal(page, "proposal_replaced")
    page.click("#refresh")
    wait_text(page, "#outcome", "reloaded")
    wait_text(page, "#summary", "proposal #3 by agent, on conflict: branch")
    # Main moves after the reviewer read it: the merge names the main it showed and is refused.
    assert world.sql("alice", "UPDATE customers SET city = 'paris' WHERE id = 3").status_code == 200
    confirm(page, "#merge", "Enter")
    assert "then merge again" in refusal(page, "concurrent_write")
    page.click("#refresh")
    wait_text(page, "#outcome", "reloaded")
    assert texts(page, "#history tbody tr:first-child td")[2] == "alice"
    page.click("#merge")
    page.click("#confirm-ok")
    wait_text(page, "#outcome", "merged as snapshot")
    assert "(merge-fix-3)" in page.text_content("#outcome")
    wait_text(page, "#history tbody tr:first-child", "merge-fix-3")
    top = texts(page, "#history tbody tr:first-child td")
    assert top[2] == "rob" and "proposed by agent, approved by rob" in top[3]
    assert page.is_disabled("#merge") and page.is_disabled("#discard")
    assert world.rows("SELECT price, name FROM items WHERE id = 3") == [[999, "renamed"]]


def _discard(page, world):
    page.click("#to-inbox")
    page.wait_for_selector("#expiring tr[data-branch='scratch'] a")
    assert [p["branch"] for p in world.call("rob", "GET", "/api/branch/inbox").json()["proposals"]] == ["elsewhere"]
    page.click("#expiring tr[data-branch='scratch'] a")
    wait_text(page, "#review-title", "shop / scratch")
    wait_text(page, "#summary", "no open proposal")
    confirm(page, "#discard", "Escape")
    wait_text(page, "#outcome", "discard cancelled")
    assert world.call("rob", "GET", "/api/branch/shop/branches/scratch").json()["state"] == "live"
    confirm(page, "#discard", "Enter")
    wait_text(page, "#outcome", "discarded scratch")
    shown = world.call("rob", "GET", "/api/branch/shop/branches/scratch").json()
    assert (shown["state"], shown["ended_by"]) == ("discarded", "rob")
    assert world.rows("SELECT count(*) FROM customers") == [[3]]


def test_a_whole_review_with_two_tokens(tmp_path):
    if not pathlib.Path(CHROMIUM).exists():
        pytest.fail("Debian's chromium is missing: run scripts/setup.sh")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    world = World(tmp_path / "repo")
    try:
        _seed_review(world)
        with live_server(create_app(world.service, sweep=False)) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            page = window(browser, url)
            page.goto(url)
            page.fill("#token", "dft_0000000000000000_" + "x" * 43)
            page.click("#login-form button[type=submit]")
            wait_text(page, "#login-error", "unauthenticated")

            # The proposer's token: the proposal is in its inbox, and its merge is refused with the code.
            login(page, url, world.tokens["agent"])
            page.wait_for_selector("#proposals tr[data-proposal='1']")
            assert page.locator("#proposals tbody tr").count() == 1  # other is outside its scope
            page.click("#proposals tr[data-proposal='1'] a")
            page.wait_for_selector("#changes tr[data-table='items']")
            confirm(page, "#merge", "Enter")
            assert "a branch-only token cannot merge" in refusal(page, "branch_only_token")
            agent = page
            page = window(browser, url)  # the reviewer's, beside the agent's

            _inbox(page, url, world)
            _proposal_view(page)
            page.set_viewport_size({"width": 400, "height": 800})
            assert no_horizontal_overflow(page), "the proposal view overflows a 400 px window"
            page.screenshot(path=str(ARTIFACTS / "review-proposal-narrow.png"))
            page.set_viewport_size({"width": 1280, "height": 800})
            _merge(page, agent, world)
            _discard(page, world)
            page.click("#to-inbox")
            page.wait_for_selector("#proposals tr[data-proposal='2']")
            page.set_viewport_size({"width": 400, "height": 800})
            assert no_horizontal_overflow(page), "the inbox overflows a 400 px window"
            page.set_viewport_size({"width": 1280, "height": 800})
            logout(page)

            # A token scoped to the other database: none of shop, not in the inbox and not by address.
            login(page, url, world.tokens["outsider"])
            page.wait_for_selector("#proposals tr[data-proposal='2']")
            assert texts(page, "#proposals tbody tr td a") == ["other/elsewhere #2"]
            assert page.locator("#expiring tbody tr").count() == 0
            page.goto(url + "/#review/shop/fix")
            assert "does not name 'shop'" in refusal(page, "token_scope")
            browser.close()
        for name in ("review-inbox.png", "review-proposal.png"):
            assert (ARTIFACTS / name).stat().st_size > 10000
    finally:
        world.close()
