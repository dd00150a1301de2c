"""How worker processes hand batches to the DALIServer: each worker process opens its own
connection to a Unix socket the server listens on, and sends each batch synchronously.

Not one multiprocessing queue shared by all workers: its writers share a lock, and a worker that
dies or is killed while its feeder thread holds that lock (mid-write) leaves every later batch of
every worker stuck, and the main process waiting for it for ever (seen: 1 run in 4 of DALI's
test_dali_proxy_deterministic, where torch shuts workers down after an early break). Here a
worker that goes away takes only its own connection with it, and a sent batch is in the socket
before its worker returns it to the DataLoader."""
from __future__ import annotations

import os
import queue
import threading
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Listener, wait
from typing import Any

_POLL = 0.1


class Inbox:
    """The server's end: one daemon thread accepts connections and moves what arrives onto
    `local_queue`, for the server's whole life (so a worker never blocks on a full socket, even
    while the server is stopped). close() ends it; so does the interpreter's exit."""

    def __init__(self, local_queue: queue.Queue) -> None:
        self.authkey = os.urandom(16)
        self._listener = Listener(family="AF_UNIX", authkey=self.authkey)
        self.address = self._listener.address
        self._local_queue = local_queue
        self._closed = threading.Event()
        self.fatal: BaseException | None = None  # an unreadable batch: no id to file the error under
        self._thread = threading.Thread(target=self._serve, args=(self._listener, self._closed),
                                        name="DALIServer-inbox", daemon=True)
        self._thread.start()

    def _accept(self, listener: Listener, fresh: queue.SimpleQueue, closed: threading.Event) -> None:
        """Connections as they come, until close() (which wakes a waiting accept with a connection
        of its own: closing a socket does not wake a thread blocked in accept on Linux)."""
        while True:
            try:
                conn = listener.accept()
            except (EOFError, AuthenticationError):  # a client gone, or refused by the handshake
                continue
            except OSError:
                return
            if closed.is_set():
                conn.close()
                return
            fresh.put(conn)

    def _serve(self, listener: Listener, closed: threading.Event) -> None:
        fresh: queue.SimpleQueue = queue.SimpleQueue()
        acceptor = threading.Thread(target=self._accept, args=(listener, fresh, closed), name="DALIServer-accept",
                                    daemon=True)
        acceptor.start()
        conns: list[Any] = []
        while not closed.is_set():
            while not fresh.empty():
                conns.append(fresh.get())
            if not conns:
                closed.wait(_POLL)
                continue
            for ready in wait(conns, timeout=_POLL):
                try:
                    item = ready.recv()
                except (EOFError, OSError):  # the worker exited (or died): its connection only
                    conns.remove(ready)
                    continue
                except Exception as e:  # noqa: BLE001 - waiters must hear of a batch that cannot be read
                    self.fatal = e
                    continue
                self._local_queue.put(item)
        try:
            Client(self.address, family="AF_UNIX", authkey=self.authkey).close()
        except (OSError, EOFError, AuthenticationError):
            pass
        acceptor.join(timeout=5)
        listener.close()
        while not fresh.empty():  # accepted after the loop's last look
            conns.append(fresh.get())
        for c in conns:
            c.close()

    def close(self, wait_s: float = 0.0) -> None:
        """Ends the inbox; with `wait_s`, waits that long for its thread (at exit: a thread still
        unpickling a worker's tensors when the interpreter finalizes aborts the process)."""
        self._closed.set()
        if wait_s > 0 and self._thread is not threading.current_thread():
            self._thread.join(wait_s)


_sender: dict[str, Any] = {}
_sender_lock = threading.Lock()


def send(address: str, authkey: bytes, item: Any) -> None:
    """From a worker: `item` onto the server's socket, over this process's own connection (made on
    first use; a forked child makes its own)."""
    with _sender_lock:
        conn, pid = _sender.get(address, (None, None))
        if conn is None or pid != os.getpid():
            conn = Client(address, family="AF_UNIX", authkey=authkey)
            _sender[address] = (conn, os.getpid())
        try:
            conn.send(item)
        except OSError as e:
            _sender.pop(address, None)
            raise RuntimeError(f"DALI proxy: cannot send a batch to the DALIServer ({e}); is it still alive?") from e
