"""Where media and raw files are kept: the local disk (MEDIA_ROOT), or an S3-compatible object store.

STORAGE_URL names the object store, credentials and bucket in one value, like DATABASE_URL:

    s3://KEY:SECRET@s3.eu-central-1.amazonaws.com/bucket?region=eu-central-1
    s3+http://KEY:SECRET@minio:9000/bucket/prefix      (no TLS: a server on a private network)

Empty: the local disk, which only the machine that wrote a file can read. Every machine of one Stashcast
must name the same bucket (docs/operations.md). Without KEY:SECRET, boto3 finds credentials its own way
(AWS_ACCESS_KEY_ID…, an instance role).
"""

from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

S3_BACKEND = "storages.backends.s3.S3Storage"
FILESYSTEM_BACKEND = "django.core.files.storage.FileSystemStorage"
_PROTOCOLS = {"s3": "https", "s3+https": "https", "s3+http": "http"}
_QUERY = {"region", "addressing_style"}


@dataclass(frozen=True)
class ObjectStore:
    endpoint_url: str
    bucket: str
    prefix: str = ""
    access_key: str | None = None
    secret_key: str | None = None
    region: str | None = None
    addressing_style: str = "path"

    def client(self, **config):
        """A boto3 S3 client for this store (for what django-storages does not do: backups, the health check);
        `config`: botocore Config options (timeouts, retries)."""
        import boto3
        from botocore.config import Config

        return boto3.client(
            "s3",
            endpoint_url=self.endpoint_url,
            aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            region_name=self.region,
            config=Config(signature_version="s3v4", s3={"addressing_style": self.addressing_style}, **config),
        )


def object_store_parse(url: str) -> ObjectStore:
    """The object store a STORAGE_URL names; ImproperlyConfigured says what is wrong with it."""
    parts = urlsplit(url)
    protocol = _PROTOCOLS.get(parts.scheme)
    if protocol is None:
        raise ImproperlyConfigured(
            f"STORAGE_URL must start with s3:// (or s3+http:// for a server without TLS); it starts with "
            f"{parts.scheme + '://' if parts.scheme else 'no scheme'}. Leave it empty to keep files on the local disk."
        )
    if not parts.hostname:
        raise ImproperlyConfigured("STORAGE_URL names no server: s3://KEY:SECRET@HOST[:PORT]/BUCKET.")
    bucket, _, prefix = parts.path.strip("/").partition("/")
    if not bucket:
        raise ImproperlyConfigured("STORAGE_URL names no bucket: s3://KEY:SECRET@HOST[:PORT]/BUCKET.")
    if bool(parts.username) != bool(parts.password):
        raise ImproperlyConfigured("STORAGE_URL has a key without a secret (or the other way round): KEY:SECRET@.")
    try:
        port = parts.port
    except ValueError:
        raise ImproperlyConfigured(f"STORAGE_URL's port is not a number: {parts.netloc.rpartition('@')[2]}.") from None
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    unknown = sorted(set(query) - _QUERY)
    if unknown:
        raise ImproperlyConfigured(
            f"STORAGE_URL has unknown options {', '.join(unknown)}; known: {', '.join(sorted(_QUERY))}."
        )
    style = query.get("addressing_style", "path")
    if style not in ("path", "virtual"):
        raise ImproperlyConfigured(f"STORAGE_URL: addressing_style={style!r}; use path or virtual.")
    return ObjectStore(
        endpoint_url=f"{protocol}://{parts.hostname}" + (f":{port}" if port else ""),
        bucket=bucket,
        prefix=prefix.strip("/"),
        access_key=unquote(parts.username) if parts.username else None,
        secret_key=unquote(parts.password) if parts.password else None,
        region=query.get("region") or None,
        addressing_style=style,
    )


def default_storage_for(url: str) -> dict:
    """The STORAGES["default"] entry for a STORAGE_URL (empty: the local disk under MEDIA_ROOT)."""
    if not url:
        return {"BACKEND": FILESYSTEM_BACKEND}
    store = object_store_parse(url)
    return {
        "BACKEND": S3_BACKEND,
        "OPTIONS": {
            "bucket_name": store.bucket,
            "location": store.prefix,
            "endpoint_url": store.endpoint_url,
            "access_key": store.access_key,
            "secret_key": store.secret_key,
            "region_name": store.region,
            "addressing_style": store.addressing_style,
            "signature_version": "s3v4",
            # Two reminder pictures of the same name must not overwrite each other, as on the local disk.
            "file_overwrite": False,
            "default_acl": None,
            # Signed links let the archive listing (a child process without credentials) read ranges.
            "querystring_auth": True,
            "querystring_expire": 3600,
            # A whole object read through the storage (a reminder's media) spools to disk beyond this.
            "max_memory_size": 8 * 1024 * 1024,
        },
    }
