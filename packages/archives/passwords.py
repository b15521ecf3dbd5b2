"""Which of the offered passwords opens an archive whose files are encrypted but whose listing is not (zip -P,
7z -p without encrypted headers): the smallest encrypted file is decrypted in memory with each password in turn,
in the listing child, and its checksum decides; nothing is written out. RAR data needs the unrar binary to
decrypt, and zip AES (method 99) a library the project does not carry: those are left unchecked (None)."""

import zipfile
from pathlib import Path

from packages.archives.zip_format import ENCRYPTED_FLAG, zip_volumes_open
from packages.detection import SEVEN_ZIP, ZIP

# A file larger than this is not decrypted to check a password (a time and memory bound in the child).
CHECK_MAX_BYTES = 16 * 1024**2
_CHUNK = 1024**2


def password_that_opens(archive_type: str, volumes: list[Path], passwords: list[str]) -> int | None:
    """The index of the first password that decrypts the set's smallest encrypted file; None when none does, or
    when it cannot be checked."""
    if archive_type == ZIP:
        return _zip_password(volumes, passwords)
    if archive_type == SEVEN_ZIP:
        return _sevenzip_password(volumes, passwords)
    return None


def _zip_password(volumes: list[Path], passwords: list[str]) -> int | None:
    with zip_volumes_open(volumes) as stream, zipfile.ZipFile(stream) as archive:
        encrypted = [
            info
            for info in archive.infolist()
            if info.flag_bits & ENCRYPTED_FLAG and not info.is_dir() and info.file_size <= CHECK_MAX_BYTES
        ]
        if not encrypted:
            return None
        smallest = min(encrypted, key=lambda info: info.file_size)
        for index, password in enumerate(passwords):
            try:
                with archive.open(smallest, pwd=password.encode()) as data:
                    while data.read(_CHUNK):  # to the end: the CRC is checked there
                        pass
            except NotImplementedError:  # AES: zipfile cannot decrypt it
                return None
            except (RuntimeError, zipfile.BadZipFile, ValueError, OSError, EOFError):  # not this password
                continue
            return index
    return None


def _sevenzip_password(volumes: list[Path], passwords: list[str]) -> int | None:
    from py7zr.io import BytesIOFactory  # imported here: see packages/archives/listing.py

    from packages.archives.sevenzip_format import encrypted_names, sevenzip_open

    with sevenzip_open(volumes) as archive:
        sizes = {info.filename: info.uncompressed for info in archive.list() if not info.is_directory}
        encrypted = [
            name for name in encrypted_names(archive) if sizes.get(name, CHECK_MAX_BYTES + 1) <= CHECK_MAX_BYTES
        ]
    if not encrypted:
        return None
    smallest = min(encrypted, key=sizes.__getitem__)
    for index, password in enumerate(passwords):
        try:
            with sevenzip_open(volumes, password) as archive:
                archive.extract(targets=[smallest], factory=BytesIOFactory(CHECK_MAX_BYTES))
        except Exception:  # a wrong key decrypts to garbage, which fails as corrupt data or a bad checksum
            continue
        return index
    return None
