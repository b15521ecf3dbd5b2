"""The fan-out of one reminder run: one account sends the run's parts to its groups, paced.

`reminder_run_execute` takes the account's advisory lock (one run per account at a time; other
accounts go in parallel), claims the run, and sends. The sending is async (Telegram I/O, up to
REMINDER_GROUP_CONCURRENCY groups at once); every database step is a synchronous function called
through `sync_to_async(thread_sensitive=True)`, so the ORM never runs on the event loop and keeps
the connection that holds the lock. Per group: the run target is marked `sending`, each part
waits for a token of the account's Redis bucket, is sent with the random_id stored when the run was
fired and is counted in the target's `parts_sent`; the target is `sent` once every part is, or
`failed`. A target stopped part-way (window, pause, cancel, a dead worker) goes on at its next
unsent part; only the part in flight when a worker died is sent again, with the same random_id,
so Telegram answers RANDOM_ID_DUPLICATE instead of posting twice.

The pace adapts (accounts.pace, core.ratelimit): a FloodWait, SLOWMODE_WAIT or PEER_FLOOD lowers the account's
shared budget and is recorded; clean sending raises it back. PEER_FLOOD, or too many FloodWaits in a while, rest
the account: its bucket halts, so every worker of it stops at its next message, and every run of it pauses. A run
whose recent groups fail above REMINDER_ERROR_SHARE_PERCENT pauses itself; an operator's Pause stops it at its next
group. No part goes out after the window's end: a token due after it (a FloodWait holding the account) pauses the
run before that part. A basic group Telegram upgraded to a supergroup is followed there (services.moved_groups).
Every Telegram request of a run (a part sent or edited, a post deleted or pinned, a media uploaded) goes through one
"""

from core.engine import BUSY
from reminders.fanout.loop import Fanout, reminder_run_execute
from reminders.fanout.parts import Part, media_local_path, part_build, part_send
from reminders.fanout.stops import StopReason

__all__ = [
    "BUSY",
    "Fanout",
    "Part",
    "StopReason",
    "media_local_path",
    "part_build",
    "part_send",
    "reminder_run_execute",
]
