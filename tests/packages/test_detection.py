from dataclasses import dataclass

import pytest

from packages.detection import MODEL, RAR, SEVEN_ZIP, ZIP, classify, group_sets


@dataclass(frozen=True)
class Doc:
    id: int
    name: str
    topic: int | None = None


def sets_of(*names, topics=None):
    docs = [Doc(id=index + 1, name=name, topic=(topics or {}).get(name)) for index, name in enumerate(names)]
    return group_sets(docs, name_of=lambda doc: doc.name, topic_of=lambda doc: doc.topic)


@pytest.mark.parametrize(
    ("name", "archive_type", "scheme", "order"),
    [
        ("dragon.zip", ZIP, "single", 10_000),
        ("Dragon.ZIP.001", ZIP, "numbered", 1),
        ("dragon.z01", ZIP, "spanned", 1),
        ("dragon.part1.rar", RAR, "part", 1),
        ("dragon.part02.rar", RAR, "part", 2),
        ("dragon.r00", RAR, "old-rar", 0),
        ("dragon.rar", RAR, "single", -1),
        ("dragon.7z", SEVEN_ZIP, "single", 0),
        ("dragon.7z.003", SEVEN_ZIP, "numbered", 3),
        ("bust.stl", MODEL, "model", 0),
        ("print.gcode", MODEL, "model", 0),
        ("part.3MF", MODEL, "model", 0),
    ],
)
def test_every_pattern_is_recognised(name, archive_type, scheme, order):
    volume = classify(name)
    assert (volume.archive_type, volume.scheme, volume.order) == (archive_type, scheme, order)


@pytest.mark.parametrize("name", ["notes.txt", "noise.bin", "photo.jpg", "archive", "readme.md"])
def test_other_documents_are_not_ingested(name):
    assert classify(name) is None


def test_numbered_7z_volumes_form_one_ordered_set():
    (archive_set,) = sets_of("big.7z.002", "big.7z.001", "big.7z.003")
    assert archive_set.is_complete and archive_set.is_multipart
    assert [volume.file_name for volume in archive_set.volumes] == ["big.7z.001", "big.7z.002", "big.7z.003"]
    assert archive_set.file_name == "big.7z.001"


def test_spanned_zip_needs_its_closing_zip():
    (complete,) = sets_of("set.z01", "set.z02", "set.zip")
    assert complete.is_complete
    assert [volume.file_name for volume in complete.volumes] == ["set.z01", "set.z02", "set.zip"]
    (open_set,) = sets_of("set.z01", "set.z02")
    assert "set.zip" in open_set.missing


def test_old_style_rar_starts_with_the_rar():
    (archive_set,) = sets_of("old.r00", "old.rar", "old.r01")
    assert archive_set.is_complete
    assert [volume.file_name for volume in archive_set.volumes] == ["old.rar", "old.r00", "old.r01"]
    (missing_first,) = sets_of("old.r00", "old.r01")
    assert "old.rar" in missing_first.missing


def test_a_gap_in_the_volumes_is_a_missing_part():
    (archive_set,) = sets_of("vols.part1.rar", "vols.part3.rar")
    assert archive_set.missing == "volume 2 missing"
    (numbered,) = sets_of("x.7z.002", "x.7z.003")
    assert numbered.missing == "volume 1 missing"


def test_sets_keep_the_order_of_their_first_message_and_ignore_noise():
    sets = sets_of("b.zip", "noise.bin", "a.7z.001", "model.stl", "a.7z.002", "c.rar")
    assert [s.file_name for s in sets] == ["b.zip", "a.7z.001", "model.stl", "c.rar"]
    assert [len(s.volumes) for s in sets] == [1, 2, 1, 1]


def test_same_name_in_two_topics_is_two_sets():
    docs = [Doc(1, "dragon.zip", topic=42), Doc(2, "dragon.zip", topic=7)]
    sets = group_sets(docs, name_of=lambda doc: doc.name, topic_of=lambda doc: doc.topic)
    assert len(sets) == 2


def test_a_single_zip_and_numbered_zip_of_the_same_name_stay_apart():
    sets = sets_of("pack.zip", "pack.zip.001", "pack.zip.002")
    assert [len(s.volumes) for s in sets] == [1, 2]


def test_the_same_volume_posted_twice_counts_once():
    (archive_set,) = sets_of("big.7z.001", "big.7z.001", "big.7z.002")
    assert archive_set.is_complete and len(archive_set.volumes) == 2
