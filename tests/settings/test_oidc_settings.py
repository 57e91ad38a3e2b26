"""The OpenID Connect variables of README's configuration section: the scopes a browser sign-in asks
for, and whether an email subject needs email_verified (docs/audit-and-oidc.md §4, §6)."""

from __future__ import annotations

from tests.support.environment import setting_under_env


def test_the_scopes_default_to_openid_email_profile_and_always_include_openid(tmp_path):
    assert setting_under_env(tmp_path, "OIDC_RP_SCOPES") == "openid email profile"
    assert setting_under_env(tmp_path, "OIDC_RP_SCOPES", MOBKIT_OIDC_SCOPES="openid email groups") == "openid email groups"
    assert setting_under_env(tmp_path, "OIDC_RP_SCOPES", MOBKIT_OIDC_SCOPES=" email  groups openid ") == "openid email groups"


def test_email_verified_is_required_unless_turned_off(tmp_path):
    assert setting_under_env(tmp_path, "MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED") is True
    assert setting_under_env(tmp_path, "MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED", MOBKIT_OIDC_REQUIRE_EMAIL_VERIFIED="0") is False
