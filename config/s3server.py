"""The S3-protocol test server (moto's, in memory) that `make test` and the chaos bench start, keeping its
buckets in a file across a stop when given one: the bench stops it for a minute and starts it again on the
same port, and the objects written before must still be there, as on a real object store.

    python -m config.s3server --port PORT [--data FILE]

SIGTERM: stop listening, let the requests under way finish (a few seconds at most), write the buckets to FILE,
exit. A request cut by the stop got no answer, so its client never took it for done.
"""

import argparse
import pickle
import signal
import threading
import time
from pathlib import Path

DRAIN_SECONDS = 10


class _Requests:
    """The WSGI app, counting the requests under way so a stop can wait for them."""

    def __init__(self, app):
        self.app = app
        self.under_way = 0
        self.stopping = False
        self.changed = threading.Condition()

    def __call__(self, environ, start_response):
        with self.changed:
            if self.stopping:  # a kept-alive connection's next request: not taken, so not lost
                start_response("503 Service Unavailable", [("Content-Type", "text/plain"), ("Connection", "close")])
                return [b"stopping"]
            self.under_way += 1
        try:
            # Moto answers with whole bodies: once the app returns, the request's work is done.
            return self.app(environ, start_response)
        finally:
            with self.changed:
                self.under_way -= 1
                self.changed.notify_all()

    def drained(self, *, timeout: float) -> bool:
        with self.changed:
            self.stopping = True
            return self.changed.wait_for(lambda: self.under_way == 0, timeout=timeout)


def buckets_save(path: Path) -> None:
    from moto.s3.models import s3_backends

    state = {
        "buckets": {
            (account, partition): backend.buckets
            for account, partitions in s3_backends.items()
            for partition, backend in partitions.items()
            if backend.buckets
        },
        "bucket_accounts": dict(s3_backends.bucket_accounts),
    }
    written = path.with_name(path.name + ".new")
    written.write_bytes(pickle.dumps(state))
    written.replace(path)  # whole or not at all: a stop cut short leaves the previous copy


def buckets_load(path: Path) -> None:
    from moto.s3.models import s3_backends

    if not path.exists():
        return
    state = pickle.loads(path.read_bytes())  # our own file, written by buckets_save
    for (account, partition), buckets in state["buckets"].items():
        s3_backends[account][partition].buckets.update(buckets)
    s3_backends.bucket_accounts.update(state["bucket_accounts"])


def main(argv: list[str] | None = None) -> None:
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data", type=Path, help="where the buckets are kept across a stop")
    args = parser.parse_args(argv)

    if args.data:
        buckets_load(args.data)
    requests = _Requests(DomainDispatcherApplication(create_backend_app))
    server = make_server(args.host, args.port, requests, threaded=True, request_handler=MotoRequestHandler)
    stopping = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stopping.set())
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    while not stopping.wait(1):
        pass
    server.shutdown()
    server.server_close()  # new connections are refused from here
    started = time.monotonic()
    requests.drained(timeout=DRAIN_SECONDS)
    if args.data:
        buckets_save(args.data)
    print(f"stopped; {requests.under_way} request(s) cut after {time.monotonic() - started:.1f} s", flush=True)


if __name__ == "__main__":
    main()
