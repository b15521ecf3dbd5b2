"""7z: the header block; a volume set (.7z.001…) is a plain byte split, read as one stream."""

import contextlib

import multivolumefile
import py7zr

from packages.archives.entries import Entry, Limits, PasswordProtected, entries_check, entry_count_check, entry_make
from packages.archives.streams import volume_base

_7Z_AES = b"\x06\xf1\x07\x01"


@contextlib.contextmanager
def sevenzip_open(source, password: str | None = None):
    """A 7z archive from staged volumes (a list of paths) or one stream; encrypted headers say a password is needed
    (a wrong one fails as the bytes it decrypts to do)."""
    try:
        with contextlib.ExitStack() as stack:
            if isinstance(source, list) and len(source) > 1:
                source = stack.enter_context(multivolumefile.open(volume_base(source[0]), mode="rb"))
            elif isinstance(source, list):
                source = source[0]
            yield stack.enter_context(py7zr.SevenZipFile(source, mode="r", password=password))
    except py7zr.exceptions.PasswordRequired:
        raise PasswordProtected("The 7z archive has encrypted headers; it needs a password.") from None


def sevenzip_list(source, limits: Limits, password: str | None = None) -> list[Entry]:
    with sevenzip_open(source, password) as archive:
        return sevenzip_entries(archive, limits)


def encrypted_names(archive: py7zr.SevenZipFile) -> set[str]:
    """An entry is encrypted when the folder (compressed block) holding its data goes through AES."""
    return {
        file.filename
        for file in archive.files
        if file.folder is not None and any(coder["method"] == _7Z_AES for coder in file.folder.coders)
    }


def sevenzip_entries(archive: py7zr.SevenZipFile, limits: Limits) -> list[Entry]:
    infos = archive.list()
    entry_count_check(len(infos), limits)
    encrypted = encrypted_names(archive)
    return entries_check(
        [
            entry_make(
                info.filename,
                info.uncompressed,
                info.compressed,
                info.crc32,
                link=info.is_symlink,
                limits=limits,
                encrypted=info.filename in encrypted,
            )
            for info in infos
            if not info.is_directory
        ],
        limits,
    )
