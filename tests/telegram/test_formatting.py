"""A part's text as written (Markdown, HTML, plain) made into Telegram's text and entities, counted in UTF-16
code units, and refused with the place of the problem."""

import pytest

from telegram.formatting import FormatError, entity_as_json, formatted_html, text_format
from telegram.records import utf16_units


def shown(text: str, format: str, **options) -> tuple[str, list[dict]]:
    formatted = text_format(text, format=format, **options)
    return formatted.text, [entity_as_json(entity) for entity in formatted.entities]


def test_markdown_becomes_entities_with_utf16_offsets():
    text, entities = shown(
        "🎉 **Sale** __today__ ~~only~~ ||secret|| `CODE10` [shop](https://shop.example)", "markdown"
    )

    assert text == "🎉 Sale today only secret CODE10 shop"
    # the party emoji is one character in Python and two units for Telegram: every offset after it counts 2
    assert entities == [
        {"type": "bold", "offset": 3, "length": 4},
        {"type": "italic", "offset": 8, "length": 5},
        {"type": "strike", "offset": 14, "length": 4},
        {"type": "spoiler", "offset": 19, "length": 6},
        {"type": "code", "offset": 26, "length": 6},
        {"type": "text_url", "offset": 33, "length": 4, "url": "https://shop.example"},
    ]


def test_html_becomes_entities_with_telegrams_tags():
    text, entities = shown(
        '<b>Bold</b> <i>it</i> <u>u</u> <s>s</s> <tg-spoiler>sp</tg-spoiler> <span class="tg-spoiler">x</span>'
        ' <a href="https://a.example/?q=1&amp;r=2">link</a> <pre>code\nblock</pre> <blockquote>said</blockquote>',
        "html",
    )

    assert text == "Bold it u s sp x link code\nblock said"
    assert [(e["type"], text[e["offset"] : e["offset"] + e["length"]]) for e in entities] == [
        ("bold", "Bold"),
        ("italic", "it"),
        ("underline", "u"),
        ("strike", "s"),
        ("spoiler", "sp"),
        ("spoiler", "x"),
        ("text_url", "link"),
        ("pre", "code\nblock"),
        ("blockquote", "said"),
    ]
    assert entities[6]["url"] == "https://a.example/?q=1&r=2"


def test_plain_text_keeps_its_asterisks_and_has_no_entities():
    assert shown("*bold* **not** <b>x</b>", "plain") == ("*bold* **not** <b>x</b>", [])


@pytest.mark.parametrize(
    ("text", "format", "place"),
    [
        ("Hello **world", "markdown", "“**” at line 1, column 7"),
        ("ok **a** ok\nthen __b", "markdown", "“__” at line 2, column 6"),
        ("<b>bold <i>both</b></i>", "html", "</b> at line 1, column 16"),
        ("🎉 fine\n<div>block</div>", "html", "<div> at line 2, column 1"),
        ("<b>never closed", "html", "<b> at line 1, column 1 (near “<b>never closed”) is never closed"),
        ('<span class="big">x</span>', "html", 'needs class="tg-spoiler"'),
    ],
)
def test_bad_markup_is_refused_with_its_place(text, format, place):
    with pytest.raises(FormatError) as refused:
        text_format(text, format=format)

    assert place in str(refused.value)


def test_markdown_code_may_hold_delimiters():
    assert shown("`a ** b`", "markdown") == ("a ** b", [{"type": "code", "offset": 0, "length": 6}])


def test_the_text_limit_counts_utf16_units_and_says_where_it_runs_over():
    assert utf16_units("🎉" * 2048) == 4096
    assert text_format("🎉" * 2048).length == 4096

    with pytest.raises(FormatError) as refused:
        text_format("line one\n" + "🎉" * 2044)

    message = str(refused.value)
    assert "4,097 characters as Telegram counts them" in message and "allows 4,096" in message
    assert "shorten it by 1" in message and "line 2, column 2044" in message


def test_a_caption_allows_1024_units_and_2048_on_premium():
    text_format("x" * 1024, caption=True)
    with pytest.raises(FormatError, match="caption is 1,025 characters"):
        text_format("x" * 1025, caption=True)
    assert text_format("x" * 2048, caption=True, premium=True).length == 2048
    with pytest.raises(FormatError, match="allows 2,048"):
        text_format("x" * 2049, caption=True, premium=True)


def test_markup_is_counted_after_parsing():
    # 4,096 letters of bold: the asterisks are not sent, so they do not count
    assert text_format("**" + "b" * 4096 + "**", format="markdown").length == 4096


def test_custom_emoji_need_premium():
    html = 'Hi <tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    with pytest.raises(FormatError, match="line 1, column 4.*Premium"):
        text_format(html, format="html")

    assert shown(html, "html", premium=True)[1] == [
        {"type": "custom_emoji", "offset": 3, "length": 2, "document_id": 5368324170671202286}
    ]


def test_more_than_100_entities_are_refused():
    with pytest.raises(FormatError, match="101 formatted spans; Telegram keeps 100"):
        text_format(" ".join(["**b**"] * 101), format="markdown")


def test_an_unknown_format_is_refused():
    with pytest.raises(FormatError, match="choose one of plain, markdown, html"):
        text_format("x", format="rtf")


def test_the_preview_escapes_the_text_and_shows_the_entities():
    formatted = text_format(
        "**<script>alert(1)</script>** 🎉 [a](javascript:void) [b](https://x.example)", format="markdown"
    )

    assert formatted_html(formatted) == (
        "<b>&lt;script&gt;alert(1)&lt;/script&gt;</b> 🎉 a "
        '<a href="https://x.example" rel="noopener noreferrer" target="_blank">b</a>'
    )
