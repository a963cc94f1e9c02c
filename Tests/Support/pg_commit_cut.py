#!/usr/bin/env python3
"""A TCP proxy in front of PostgreSQL that loses one COMMIT's answer (loopback only).

Usage: pg_commit_cut.py SERVER_PORT TRIGGER LOG
Prints its port on the first line, then forwards every connection to 127.0.0.1:SERVER_PORT
until killed (or 60 s). Once a client has sent TRIGGER (bytes of a statement, such as the
first statement of an import's transaction), the server's next answer holding a COMMIT's
CommandComplete ("C" ... "COMMIT\\0") is not passed on: both sockets are closed instead, and
"cut" is appended to LOG. The server has committed; the client never hears so, as when a
network or a load balancer drops a connection at that moment.
"""
import socket
import sys
import threading
import time

server_port, trigger, log_path = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3]
state = {"armed": False, "cut": False}
lock = threading.Lock()


def pump(source, target, watch_commit, pair):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            with lock:
                if not watch_commit and trigger in data and not state["cut"]:
                    state["armed"] = True
                if watch_commit and state["armed"] and not state["cut"] and b"COMMIT\x00" in data:
                    state["cut"] = True
                    with open(log_path, "a") as log:
                        log.write("cut\n")
                    break
            target.sendall(data)
    except OSError:
        pass
    for s in pair:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()


def serve(listener):
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(("127.0.0.1", server_port))
        pair = (client, upstream)
        threading.Thread(target=pump, args=(client, upstream, False, pair), daemon=True).start()
        threading.Thread(target=pump, args=(upstream, client, True, pair), daemon=True).start()


listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)
threading.Thread(target=serve, args=(listener,), daemon=True).start()
time.sleep(60)
