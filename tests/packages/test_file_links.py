"""One file out of a kept archive by a signed, expiring, audited link: a zip member read in place (its local header
and data only), 7z and RAR members written out by the listing child; archives made by Debian's `zip` and `7z`, and
real RAR files."""

import io
import zipfile

import pytest
from django.core.files.storage import default_storage
from django.test import Client

from core.models import AuditEntry
from packages.archives import RemoteVolume
from packages.archives.members import MemberUnreadable, zip_member_chunks
from packages.archives.ranged import RangedReader
from packages.models import PackageFile
from packages.raw_objects import storage_is_local
from packages.services.file_links import file_bytes
from tests.support.archives import RAR_FIXTURES, tool
from tests.support.factories import package_with_raw_files
from tests.support.kits import MODEL, listed_package, packed

pytestmark = pytest.mark.django_db


def fetched(operator, package, path: str) -> tuple[int, bytes]:
    file = PackageFile.objects.get(package=package, path=path)
    response = operator.get(f"/packages/{package.pk}/files/{file.pk}/get")
    assert response.status_code == 302, response.content
    link = response["Location"]
    assert link.startswith("/packages/file/")
    answer = Client().get(link)  # no login: the signature stands for the person
    return answer.status_code, b"".join(answer.streaming_content) if answer.streaming else answer.content


def test_a_zip_member_comes_out_whole_and_both_steps_are_audited(storage, operator, tmp_path):
    package = listed_package(tmp_path, "kit.zip", packed(tmp_path, "kit.zip", tool("zip"), "-q", "-r"), "zip")

    status, data = fetched(operator, package, "kit/ball.stl")

    assert (status, data) == (200, MODEL)
    actions = list(AuditEntry.objects.order_by("pk").values_list("action", flat=True))
    assert actions[-2].startswith(f"file link made for kit/ball.stl of package {package.pk}")
    assert actions[-1] == f"file kit/ball.stl read out of package {package.pk} by a link of operator"
    paths = list(AuditEntry.objects.values_list("path", flat=True))
    assert not any("/packages/file/" in text for text in actions + paths), "no signed link in the audit trail"


@pytest.mark.parametrize("switch", ["-ms=on", "-ms=off"])
def test_a_7z_member_solid_or_not_comes_out_through_the_child(storage, operator, tmp_path, switch):
    data = packed(tmp_path, "kit.7z", tool("7z"), "a", "-bd", switch)
    package = listed_package(tmp_path, "kit.7z", data, "7z")

    assert fetched(operator, package, "kit/ball.stl") == (200, MODEL)


def test_a_rar_member_comes_out_and_one_no_tool_here_can_inflate_says_why(storage, operator, tmp_path):
    stored = listed_package(tmp_path, "subdirs.rar", (RAR_FIXTURES / "rar3-subdirs.rar").read_bytes(), "rar")
    assert fetched(operator, stored, "sub/dir1/file1.txt") == (200, b"file1\n")

    solid = listed_package(tmp_path / "solid", "solid.rar", (RAR_FIXTURES / "rar5-solid.rar").read_bytes(), "rar")
    status, body = fetched(operator, solid, "stest1.txt")
    assert status == 422
    assert b"cannot be read out of the archive" in body


def test_a_changed_link_and_a_viewer_are_refused(storage, operator, client_as_viewer, tmp_path):
    package = listed_package(tmp_path, "kit.zip", packed(tmp_path, "kit.zip", tool("zip"), "-q", "-r"), "zip")
    file = PackageFile.objects.get(package=package, path="kit/ball.stl")
    link = operator.get(f"/packages/{package.pk}/files/{file.pk}/get")["Location"]

    assert Client().get(link.replace("/packages/file/", "/packages/file/x")).status_code == 403
    assert client_as_viewer.get(f"/packages/{package.pk}/files/{file.pk}/get").status_code == 403


class CountingReader(io.FileIO):
    """A file that counts the bytes read from it."""

    read_bytes = 0

    def read(self, size=-1):
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def test_only_the_members_header_and_data_are_read(tmp_path):
    """The member's compressed bytes plus its local header: nothing else of the archive."""
    packed(tmp_path, "kit.zip", tool("zip"), "-q", "-r")
    with zipfile.ZipFile(tmp_path / "kit.zip") as archive:
        info = archive.getinfo("kit/ball.stl")
    with CountingReader(tmp_path / "kit.zip") as reader:
        chunks = zip_member_chunks(
            reader,
            header_offset=info.header_offset,
            compressed_size=info.compress_size,
            size=info.file_size,
            crc32=info.CRC,
        )
        assert b"".join(chunks) == MODEL
        header = 30 + len(info.filename.encode()) + len(info.extra)
        assert reader.read_bytes <= info.compress_size + header + 64


def test_a_member_that_inflates_past_its_listing_is_stopped(tmp_path):
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("huge.stl", b"\0" * 50_000_000)
    with zipfile.ZipFile(bomb) as archive:
        info = archive.getinfo("huge.stl")
    with open(bomb, "rb") as reader, pytest.raises(MemberUnreadable, match="inflates past"):
        # The listing (a lying central directory) said 1,000 bytes.
        for _ in zip_member_chunks(
            reader, header_offset=info.header_offset, compressed_size=info.compress_size, size=1000, crc32=None
        ):
            pass


@pytest.fixture
def client_as_viewer(django_user_model):
    user = django_user_model.objects.create_user(username="viewer", password="s3cret-pass")
    client = Client()
    client.force_login(user)
    return client


def test_in_an_object_store_a_zip_member_is_read_by_ranged_reads_of_its_header_and_data(object_store, tmp_path):
    archive = packed(tmp_path, "kit.zip", tool("zip"), "-q", "-r")
    package = package_with_raw_files(tmp_path, {"kit.zip": archive})
    assert not storage_is_local()
    raw = package.raw_files.get()
    with zipfile.ZipFile(io.BytesIO(archive)) as listed:
        info = listed.getinfo("kit/ball.stl")
    PackageFile.objects.create(
        package=package,
        path="kit/ball.stl",
        size=info.file_size,
        compressed_size=info.compress_size,
        crc32=info.CRC,
        header_offset=info.header_offset,
    )

    assert b"".join(file_bytes(file=PackageFile.objects.get(package=package))) == MODEL

    reader = RangedReader(RemoteVolume("kit.zip", default_storage.url(raw.object.name), raw.size))
    with reader:
        chunks = zip_member_chunks(
            reader,
            header_offset=info.header_offset,
            compressed_size=info.compress_size,
            size=info.file_size,
            crc32=info.CRC,
        )
        assert b"".join(chunks) == MODEL
        assert reader.fetched == 30 + info.compress_size, "the local header and the member's data, nothing else"
