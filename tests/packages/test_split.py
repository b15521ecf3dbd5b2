import hashlib
import os

import pytest

from packages.services import SplitMismatch, UploadPart, part_write, upload_plan, volume_split


def test_volumes_within_the_limit_go_as_they_are():
    plan = upload_plan(volumes=[("a.7z.001", 100), ("a.7z.002", 40)], limit=100)
    assert [(part.name, part.length) for part in plan] == [("a.7z.001", 100), ("a.7z.002", 40)]


def test_a_volume_above_the_limit_is_byte_split_into_numbered_parts():
    plan = upload_plan(volumes=[("big.zip", 250)], limit=100)
    assert [(part.name, part.offset, part.length) for part in plan] == [
        ("big.zip.001", 0, 100),
        ("big.zip.002", 100, 100),
        ("big.zip.003", 200, 50),
    ]


def test_parts_rejoin_with_cat_to_the_original_bytes(tmp_path):
    source = tmp_path / "big.bin"
    data = os.urandom(1_000_003)
    source.write_bytes(data)
    plan = upload_plan(volumes=[("big.bin", len(data))], limit=300_000)
    joined = hashlib.sha256()
    for part in plan:
        target = tmp_path / part.name
        part_write(source=source, part=part, target=target)
        assert target.stat().st_size <= 300_000
        joined.update(target.read_bytes())
    assert joined.hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_split_is_checked_against_the_volume_hash(tmp_path):
    source = tmp_path / "big.bin"
    data = os.urandom(250_000)
    source.write_bytes(data)
    parts = upload_plan(volumes=[("big.bin", len(data))], limit=100_000)
    written = volume_split(
        source=source, parts=parts, folder=tmp_path, expected_sha256=hashlib.sha256(data).hexdigest()
    )
    assert b"".join(path.read_bytes() for path in written) == data

    shifted = [parts[0], UploadPart(parts[1].name, 0, parts[1].offset - 1, parts[1].length), parts[2]]
    with pytest.raises(SplitMismatch, match="re-join"):
        volume_split(source=source, parts=shifted, folder=tmp_path, expected_sha256=hashlib.sha256(data).hexdigest())
    assert not (tmp_path / parts[0].name).exists(), "parts that do not re-join are removed"
