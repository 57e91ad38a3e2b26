"""An issuer that is slow or failing (docs/audit-and-oidc.md §4): its discovery document and JWKS are
fetched once for every caller that needs them at that moment, not again until the cool-down has
passed, and a caller whose key is already cached, or who holds a console token, never waits."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.test import Client

from mobkit_console.accounts.oidc import FETCH_TIMEOUT_S, InvalidToken, IssuerUnavailable, token_identity
from mobkit_console.accounts.tokens import bearer_sign_in, token_issue, user_for_subject
from tests.support.litestream import wait_for
from tests.support.oidc import rsa_key

pytestmark = pytest.mark.django_db

EXPERIENCE = "/console/experience"
ANA = "ana@example.test"
DISCOVERY = "/.well-known/openid-configuration"
HANGS_S = 8.0  # longer than the console waits for any fetch
# A generous bound for a sign-in that waits for nobody: it takes milliseconds. The sign-in is timed,
# not the page, whose rendering on a loaded test machine says nothing about the issuer.
FAST_S = 1.0


def _status(token: str) -> int:
    return Client().get(EXPERIENCE, HTTP_AUTHORIZATION=f"Bearer {token}").status_code


def _timed(check: Callable[[str], object], token: str) -> tuple[str, float]:
    """How ``check(token)`` ends (``accepted``, or the refusal's name) and how long its caller waited."""
    started = time.monotonic()
    try:
        check(token)
        outcome = "accepted"
    except (InvalidToken, IssuerUnavailable) as error:
        outcome = type(error).__name__
    return outcome, time.monotonic() - started


def _refusal(token: str) -> tuple[str, float]:
    return _timed(token_identity, token)


def _sign_in(token: str) -> tuple[str, float]:
    """A caller's sign-in as the HTTP and socket middlewares run it, timed."""
    return _timed(bearer_sign_in, token)


def _key_cached_and_cool_down_over(issuer, settings) -> None:
    """key-1 cached, and the (short) cool-down after that fetch over: the next unknown kid fetches.
    The cool-down runs from the end of the last fetch: a test lengthens it once its fetch is done."""
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 0.2
    assert _status(issuer.mint(email=ANA)) == 200
    time.sleep(0.3)


def _made_up_kids(issuer, count: int) -> list[str]:
    forger = rsa_key()
    return [issuer.mint(kid=f"made-up-{n}", key=forger, email=ANA) for n in range(count)]


def test_made_up_kids_against_a_healthy_issuer_wait_out_the_cool_down(oidc_issuer, world, settings):
    _key_cached_and_cool_down_over(oidc_issuer, settings)
    first, *others = _made_up_kids(oidc_issuer, 200)
    assert _refusal(first)[0] == "InvalidToken"  # the key set, fetched again, lacks it: 401
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 30.0
    assert {outcome for outcome, _ in map(_refusal, others)} == {"InvalidToken"}
    assert oidc_issuer.fetches["/jwks"] == 2


def test_a_hanging_key_set_is_fetched_once_and_keeps_no_cached_key_waiting(oidc_issuer, world, settings):
    _key_cached_and_cool_down_over(oidc_issuer, settings)
    oidc_issuer.slow["/jwks"] = HANGS_S

    with ThreadPoolExecutor(30) as pool:
        refusals = pool.map(_refusal, _made_up_kids(oidc_issuer, 30))
        wait_for(lambda: oidc_issuer.fetches["/jwks"] == 2, timeout_s=5, what="the made-up kids' fetch")
        # While that fetch hangs, a token signed with the cached key signs in at once.
        outcome, waited = _sign_in(oidc_issuer.mint(email=ANA))
        assert outcome == "accepted" and waited < FAST_S
        assert _status(oidc_issuer.mint(email=ANA)) == 200
        refusals = list(refusals)
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 30.0

    assert {outcome for outcome, _ in refusals} == {"IssuerUnavailable"}  # the token may be good: 503
    assert max(waited for _, waited in refusals) < FETCH_TIMEOUT_S + FAST_S  # one shared wait, not 30
    assert oidc_issuer.fetches["/jwks"] == 2
    # Cooling down: more made-up kids are refused at once, without asking the issuer.
    assert all(waited < FAST_S for _, waited in map(_refusal, _made_up_kids(oidc_issuer, 5)))
    assert oidc_issuer.fetches["/jwks"] == 2


def test_a_failing_key_set_cools_down_and_is_asked_again_after_it(oidc_issuer, world, settings):
    _key_cached_and_cool_down_over(oidc_issuer, settings)
    oidc_issuer.failing["/jwks"] = 503

    first, *others = _made_up_kids(oidc_issuer, 30)
    assert _status(first) == 503
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 30.0
    assert [_status(token) for token in others] == [503] * 29
    assert oidc_issuer.fetches["/jwks"] == 2
    assert _status(oidc_issuer.mint(email=ANA)) == 200  # the cached key still verifies

    # The issuer recovers with a new key; once the cool-down is over, its first token fetches it.
    del oidc_issuer.failing["/jwks"]
    oidc_issuer.rotate("key-2")
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 0.5
    time.sleep(0.6)
    assert _status(oidc_issuer.mint(email=ANA)) == 200
    assert oidc_issuer.fetches["/jwks"] == 3


def test_a_stale_key_set_is_read_again_behind_the_callers_back(oidc_issuer, world, settings):
    settings.MOBKIT_OIDC_KEYS_MAX_AGE_S = 0.2
    assert _status(oidc_issuer.mint(email=ANA)) == 200
    oidc_issuer.slow["/jwks"] = HANGS_S
    time.sleep(0.3)

    outcome, waited = _sign_in(oidc_issuer.mint(email=ANA))
    assert outcome == "accepted" and waited < FAST_S  # the old keys serve while the refresh hangs
    assert _status(oidc_issuer.mint(email=ANA)) == 200
    wait_for(lambda: oidc_issuer.fetches["/jwks"] == 2, timeout_s=2, what="the background refresh")


def test_an_unreachable_discovery_at_first_use_is_asked_once_and_console_tokens_never_wait(
    oidc_issuer, world, settings
):
    settings.MOBKIT_OIDC_FETCH_COOLDOWN_S = 30.0
    oidc_issuer.slow[DISCOVERY] = HANGS_S
    console_token = token_issue(user=user_for_subject("robot@example.test"))
    tokens = [oidc_issuer.mint(email=ANA) for _ in range(16)]

    with ThreadPoolExecutor(16) as pool:
        refusals = pool.map(_refusal, tokens)
        wait_for(lambda: oidc_issuer.fetches[DISCOVERY] == 1, timeout_s=5, what="the discovery fetch")
        outcome, waited = _sign_in(console_token)
        assert outcome == "accepted" and waited < FAST_S
        assert _status(console_token) == 200
        refusals = list(refusals)

    assert {outcome for outcome, _ in refusals} == {"IssuerUnavailable"}
    assert max(waited for _, waited in refusals) < FETCH_TIMEOUT_S + FAST_S
    assert oidc_issuer.fetches[DISCOVERY] == 1
    outcome, waited = _sign_in(oidc_issuer.mint(email=ANA))
    assert outcome == "IssuerUnavailable" and waited < FAST_S  # cooling down: not asked again
    assert _status(oidc_issuer.mint(email=ANA)) == 503
    assert oidc_issuer.fetches[DISCOVERY] == 1
