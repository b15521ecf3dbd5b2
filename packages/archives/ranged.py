"""A volume kept in an object store, read in place by HTTP range requests to its signed link."""

from urllib.parse import urlsplit

from packages.archives.entries import ListingError, RemoteVolume
from packages.archives.streams import SeekableReader

RANGE_BYTES = 256 * 1024  # one ranged read: a few headers' worth, not the payload


class RangedReader(SeekableReader):
    """One object read by HTTP range requests on one kept-alive connection; `fetched` counts the bytes."""

    def __init__(self, volume: RemoteVolume):
        import http.client  # here, not at the top: a staged set's listing child need not pay its ~17 ms

        parts = urlsplit(volume.url)
        connection = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.connection = connection(parts.hostname, parts.port, timeout=30)
        self.target = parts.path + (f"?{parts.query}" if parts.query else "")
        self.name = volume.name
        self.size = volume.size
        self.position = 0
        self.fetched = 0

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.size - self.position)
        if count <= 0:
            return 0
        end = self.position + count - 1
        self.connection.request("GET", self.target, headers={"Range": f"bytes={self.position}-{end}"})
        answer = self.connection.getresponse()
        data = answer.read()
        if answer.status != 206 or len(data) != count:
            raise ListingError(
                f"The object store answered HTTP {answer.status} ({len(data)} bytes) for bytes {self.position}-{end} "
                f"of {self.name}."
            )
        buffer[:count] = data
        self.position += count
        self.fetched += count
        return count

    def close(self) -> None:
        self.connection.close()
        super().close()
