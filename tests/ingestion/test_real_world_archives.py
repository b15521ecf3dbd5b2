"""Archives made by the tools people use, posted to the sandbox as real bytes (`sandbox_post --file`) and
ingested through the whole pipeline: download, hash, upload, listing."""

import io

import pytest
from django.core.management import call_command

from packages.models import Package
from tests.support.archives import PASSWORD, files, run, tool
from tests.support.ingestion import SOURCE, run_cycle, uploads, world

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_settle_time(settings):
    settings.INGEST_SET_SETTLE_SECONDS = 0  # every volume is posted before the cycle


def post(path, *, name: str = "") -> int:
    out = io.StringIO()
    call_command("sandbox_post", str(SOURCE), "--file", str(path), *(["--name", name] if name else []), stdout=out)
    return int(out.getvalue().split()[0])


def test_an_info_zip_split_set_is_ingested_whole_with_its_listing(ingest_world, tmp_path):
    (tmp_path / "in").mkdir()
    names = files(tmp_path / "in", [f"castle/wall-{n:03d}.stl" for n in range(300)], size=700)
    run(tool("zip"), "-q", "-r", "-s", "64k", str(tmp_path / "castle.zip"), "castle", cwd=tmp_path / "in")
    volumes = sorted(tmp_path.glob("castle.z[0-9]*")) + [tmp_path / "castle.zip"]
    assert len(volumes) >= 3
    ingest_world(world(messages=[{"id": 1, "text": "castle kit below"}]))
    for volume in volumes:
        post(volume)

    run_ = run_cycle()

    assert (run_.status, run_.ingested) == ("success", 1), run_.error
    package = Package.objects.get()
    assert package.volume_names == [volume.name for volume in volumes]
    assert sorted(package.files.values_list("path", flat=True)) == sorted(names)
    assert [message["document"]["name"] for message in uploads()] == package.volume_names


def test_a_7z_made_with_a_password_is_ingested_and_flagged(ingest_world, tmp_path):
    (tmp_path / "in").mkdir()
    files(tmp_path / "in", ["secret/a.stl", "secret/b.stl"])
    archive = tmp_path / "secret.7z"
    run(tool("7z"), "a", "-bd", f"-p{PASSWORD}", str(archive), "secret", cwd=tmp_path / "in")
    ingest_world(world(messages=[{"id": 1, "text": "password in the next message"}]))
    post(archive, name="vault.7z")

    assert run_cycle().ingested == 1
    package = Package.objects.get()
    assert package.file_name == "vault.7z" and package.needs_password
