"""The browser toolbox's quiet page (tests/support/browser.py) fails a test for what its console says, a script
error or an answer that fails, but lets through the refusals a test expects."""

import pytest

from tests.support.browser import log_in_as, quiet_page, team_add

pytestmark = pytest.mark.browser


def test_a_console_warning_a_script_error_and_a_failed_answer_fail_the_test(live_server, transactional_db, browser):
    with pytest.raises(AssertionError) as failed, quiet_page(browser, size="phone") as page:
        page.goto(f"{live_server.url}/login/")
        page.evaluate("console.warn('the page is unwell')")
        with page.expect_event("pageerror"):
            page.evaluate("setTimeout(() => { throw new Error('a script broke') })")
        page.goto(f"{live_server.url}/no-such-page/")
    said = str(failed.value)
    assert "the page is unwell" in said and "a script broke" in said and "404" in said


def test_an_expected_refusal_passes(live_server, transactional_db, django_user_model, browser):
    team_add(django_user_model)
    with quiet_page(browser, size="wide", refusals=(403,)) as page:
        log_in_as(page, live_server.url, "victor")
        assert page.goto(f"{live_server.url}/people/").status == 403
