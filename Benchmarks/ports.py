"""Loopback ports for the benchmarks that start servers (serve, nginx, Caddy, PostgreSQL).

Imported by the scripts beside it (`python3 Benchmarks/X.py` puts this folder on sys.path).
"""
import socket
import sys
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, timeout=30):
    """Returns once 127.0.0.1:port accepts a connection; ends the benchmark after `timeout` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    sys.exit(f"bench: nothing answers on port {port}")
