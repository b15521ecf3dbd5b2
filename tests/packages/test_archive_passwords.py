"""Passwords offered to an archive's listing: encrypted headers (7z -mhe, RAR -hp) list once one of them opens
them, and for files encrypted under a readable listing (zip -P, 7z -p) the listing says which one decrypts them.
Archives made at test time by Debian's `zip` and `7z`; RAR from the fixtures (their password: "password")."""

from pathlib import Path

import pytest

from packages.archives import PasswordProtected, read_archive
from packages.detection import RAR, SEVEN_ZIP, ZIP
from tests.support.archives import PASSWORD, files, run, tool

RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"
RAR_PASSWORD = "password"


@pytest.fixture
def made(tmp_path) -> Path:
    """zip -P, 7z -p and 7z -p -mhe=on archives of the same two files."""
    (tmp_path / "in").mkdir()
    names = files(tmp_path / "in", ["dragon/body.stl", "dragon/wings.stl"], size=5000)
    run(tool("zip"), "-q", "-P", PASSWORD, str(tmp_path / "zipcrypto.zip"), *names, cwd=tmp_path / "in")
    run(tool("7z"), "a", f"-p{PASSWORD}", str(tmp_path / "data.7z"), *names, cwd=tmp_path / "in")
    run(tool("7z"), "a", f"-p{PASSWORD}", "-mhe=on", str(tmp_path / "headers.7z"), *names, cwd=tmp_path / "in")
    return tmp_path


def test_encrypted_7z_headers_list_with_the_password_that_opens_them(made):
    listing = read_archive(SEVEN_ZIP, [made / "headers.7z"], passwords=["wrong", "also wrong", PASSWORD])

    assert sorted(entry.path for entry in listing.entries) == ["dragon/body.stl", "dragon/wings.stl"]
    assert all(entry.encrypted for entry in listing.entries)
    assert listing.password_index == 2


def test_encrypted_rar_headers_list_with_the_password_that_opens_them():
    listing = read_archive(RAR, [RAR_FIXTURES / "rar5-hpsw.rar"], passwords=["nope", RAR_PASSWORD])

    assert [entry.path for entry in listing.entries] == ["stest1.txt", "stest2.txt"]
    assert listing.password_index == 1


def test_no_password_that_opens_the_headers_says_so(made):
    with pytest.raises(PasswordProtected) as refused:
        read_archive(SEVEN_ZIP, [made / "headers.7z"], passwords=["wrong", "hunter2"])

    assert "None of the 2 password(s) offered (caption, channel) opened it." in str(refused.value)
    with pytest.raises(PasswordProtected, match="encrypted headers; it needs a password.$"):
        read_archive(RAR, [RAR_FIXTURES / "rar5-hpsw.rar"])


@pytest.mark.parametrize(("kind", "name"), [(ZIP, "zipcrypto.zip"), (SEVEN_ZIP, "data.7z")])
def test_encrypted_files_under_a_readable_listing_say_which_password_decrypts_them(made, kind, name):
    right = read_archive(kind, [made / name], passwords=["wrong", PASSWORD])
    none_right = read_archive(kind, [made / name], passwords=["wrong", "Wrong2"])
    none_offered = read_archive(kind, [made / name])

    assert right.password_index == 1
    assert none_right.password_index is None and none_offered.password_index is None
    assert right.entries == none_right.entries == none_offered.entries, "the listing is the same either way"


def test_encrypted_rar_data_is_listed_and_its_password_left_unchecked():
    listing = read_archive(RAR, [RAR_FIXTURES / "rar5-psw.rar"], passwords=[RAR_PASSWORD])

    assert listing.entries and all(entry.encrypted for entry in listing.entries)
    assert listing.password_index is None, "decrypting RAR data needs the unrar binary: not claimed"
