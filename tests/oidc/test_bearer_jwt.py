"""JWT bearer tokens from an OpenID Connect issuer served on loopback (docs/audit-and-oidc.md §4, §5):
minted here, checked by the console against the issuer's discovery document and JWKS."""

from __future__ import annotations

import time

import jwt
import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from mobkit_console.accounts.channels import TokenAuthMiddleware
from mobkit_console.accounts.oidc import identity_from_claims
from mobkit_console.accounts.tokens import token_issue, user_for_subject
from tests.support.audit import audit_entries, entries_for
from tests.support.clients import signed_in_client, user_with_subject
from tests.support.oidc import rsa_key
from tests.support.postures import REVIEWER, ROOT
from tests.support.rpc import PANEL, call
from tests.support.worlds import QUARANTINED_BODY

pytestmark = pytest.mark.django_db

EXPERIENCE = "/console/experience"
ANA = "ana@example.test"


def _get(path: str, token: str, **query: str):
    return Client().get(path, query, HTTP_AUTHORIZATION=f"Bearer {token}")


def _refused(response) -> None:
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith('Bearer error="invalid_token"')
    assert response.json()["error"] == "invalid_token"


def test_a_good_token_signs_in_its_email_claim(oidc_issuer, world):
    response = _get(EXPERIENCE, oidc_issuer.mint(sub="u-1", email=ANA))
    assert response.status_code == 200
    assert response.json()["access"]["subject"] == ANA
    rpc = call(Client(), "mobkit/access/status", HTTP_AUTHORIZATION=f"Bearer {oidc_issuer.mint(email=ANA)}")
    assert rpc.result["subject"] == ANA


def test_the_subject_claim_is_configurable(oidc_issuer, world, settings):
    settings.MOBKIT_OIDC_SUBJECT_CLAIM = "preferred_username"
    response = _get(EXPERIENCE, oidc_issuer.mint(email=ANA, preferred_username="ana"))
    assert response.json()["access"]["subject"] == "ana"
    _refused(_get(EXPERIENCE, oidc_issuer.mint(email=ANA)))  # no such claim: no subject


@pytest.mark.parametrize("claims", [
    pytest.param({"exp": int(time.time()) - 120}, id="expired"),
    pytest.param({"aud": "someone-else"}, id="wrong-audience"),
    pytest.param({"iss": "http://127.0.0.1:1/realms/other"}, id="wrong-issuer"),
    pytest.param({"nbf": int(time.time()) + 600}, id="not-yet-valid"),
    pytest.param({"exp": None}, id="no-expiry"),
    pytest.param({"aud": None}, id="no-audience"),
])
def test_expired_foreign_or_incomplete_tokens_are_401_invalid_token(oidc_issuer, world, claims):
    _refused(_get(EXPERIENCE, oidc_issuer.mint(email=ANA, **claims)))


@pytest.mark.parametrize("claims", [
    pytest.param({"exp": str(int(time.time()) + 300)}, id="exp-a-string"),
    pytest.param({"exp": 10**30}, id="exp-1e30"),
    pytest.param({"exp": 1e30}, id="exp-1e30-float"),
    pytest.param({"exp": True}, id="exp-a-boolean"),
    pytest.param({"nbf": "0"}, id="nbf-a-string"),
    pytest.param({"iat": [int(time.time())]}, id="iat-a-list"),
    pytest.param({"iat": -1}, id="iat-before-1970"),
])
def test_dates_that_are_no_numeric_date_are_401(oidc_issuer, world, claims):
    _refused(_get(EXPERIENCE, oidc_issuer.mint(email=ANA, **claims)))


@pytest.mark.parametrize("verified", [
    pytest.param(False, id="false"),
    pytest.param(None, id="absent"),
    pytest.param("false", id="the-string-false"),
])
def test_an_unverified_email_is_no_subject(oidc_issuer, world, verified):
    response = _get(EXPERIENCE, oidc_issuer.mint(email=ROOT, email_verified=verified))
    _refused(response)
    assert "email_verified" in response.json()["error_description"]


def test_email_verified_is_required_of_the_email_claim_only_and_can_be_waived(oidc_issuer, world, settings):
    assert _get(EXPERIENCE, oidc_issuer.mint(email=ANA, email_verified="true")).status_code == 200  # Cognito's userinfo
    settings.MOBKIT_OIDC_SUBJECT_CLAIM = "preferred_username"
    assert _get(EXPERIENCE, oidc_issuer.mint(preferred_username="ana", email_verified=False)).status_code == 200
    settings.MOBKIT_OIDC_SUBJECT_CLAIM = "email"
    settings.MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED = False  # a provider that never sends it
    response = _get(EXPERIENCE, oidc_issuer.mint(email=ANA, email_verified=None))
    assert response.json()["access"]["subject"] == ANA


@pytest.mark.parametrize("subject", [
    pytest.param("ana\x00@example.test", id="nul"),
    pytest.param("ana@example.test\n2026-01-01 root signed in", id="line-break"),
    pytest.param("\x1b[31mroot@example.test", id="escape"),
    pytest.param("ana\u202e@example.test", id="right-to-left-override"),
    pytest.param("ana\u2028@example.test", id="line-separator"),
])
def test_a_subject_with_a_control_character_is_401_and_no_user(oidc_issuer, world, subject):
    users = get_user_model().objects.count()
    response = _get(EXPERIENCE, oidc_issuer.mint(email=subject))
    _refused(response)
    assert "control" in response.json()["error_description"]
    assert get_user_model().objects.count() == users  # no console user for it (PostgreSQL: no 500)


def test_groups_with_a_control_character_are_no_groups(oidc_issuer, settings):
    settings.MOBKIT_OIDC_GROUPS_CLAIM = "groups"
    claims = {"email": ANA, "email_verified": True, "groups": ["reviewers", "reviewers\x00", "ops\n", "\u202eops"]}
    assert identity_from_claims(claims).groups == {"reviewers"}


def test_a_token_signed_with_another_key_is_401(oidc_issuer, world):
    forged = oidc_issuer.mint(email=ANA, key=rsa_key())  # names the published kid, signed elsewhere
    _refused(_get(EXPERIENCE, forged))


def test_unsigned_and_hmac_tokens_are_401(oidc_issuer, world):
    kid = oidc_issuer.published[-1]
    claims = {"iss": oidc_issuer.url, "aud": "mobkit-console", "exp": int(time.time()) + 300, "email": ANA}
    for token in (
        jwt.encode(claims, None, algorithm="none", headers={"kid": kid}),
        jwt.encode(claims, "a-shared-secret-long-enough-for-hs256!!", algorithm="HS256", headers={"kid": kid}),
    ):
        _refused(_get(EXPERIENCE, token))


def test_a_rotated_key_is_fetched_when_a_token_names_it(oidc_issuer, world):
    old = oidc_issuer.mint(email=ANA)
    assert _get(EXPERIENCE, old).status_code == 200
    assert oidc_issuer.fetches["/jwks"] == 1
    assert _get(EXPERIENCE, oidc_issuer.mint(email=ANA)).status_code == 200
    assert oidc_issuer.fetches["/jwks"] == 1  # cached

    oidc_issuer.rotate("key-2")
    assert _get(EXPERIENCE, oidc_issuer.mint(email=ANA)).status_code == 200
    assert oidc_issuer.fetches["/jwks"] == 2  # the new kid made the console fetch the JWKS again
    _refused(_get(EXPERIENCE, old))  # the withdrawn key no longer signs anything


def test_the_groups_claim_maps_to_access_toml_groups(oidc_issuer, world, posture, settings):
    posture("reviewer")
    settings.MOBKIT_OIDC_GROUPS_CLAIM = "groups"
    token = oidc_issuer.mint(email=ANA, groups=["reviewers", "not-in-access-toml"])
    assert _get(EXPERIENCE, token).json()["access"]["groups"] == ["reviewers"]
    record = call(Client(), PANEL + "record", {"memory_id": world["quarantined"].id}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert record.result["record"]["body"] == QUARANTINED_BODY

    without = oidc_issuer.mint(email=ANA)
    denied = call(Client(), PANEL + "record", {"memory_id": world["quarantined"].id}, HTTP_AUTHORIZATION=f"Bearer {without}")
    assert denied.error["data"]["action"] == "memory.quarantine.review"


def test_exports_and_the_event_stream_take_jwts(oidc_issuer, world):
    token = oidc_issuer.mint(email=ANA)
    export = _get("/console/memory/records.ndjson", token)
    assert export.status_code == 200 and b"".join(export.streaming_content)
    _refused(_get("/console/memory/records.ndjson", oidc_issuer.mint(email=ANA, aud="other")))
    _refused(_get("/console/events/stream", oidc_issuer.mint(email=ANA, aud="other")))


def test_console_tokens_keep_working_beside_jwts(oidc_issuer, world):
    token = token_issue(user=user_for_subject("robot@example.test"))
    assert _get(EXPERIENCE, token).json()["access"]["subject"] == "robot@example.test"
    assert _get(EXPERIENCE, "mkc_unknown").status_code == 401  # the console's own 401, as before


def test_jwt_callers_and_refused_tokens_are_in_the_audit_log(oidc_issuer, world, posture):
    posture("reviewer")
    call(Client(), PANEL + "record", {"memory_id": world["quarantined"].id},
         HTTP_AUTHORIZATION=f"Bearer {oidc_issuer.mint(email=REVIEWER)}")
    _get(EXPERIENCE, oidc_issuer.mint(email=ANA, aud="other"))

    entries = audit_entries(signed_in_client(user_with_subject(ROOT)))
    [read] = entries_for(entries, "quarantine.body.read")
    assert (read["subject"], read["sign_in"]) == (REVIEWER, "jwt")
    [failed] = [e for e in entries_for(entries, "sign_in") if e["outcome"] == "failed"]
    assert failed["detail"]["method"] == "jwt" and "audience" in failed["detail"]["reason"].lower()


@pytest.mark.django_db(transaction=True)
async def test_sockets_take_jwts_and_refuse_bad_ones(oidc_issuer, world):
    async def who(token: str) -> str | None:
        seen: list = []

        async def app(scope, receive, send):
            seen.append(scope["user"])
            await send({"type": "websocket.close"})

        communicator = WebsocketCommunicator(TokenAuthMiddleware(app), f"/ws/console/events/?auth_token={token}")
        await communicator.connect()
        await communicator.disconnect()
        user = seen[0]
        return user.get_username() if user.is_authenticated else None

    assert await who(oidc_issuer.mint(email=ANA)) == ANA
    assert await who(oidc_issuer.mint(email=ANA, exp=int(time.time()) - 120)) is None


def test_a_subject_too_long_for_a_console_user_is_401(oidc_issuer, world):
    _refused(_get(EXPERIENCE, oidc_issuer.mint(email="a" * 140 + "@example.test")))


def test_an_unreachable_issuer_is_503_not_a_guess(oidc_issuer, world, settings):
    settings.MOBKIT_OIDC_ISSUER = "http://127.0.0.1:9/realms/gone"  # nothing listens on the discard port
    token = oidc_issuer.mint(email=ANA, iss=settings.MOBKIT_OIDC_ISSUER)
    response = _get(EXPERIENCE, token)
    assert response.status_code == 503 and response.json()["error"] == "issuer_unavailable"
