"""What a replica source holds: its realm databases and the newest transaction of each (docs/replicas.md §2).

Litestream keeps one directory per database under the source, named as the agent host's
configuration named it (``team%3Ablue.sqlite3``), holding that database's LTX files, each named
``<first TXID>-<last TXID>.ltx`` in hex, one directory per compaction level:
``<db>/ltx/<level>/`` in a file or SFTP store, ``<db>/<level as 4 hex digits>/`` in S3. Listing a
source means listing those names; no SQLite file is ever read here.

The storage clients are the ones a Python engineer reaches for: boto3 for S3 (the same credential
chain as Litestream's AWS SDK) and paramiko for SFTP, both in the ``replicas`` extra.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from memory_panel.store.realms import REALM_SUFFIX
from memory_panel.replica_sources import redacted

LTX_SUFFIX = ".ltx"
LISTED_SCHEMES = ("file", "s3", "sftp")
# A store that does not answer within this long is reported, and listed again next time.
TIMEOUT_S = 10


class ReplicaSourceError(Exception):
    """A source that cannot be listed; said in the status file and the log, the others go on."""


def source_listing(url: str) -> dict[str, int | None]:
    """``{"team%3Ablue.sqlite3": newest TXID or None, …}``: every realm database the source holds."""
    scheme = urlsplit(url).scheme
    if scheme == "file":
        return _file_listing(url)
    if scheme == "s3":
        return _s3_listing(url)
    if scheme == "sftp":
        return _sftp_listing(url)
    raise ReplicaSourceError(
        f"{scheme}:// sources cannot be listed for realms: use file://, s3:// or sftp:// (docs/replicas.md §2)"
    )


def database_url(url: str, database: str) -> str:
    """The replica URL of one database in the source, as ``litestream restore`` takes it.

    Litestream reads a file:// URL's path byte for byte but decodes the path of any other URL, so
    there ``team%3Ablue.sqlite3`` is written ``team%253Ablue.sqlite3``, before any query.
    """
    if url.startswith("file://"):
        return f"{url}/{database}"
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{quote(database, safe='')}"))


def is_remote(url: str) -> bool:
    """Listing costs a request to another host (and on S3, money): listed less often (docs/replicas.md §3)."""
    return not url.startswith("file://")


def _newest(newest: dict[str, int | None], database: str, ltx_name: str) -> None:
    """Fold one LTX file name into its database's newest TXID; other names are not Litestream's."""
    if not database.endswith(REALM_SUFFIX) or not ltx_name.endswith(LTX_SUFFIX):
        return
    try:
        txid = int(ltx_name[: -len(LTX_SUFFIX)].rpartition("-")[2], 16)
    except ValueError:
        return
    newest[database] = max(newest.get(database) or 0, txid) or None


def _file_listing(url: str) -> dict[str, int | None]:
    root = Path(url[len("file://"):])
    if not root.is_absolute():
        raise ReplicaSourceError(f"{url}: a file:// source needs an absolute path (file:///srv/replicas)")
    if not root.is_dir():
        raise ReplicaSourceError(f"{url}: no such directory")
    newest: dict[str, int | None] = {}
    for database in root.iterdir():
        if database.name.endswith(REALM_SUFFIX) and (database / "ltx").is_dir():
            newest.setdefault(database.name, None)
            for ltx in (database / "ltx").glob(f"*/*{LTX_SUFFIX}"):
                _newest(newest, database.name, ltx.name)
    return newest


def _s3_listing(url: str) -> dict[str, int | None]:
    try:
        import boto3
        from botocore.config import Config
        from botocore.exceptions import BotoCoreError, ClientError
    except ImportError:
        raise ReplicaSourceError("s3:// sources need boto3: pip install -e '.[replicas]'") from None
    parts = urlsplit(url)
    bucket = parts.netloc.rpartition("@")[2]  # as written: hostname would lower-case a legacy bucket name
    query = dict(pair.split("=", 1) if "=" in pair else (pair, "") for pair in parts.query.split("&") if pair)
    endpoint = _with_scheme(unquote(query.get("endpoint", "")) or os.environ.get("LITESTREAM_S3_ENDPOINT", ""))
    # As Litestream does: a custom endpoint means path-style addressing unless the URL says otherwise.
    path_style = query.get("forcePathStyle", query.get("force-path-style", "true" if endpoint else "false"))
    prefix = unquote(parts.path).strip("/")
    prefix = f"{prefix}/" if prefix else ""
    newest: dict[str, int | None] = {}
    try:
        # A session of its own: boto3's shared default session is not safe across the listing threads.
        client = boto3.session.Session().client(
            "s3",
            endpoint_url=endpoint or None,
            region_name=unquote(query.get("region", "")) or None,
            aws_access_key_id=os.environ.get("LITESTREAM_ACCESS_KEY_ID") or None,
            aws_secret_access_key=os.environ.get("LITESTREAM_SECRET_ACCESS_KEY") or None,
            config=Config(s3={"addressing_style": "path" if path_style.lower() in ("1", "t", "true") else "auto"},
                          connect_timeout=TIMEOUT_S, read_timeout=TIMEOUT_S, retries={"max_attempts": 2}),
        )
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", ()):
                # <db>/<level>/<ltx>: a key of any other shape (a stray backup.sqlite3) names no database.
                database, _, rest = item["Key"][len(prefix):].partition("/")
                if "/" in rest:
                    _newest(newest, database, rest.rpartition("/")[2])
    except (BotoCoreError, ClientError, ValueError) as error:
        raise ReplicaSourceError(f"{redacted(url)}: {error}") from None
    return newest


def _with_scheme(endpoint: str) -> str:
    """An endpoint without a scheme, read as Litestream reads it: plain HTTP for a loopback,
    private-network or ``.local`` host, HTTPS for any other."""
    if not endpoint or endpoint.startswith(("http://", "https://")):
        return endpoint
    host = endpoint.rpartition("@")[2].split("/")[0].rsplit(":", 1)[0].strip("[]").lower()
    try:
        local = ipaddress.ip_address(host).is_private
    except ValueError:
        local = host == "localhost" or host.endswith((".local", ".localhost"))
    return f"{'http' if local else 'https'}://{endpoint}"


def _sftp_listing(url: str) -> dict[str, int | None]:
    try:
        import paramiko
    except ImportError:
        raise ReplicaSourceError("sftp:// sources need paramiko: pip install -e '.[replicas]'") from None
    parts = urlsplit(url)
    client = paramiko.SSHClient()
    # Litestream itself checks no host key given only a URL; the listing at least refuses a host
    # this console host's known_hosts does not vouch for (docs/replicas.md §2).
    client.load_system_host_keys()
    client.set_missing_host_key_policy(paramiko.RejectPolicy())
    root = unquote(parts.path).rstrip("/")  # "" is the server's root: listed as "/", joined as "/<db>"
    newest: dict[str, int | None] = {}
    try:
        port = parts.port or 22
    except ValueError:
        raise ReplicaSourceError(f"{redacted(url)}: the port is not a number") from None
    try:
        client.connect(parts.hostname, port=port, username=unquote(parts.username or ""),
                       password=unquote(parts.password) if parts.password else None,
                       timeout=TIMEOUT_S, banner_timeout=TIMEOUT_S, auth_timeout=TIMEOUT_S)
        with client.open_sftp() as sftp:
            for database in sftp.listdir(root or "/"):
                if not database.endswith(REALM_SUFFIX):
                    continue
                try:
                    levels = sftp.listdir(f"{root}/{database}/ltx")
                except OSError:
                    continue  # not (yet) a Litestream database
                newest.setdefault(database, None)
                for level in levels:
                    try:
                        ltx_names = sftp.listdir(f"{root}/{database}/ltx/{level}")
                    except OSError:
                        continue  # compacted away while we looked: the next listing sees the rest
                    for ltx_name in ltx_names:
                        _newest(newest, database, ltx_name)
    except paramiko.SSHException as error:
        said = str(error) or type(error).__name__
        if "known_hosts" in said:
            said += f" (add it for the user running follow_replicas: ssh-keyscan -p {port} {parts.hostname} >> ~/.ssh/known_hosts)"
        raise ReplicaSourceError(f"{redacted(url)}: {said}") from None
    except OSError as error:
        raise ReplicaSourceError(f"{redacted(url)}: {error.strerror or error}") from None
    finally:
        client.close()
    return newest
