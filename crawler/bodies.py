"""Response bodies: read within a size cap and a deadline, then decoded to text."""
from __future__ import annotations

import re
import time
from typing import Callable

import requests
import urllib3

_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([\w.:-]+)""", re.IGNORECASE)


class TooLarge(Exception):
    pass


class TooSlow(Exception):
    pass


class BodyReader:
    """Streams a body: stops past ``max_bytes`` or ``deadline`` seconds, reports the wire bytes.
    read1 returns whatever has arrived, so a server that trickles bytes meets the deadline."""

    def __init__(self, max_bytes: int, deadline: float, count: Callable[[int], None]) -> None:
        self.max_bytes = max_bytes
        self.deadline = deadline
        self._count = count            # called once with the bytes received, whatever happens

    def read(self, response: requests.Response) -> bytes:
        """The body; TooLarge, TooSlow, or the requests exception that a urllib3 error means."""
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise TooLarge
        deadline = time.monotonic() + self.deadline
        raw = response.raw
        if hasattr(raw, "read1"):  # urllib3 2
            chunks_in = iter(lambda: raw.read1(64 * 1024, decode_content=True), b"")
        else:
            chunks_in = response.iter_content(64 * 1024)
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in chunks_in:
                size += len(chunk)
                if size > self.max_bytes:
                    raise TooLarge
                if time.monotonic() > deadline:
                    raise TooSlow
                chunks.append(chunk)
        except urllib3.exceptions.ReadTimeoutError as exc:
            raise requests.Timeout(str(exc)) from exc
        except urllib3.exceptions.DecodeError as exc:
            raise requests.exceptions.ContentDecodingError(str(exc)) from exc
        except (urllib3.exceptions.ProtocolError, urllib3.exceptions.HTTPError, OSError) as exc:
            raise requests.ConnectionError(str(exc)) from exc
        finally:
            wire = raw.tell() if hasattr(raw, "tell") else 0
            self._count(wire or size)
        return b"".join(chunks)

    def drain(self, response: requests.Response) -> None:
        """Read a small error or redirect body, so that the connection can be reused."""
        declared = response.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) <= 64 * 1024:
            try:
                response.raw.read(int(declared))
            except (urllib3.exceptions.HTTPError, OSError):
                return
            self._count(int(declared))


def decode_html(body: bytes, content_type: str) -> tuple[str | None, str | None]:
    """(text, None), or (None, why) for a body that is binary or not in its declared encoding."""
    if b"\x00" in body[:4096]:
        return None, "not HTML (binary)"
    match = re.search(r"charset\s*=\s*[\"']?([\w.:-]+)", content_type, re.IGNORECASE)
    charset = match.group(1) if match else None
    if charset is None:
        meta = _CHARSET.search(body[:4096])
        charset = meta.group(1).decode("ascii", errors="replace") if meta else "utf-8"
    if body.startswith(b"\xef\xbb\xbf"):
        charset = "utf-8-sig"
    try:
        return body.decode(charset), None
    except LookupError:
        return None, f"bad encoding (unknown charset {charset})"
    except UnicodeDecodeError:
        return None, "bad encoding"
