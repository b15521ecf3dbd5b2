"""Chat links as operators paste them: every shape Telegram hands out reads as a @username or an invite hash;
anything else says what is accepted."""

import pytest

from telegram.links import ChatLinkInvalid, chat_link_parse
from telegram.records import ChatLink


@pytest.mark.parametrize(
    ("text", "link"),
    [
        ("@models_a", ChatLink(username="models_a")),
        ("models_a", ChatLink(username="models_a")),
        (" https://t.me/models_a ", ChatLink(username="models_a")),
        ("t.me/models_a/123", ChatLink(username="models_a")),
        ("https://t.me/s/models_a", ChatLink(username="models_a")),
        ("telegram.me/models_a", ChatLink(username="models_a")),
        ("tg://resolve?domain=models_a", ChatLink(username="models_a")),
        ("https://t.me/+AbCdEf123_-x", ChatLink(invite_hash="AbCdEf123_-x")),
        ("t.me/joinchat/AbCdEf123_-x", ChatLink(invite_hash="AbCdEf123_-x")),
        ("tg://join?invite=AbCdEf123_-x", ChatLink(invite_hash="AbCdEf123_-x")),
    ],
)
def test_every_shape_of_a_chat_link_is_read(text, link):
    assert chat_link_parse(text) == link


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "Paste a @username or a t.me link"),
        ("@a_b", "not a valid @username"),
        ("@9lives", "not a valid @username"),
        ("https://example.com/models_a", "not a Telegram link"),
        ("https://t.me/", "names no chat"),
        ("t.me/+abc", "not a whole invite link"),
        ("tg://msg?text=hi", "not a join or resolve link"),
    ],
)
def test_text_that_is_no_chat_link_says_what_is_accepted(text, words):
    with pytest.raises(ChatLinkInvalid, match=words):
        chat_link_parse(text)


def test_a_link_reads_back_as_the_operator_wrote_it():
    assert str(ChatLink(username="models_a")) == "@models_a"
    assert str(ChatLink(invite_hash="AbCdEf123")) == "t.me/+AbCdEf123"
