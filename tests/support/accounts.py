"""A small sandbox world for the accounts tests: a reader, a Premium account, one with 2FA."""

READER = "+15550000001"
PREMIUM = "+15550000002"
GUARDED = "+15550000003"  # has a two-step verification password
STRANGER = "+15559999999"  # not in the world: Telegram refuses the number

WORLD = {
    "accounts": [
        {"phone": READER, "first_name": "Reader", "last_name": "A", "code": "12345"},
        {"phone": PREMIUM, "first_name": "Premium P", "premium": True, "code": "22222"},
        {"phone": GUARDED, "first_name": "Guarded G", "code": "33333", "password": "correct horse"},
    ],
    "chats": [
        {"id": 1001, "title": "Models A", "type": "channel", "members": [READER, PREMIUM]},
        {
            "id": 1002,
            "title": "Makers forum",
            "type": "supergroup",
            "forum": True,
            "members": [READER],
            "topics": [{"id": 1, "title": "General"}, {"id": 42, "title": "Dragons"}],
        },
        {"id": 1003, "title": "Reminder group", "type": "supergroup", "members": [READER], "slow_mode_seconds": 30},
    ],
}
