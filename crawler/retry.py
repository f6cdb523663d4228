"""When to try a request again, and how long to wait first: urllib3's ``Retry`` policy.

One ``Retry`` object per request, as urllib3 uses it: ``increment()`` after each failed attempt
returns the next one (or raises MaxRetryError when the attempts are spent), ``get_backoff_time()``
gives the exponential backoff, and ``Retry-After`` (429/503, and the MediaWiki API's maxlag
answer) is parsed and capped by urllib3 too. The waiting itself stays with the caller, which
waits on the crawl's stop event rather than sleeping, so that Ctrl-C is never held up.
"""
from __future__ import annotations

from dataclasses import dataclass

from urllib3.exceptions import InvalidHeader, MaxRetryError
from urllib3.util.retry import Retry

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# A "later" in the body with no Retry-After: MediaWiki's own advice for maxlag is to wait 5 s at least.
BUSY_WAIT = 5.0


@dataclass(frozen=True)
class Wait:
    """What to do before the next attempt: back off this long, or pause the whole host (Retry-After)."""

    backoff: float = 0.0
    retry_after: float | None = None    # seconds the server asked for; the throttle pauses the host


class RetryPolicy:
    """Retries on 429/5xx, timeouts and connection errors, with backoff; Retry-After honoured."""

    def __init__(self, retries: int, backoff_factor: float, max_retry_after: float,
                 backoff_max: float = 30.0) -> None:
        self._template = Retry(
            total=retries, connect=None, read=None, redirect=None, status=None, other=None,
            allowed_methods=frozenset({"GET", "HEAD"}), status_forcelist=RETRY_STATUSES,
            backoff_factor=backoff_factor, backoff_max=backoff_max, raise_on_status=False,
            respect_retry_after_header=True, retry_after_max=max(0, int(max_retry_after)))

    def start(self) -> Retry:
        """The state of a new request: no attempt failed yet."""
        return self._template.new()

    @staticmethod
    def next(retry: Retry, url: str, *, response=None, error: Exception | None = None,
             forced_by_answer: bool = False) -> tuple[Retry, Wait] | None:
        """After a failed attempt (a urllib3 response, or the error raised): the Retry state for
        the next attempt and how long to wait, or None when the attempts are spent.
        ``forced_by_answer``: the body said "later" (the API's maxlag) although the status is 200."""
        try:
            retry = retry.increment("GET", url, response=response, error=error)
        except MaxRetryError:
            return None
        retry_after = None
        if response is not None and (forced_by_answer or response.status in Retry.RETRY_AFTER_STATUS_CODES):
            try:
                retry_after = retry.get_retry_after(response)
            except InvalidHeader:
                retry_after = None
        if forced_by_answer and retry_after is None:
            retry_after = min(BUSY_WAIT, retry.retry_after_max)
        return retry, Wait(backoff=0.0 if retry_after is not None else retry.get_backoff_time(),
                           retry_after=retry_after)
