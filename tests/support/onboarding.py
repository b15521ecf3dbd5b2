"""A sandbox world for joining, leaving and creating channels from the console: a public source channel, a
private forum reached by invite, a channel that approves its members, a public channel nobody reads yet."""

import copy

READER, NEWCOMER, WRITER, SHY = "+15550000001", "+15550000002", "+15550000003", "+15550000004"
MODELS_A, PRINTS_CLUB, VETTED, FRESH = 5001, 5002, 5003, 5004
CLUB_INVITE = "https://t.me/+ClubInvite01"

_WORLD = {
    "accounts": [
        {"phone": READER, "first_name": "Reader"},
        {"phone": NEWCOMER, "first_name": "Newcomer"},
        {"phone": WRITER, "first_name": "Writer"},
        {"phone": SHY, "first_name": "Shy", "invites_allowed": False},
    ],
    "chats": [
        {
            "id": MODELS_A,
            "title": "Models A",
            "type": "channel",
            "username": "models_a",
            "role": "source",
            "other_members": 1200,
            "members": [READER],
            "messages": [{"id": 5, "document": {"name": "dragon.zip", "size": 4000}}],
        },
        {
            "id": PRINTS_CLUB,
            "title": "Prints club",
            "type": "supergroup",
            "forum": True,
            "role": "source",
            "other_members": 40,
            "members": [READER],
            "invites": [{"hash": "ClubInvite01"}, {"hash": "OldInvite001", "expired": True}],
        },
        {
            "id": VETTED,
            "title": "Vetted",
            "type": "channel",
            "username": "vetted_models",
            "join_request": True,
        },
        {"id": FRESH, "title": "Fresh finds", "type": "channel", "username": "fresh_finds", "other_members": 9},
    ],
}


def onboarding_world() -> dict:
    return copy.deepcopy(_WORLD)
