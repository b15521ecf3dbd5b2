"""Reading what an operator types for a channel's rules: sizes and Telegram post links."""

import pytest

from core.sizes import size_text
from ingestion.rules import MessageLink, message_link_parse, size_exact, size_parse


@pytest.mark.parametrize(
    ("typed", "size"),
    [
        ("500 MB", 500_000_000),
        ("1.5GB", 1_500_000_000),
        ("1,5 gb", 1_500_000_000),
        ("2 GiB", 2 * 1024**3),
        ("800", 800),
        (800, 800),
        ("", None),
        (None, None),
    ],
)
def test_sizes_are_read_as_people_write_them(typed, size):
    assert size_parse(typed) == size


@pytest.mark.parametrize("typed", ["lots", "5 parsecs", "-3", "1e9"])
def test_what_is_not_a_size_says_what_to_write(typed):
    with pytest.raises(ValueError, match="is not a size: write bytes, or a number with KB, MB, GB or TB"):
        size_parse(typed)


def test_sizes_are_shown_rounded_and_edited_exactly():
    assert (size_text(1_500_000_000), size_text(2_100), size_text(12)) == ("1.5 GB", "2.1 KB", "12 B")
    assert (size_exact(500_000_000), size_exact(1_234_567)) == ("500 MB", "1234567")


@pytest.mark.parametrize(
    ("link", "parsed"),
    [
        ("https://t.me/c/1234567890/42", MessageLink(message_id=42, chat_id=1234567890)),
        ("t.me/c/1234567890/7/42", MessageLink(message_id=42, chat_id=1234567890, topic_id=7)),
        ("https://t.me/models_a/42?single", MessageLink(message_id=42, username="models_a")),
        ("http://telegram.me/models_a/3/42/", MessageLink(message_id=42, username="models_a", topic_id=3)),
    ],
)
def test_post_links_of_channels_and_topics(link, parsed):
    assert message_link_parse(link) == parsed


@pytest.mark.parametrize("link", ["https://example.com/c/1/2", "t.me/c/123", "t.me/joinchat/abc", ""])
def test_what_is_not_a_post_link_says_where_to_copy_one(link):
    with pytest.raises(ValueError, match="Copy Post Link"):
        message_link_parse(link)
