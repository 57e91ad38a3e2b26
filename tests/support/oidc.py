"""A small OpenID Connect provider on loopback, for the JWT and browser sign-in tests.

It serves what the console reads from a real issuer: the discovery document, the JWKS (RSA keys
made here with ``cryptography``), and for browsers the authorization-code flow with PKCE: an
``/authorize`` page with a sign-in form, ``/token`` (which checks the client secret and the PKCE
verifier against the challenge) and ``/userinfo``. Tokens are minted with PyJWT.

It counts what it is asked for, and can be made slow or failing path by path, as an issuer in
trouble is.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from django.test import Client

AUDIENCE = "mobkit-console"
CLIENT_ID = "console-client"
CLIENT_SECRET = "console-client-secret"
# Where a browser sign-in returns unless told otherwise: a page only reviewers may read.
QUEUE = "/console/memory/quarantine/"


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@dataclass
class Grant:
    """An authorization code waiting to be exchanged."""

    subject_claims: dict[str, Any]  # those the scopes asked for release
    client_id: str
    redirect_uri: str
    nonce: str | None
    challenge: str | None


@dataclass
class LoopbackIssuer:
    """The provider's state; ``url`` is its issuer identifier once ``start`` has run."""

    url: str = ""
    keys: dict[str, rsa.RSAPrivateKey] = field(default_factory=dict)
    published: list[str] = field(default_factory=list)  # the kids the JWKS lists
    fetches: Counter[str] = field(default_factory=Counter)  # GET path (after the issuer's) -> requests
    slow: dict[str, float] = field(default_factory=dict)  # GET path -> seconds before it answers
    failing: dict[str, int] = field(default_factory=dict)  # GET path -> the error status it answers
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # login -> claims
    # claim -> the scope that releases it (as a provider releases "groups" under a "groups" scope);
    # a claim not named here is released under "openid".
    scoped: dict[str, str] = field(default_factory=dict)
    grants: dict[str, Grant] = field(default_factory=dict)
    access_tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    token_requests: list[dict[str, str]] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _stopping: threading.Event = field(default_factory=threading.Event)
    _counting: threading.Lock = field(default_factory=threading.Lock)  # requests arrive on threads

    # --- keys and tokens ------------------------------------------------------------------

    def add_key(self, kid: str, *, publish: bool = True) -> str:
        self.keys[kid] = rsa_key()
        if publish:
            self.published.append(kid)
        return kid

    def rotate(self, kid: str) -> str:
        """A new signing key, published alone: the old one is withdrawn, as after a rotation."""
        self.add_key(kid, publish=False)
        self.published = [kid]
        return kid

    def mint(self, *, kid: str | None = None, key: rsa.RSAPrivateKey | None = None, **claims: Any) -> str:
        """A signed token: iss, aud, a 5-minute exp and a verified email unless ``claims`` say otherwise
        (None drops one)."""
        kid = kid or self.published[-1]
        now = int(time.time())
        body = {
            "iss": self.url, "aud": AUDIENCE, "iat": now, "nbf": now, "exp": now + 300, "email_verified": True, **claims
        }
        body = {name: value for name, value in body.items() if value is not None}
        return jwt.encode(body, key or self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def jwks(self) -> dict[str, Any]:
        keys = []
        for kid in self.published:
            jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.keys[kid].public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": "RS256"})
        return {"keys": keys}

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.url,
            "jwks_uri": f"{self.url}/jwks",
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "userinfo_endpoint": f"{self.url}/userinfo",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
        }

    # --- the server -----------------------------------------------------------------------

    def start(self) -> LoopbackIssuer:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                issuer._get(self)

            def do_POST(self) -> None:
                issuer._post(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A path of its own: the console keeps each issuer's keys per URL for the process, and a port
        # freed by an earlier test's issuer may come back with other keys under the same key ids.
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/realms/test-{secrets.token_hex(4)}"
        if not self.published:
            self.add_key("key-1")
        threading.Thread(target=self._server.serve_forever, name="test-oidc-issuer", daemon=True).start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # slow answers end now
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def _path(self, handler: BaseHTTPRequestHandler) -> tuple[str, dict[str, str]]:
        parts = urlsplit(handler.path)
        prefix = urlsplit(self.url).path
        return parts.path.removeprefix(prefix), {k: v[0] for k, v in parse_qs(parts.query).items()}

    def _get(self, handler: BaseHTTPRequestHandler) -> None:
        path, query = self._path(handler)
        with self._counting:
            self.fetches[path] += 1
        if self._stopping.wait(self.slow.get(path, 0)):
            return None
        if path in self.failing:
            return _send_json(handler, {"error": "unavailable"}, self.failing[path])
        if path == "/.well-known/openid-configuration":
            return _send_json(handler, self.discovery())
        if path == "/jwks":
            return _send_json(handler, self.jwks())
        if path == "/authorize":
            return self._authorize_form(handler, query)
        if path == "/userinfo":
            _, _, token = handler.headers.get("Authorization", "").partition(" ")
            claims = self.access_tokens.get(token)
            return _send_json(handler, claims) if claims else _send_json(handler, {"error": "invalid_token"}, 401)
        _send_json(handler, {"error": "not_found"}, 404)

    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        path, _ = self._path(handler)
        length = int(handler.headers.get("Content-Length") or 0)
        form = {k: v[0] for k, v in parse_qs(handler.rfile.read(length).decode()).items()}
        if path == "/authorize":
            return self._authorize(handler, form)
        if path == "/token":
            return self._token(handler, form)
        _send_json(handler, {"error": "not_found"}, 404)

    def _authorize_form(self, handler: BaseHTTPRequestHandler, query: dict[str, str]) -> None:
        hidden = "".join(
            f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">' for k, v in query.items()
        )
        page = (
            '<!doctype html><title>Test provider</title><link rel="icon" href="data:,"><h1>Test provider</h1>'
            f'<form method="post" action="{urlsplit(self.url).path}/authorize">{hidden}'
            '<label>Login <input name="login"></label><button type="submit">Continue</button></form>'
        )
        _send(handler, 200, "text/html; charset=utf-8", page.encode())

    def _authorize(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        claims = self.users.get(form.get("login", ""))
        if claims is None or form.get("client_id") != CLIENT_ID or form.get("response_type") != "code":
            return _send(handler, 400, "text/plain", b"unknown login or client")
        code = secrets.token_urlsafe(16)
        challenge = form.get("code_challenge") if form.get("code_challenge_method") == "S256" else None
        scopes = set(form.get("scope", "").split())
        released = {name: value for name, value in claims.items() if self.scoped.get(name, "openid") in scopes}
        self.grants[code] = Grant(released, CLIENT_ID, form["redirect_uri"], form.get("nonce"), challenge)
        location = form["redirect_uri"] + "?" + urlencode({"code": code, "state": form.get("state", "")})
        handler.send_response(302)
        handler.send_header("Location", location)
        handler.end_headers()

    def _token(self, handler: BaseHTTPRequestHandler, form: dict[str, str]) -> None:
        self.token_requests.append(form)
        grant = self.grants.pop(form.get("code", ""), None)
        if (
            grant is None
            or form.get("client_id") != grant.client_id
            or form.get("client_secret") != CLIENT_SECRET
            or form.get("redirect_uri") != grant.redirect_uri
        ):
            return _send_json(handler, {"error": "invalid_grant"}, 400)
        if grant.challenge is not None:
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if digest != grant.challenge:
                return _send_json(handler, {"error": "invalid_grant", "error_description": "PKCE"}, 400)
        access_token = secrets.token_urlsafe(24)
        self.access_tokens[access_token] = grant.subject_claims
        id_token = self.mint(aud=grant.client_id, nonce=grant.nonce, sub=grant.subject_claims["sub"], **{
            k: v for k, v in grant.subject_claims.items() if k != "sub"
        })
        _send_json(handler, {"access_token": access_token, "token_type": "Bearer", "id_token": id_token, "expires_in": 300})


def _send(handler: BaseHTTPRequestHandler, status: int, content_type: str, body: bytes) -> None:
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def _send_json(handler: BaseHTTPRequestHandler, data: Any, status: int = 200) -> None:
    _send(handler, status, "application/json", json.dumps(data).encode())


def sign_in_through_provider(client: Client, login: str, next_path: str = QUEUE) -> str:
    """Follow the flow: console → provider's form → provider → console callback; the console's last redirect."""
    start = client.get("/console/oidc/authenticate/", {"next": next_path})
    assert start.status_code == 302
    authorize = urlsplit(start["Location"])
    params = {k: v[0] for k, v in parse_qs(authorize.query).items()}
    assert params["code_challenge_method"] == "S256" and params["code_challenge"]
    approved = requests.post(
        f"{authorize.scheme}://{authorize.netloc}{authorize.path}", data={**params, "login": login},
        allow_redirects=False, timeout=10,
    )
    assert approved.status_code == 302, approved.text
    callback = urlsplit(approved.headers["Location"])
    finished = client.get(callback.path, {k: v[0] for k, v in parse_qs(callback.query).items()})
    assert finished.status_code == 302
    return finished["Location"]
