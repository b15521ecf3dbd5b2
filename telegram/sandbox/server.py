"""The simulated Telegram server: answers the TL requests a real Telethon client sends.

`SandboxServer.answer()` takes one request (unwrapped from InvokeWithLayer and friends by
`unwrap`) and the MTProto authorization key it came with, and returns what Telegram would: a TL
object, a list (TL vector) or a bool; or it raises `RpcAnswer` (Telegram's error), ConnectionError
(the network) or SandboxCrash (a test's simulated death). Login, reading and writing live in
`telegram/sandbox/methods/`; this module owns sessions, counting, faults and dispatch.
"""

from telethon.tl import functions, types
from telethon.tl.alltlobjects import tlobjects

from telegram.sandbox.faults import PART_LOST, REPLACE_DOCUMENT, RpcAnswer, fault_error
from telegram.sandbox.methods import HANDLERS
from telegram.sandbox.methods.common import Call, file_reference_target, peer_chat_id
from telegram.sandbox.world import World

# Requests that wrap the real one: counted and answered as the one inside.
WRAPPERS = (
    functions.InvokeWithLayerRequest,
    functions.InitConnectionRequest,
    functions.InvokeWithoutUpdatesRequest,
)
# Fault operations (DESIGN.md, `faults`) by Telegram method; the rest are faulted only by "any".
OPS = {
    "upload.getFile": "download",
    "upload.saveFilePart": "upload",
    "upload.saveBigFilePart": "upload",
    "messages.uploadMedia": "upload",
    "messages.sendMessage": "send",
    "messages.sendMedia": "send",
    "messages.sendMultiMedia": "send",
    "messages.forwardMessages": "send",
    "messages.search": "history",
    "messages.getMessages": "history",
    "channels.getMessages": "history",
    "messages.getForumTopics": "history",
    "messages.getPeerDialogs": "history",
    "contacts.resolveUsername": "join",
    "messages.checkChatInvite": "join",
    "messages.importChatInvite": "join",
    "channels.joinChannel": "join",
    "channels.leaveChannel": "join",
    "messages.deleteChatUser": "join",
    "channels.createChannel": "create",
    "contacts.resolvePhone": "create",
    "channels.inviteToChannel": "create",
    "channels.editAdmin": "create",
}
PART_SAVES = {"upload.saveFilePart", "upload.saveBigFilePart"}
LOGIN = {"auth.sendCode", "auth.signIn", "account.getPassword", "auth.checkPassword", "auth.importAuthorization"}


def unwrap(request):
    while isinstance(request, WRAPPERS):
        request = request.query
    return request


def method_of(request) -> type:
    """The TL method a request is, by its constructor id as Telegram reads it (a client may send its own
    subclass of Telethon's request, serialized its own way)."""
    return tlobjects.get(request.CONSTRUCTOR_ID, type(request))


def method_name(request) -> str:
    """Telegram's name of a request: messages.search, upload.getFile, help.getConfig."""
    method = method_of(request)
    namespace = method.__module__.rsplit(".", 1)[-1]
    name = method.__name__.removesuffix("Request")
    name = name[0].lower() + name[1:]
    return name if namespace == "functions" else f"{namespace}.{name}"


def _fault_scope(request) -> tuple[set[int], set[int]]:
    """Chat and message ids a request touches, for faults narrowed to a chat or a message."""
    peers = [getattr(request, "peer", None), getattr(request, "channel", None), getattr(request, "to_peer", None)]
    peers += [dialog.peer for dialog in getattr(request, "peers", None) or ()]
    chats = {chat_id for chat_id in map(peer_chat_id, peers) if chat_id}
    ids = getattr(request, "id", None)
    messages = {item.id for item in ids if isinstance(item, types.InputMessageID)} if isinstance(ids, list) else set()
    location = getattr(request, "location", None)
    if location is not None:
        chat_id, message_id = file_reference_target(location)
        chats.add(chat_id)
        messages.add(message_id)
    return chats, messages


class SandboxServer:
    def __init__(self, world: World):
        self.world = world

    def answer(self, request, *, key_id: str, dc_id: int, phone: str, connecting: bool = False) -> tuple[object, float]:
        """Telegram's answer to one request, and how long the account's bandwidth holds it back."""
        method = method_name(request)
        self.world.scheduled_deliver()
        key = self.world.key(key_id) or self.world.key_open(key_id, dc_id)
        call = Call(world=self.world, request=request, key=key, dc_id=dc_id, phone=key["phone"] or phone)
        chats, messages = _fault_scope(request)
        op = "connect" if connecting and method == "help.getConfig" else OPS.get(method)
        fault = self.world.request(
            phone=call.phone,
            method=method,
            op=None if method in LOGIN else op or "other",
            connecting=connecting,
            chats=chats,
            messages=messages,
        )
        try:
            if key["state"] == "duplicated":
                raise RpcAnswer(406, "AUTH_KEY_DUPLICATED")
            if fault is not None and fault["error"] == PART_LOST and method in PART_SAVES:
                call.me()
                return True, 0.0
            if fault is not None and fault["error"] == REPLACE_DOCUMENT:
                self.world.message_replace(fault["chat"], fault["message"])
            elif fault is not None:
                raise fault_error(error=fault["error"], seconds=fault["seconds"])
            handler = HANDLERS.get(method_of(request))
            if handler is None:
                raise RpcAnswer(400, "METHOD_NOT_SUPPORTED_BY_SANDBOX")
            return handler(call), call.wait
        except RpcAnswer as exc:
            if exc.code == 420:
                self.world.flood_wait_count(call.phone)
            raise
