"""Parked requests beyond ``ROBOTRULES_MAX_WAITING_PER_ORIGIN``, kept on disk.

A slow or dead robots.txt may have thousands of requests waiting for it.
The first ``ROBOTRULES_MAX_WAITING_PER_ORIGIN`` of an origin wait in memory;
the rest go to a disk queue of their own (Scrapy's ``PickleFifoDiskQueue``,
the queue ``JOBDIR`` crawls use), so memory stays bounded whatever the count
and no waiting request takes a ``CONCURRENT_REQUESTS`` place. A request that
cannot be serialised (a lambda callback, say) stays in memory, as Scrapy's
own scheduler does with such requests.

SPEC 8 (held requests are not dropped, however many).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scrapy.squeues import PickleFifoDiskQueue

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

__all__ = ["DiskOverflow"]

logger = logging.getLogger(__name__)


class DiskOverflow:
    """One origin's overflow: a FIFO disk queue, and the few requests it could not take."""

    def __init__(self, crawler: Crawler, directory: Path, origin: str) -> None:
        name = hashlib.sha1(origin.encode(), usedforsecurity=False).hexdigest()
        self.path = directory / name
        self._crawler = crawler
        self._queue: Any = None
        self._memory: list[Request] = []
        self.on_disk = 0

    def push(self, request: Request) -> bool:
        """Keep ``request``; ``True`` if it went to disk, ``False`` if it stays in memory."""
        if self._queue is None:
            queue_class: Any = PickleFifoDiskQueue  # typed as queuelib's base class
            self._queue = queue_class.from_crawler(self._crawler, str(self.path))
        try:
            self._queue.push(request)
        except ValueError:
            # Not serialisable: as Scrapy's scheduler does, keep it in memory.
            self._memory.append(request)
            return False
        self.on_disk += 1
        return True

    def __len__(self) -> int:
        return self.on_disk + len(self._memory)

    def drain(self) -> list[Request]:
        """Every request, in the order it came (disk ones first); the queue is removed."""
        requests: list[Request] = []
        if self._queue is not None:
            while (request := self._queue.pop()) is not None:
                requests.append(request)
            self._queue.close()
            self._queue = None
            shutil.rmtree(self.path, ignore_errors=True)
        requests += self._memory
        self._memory = []
        self.on_disk = 0
        return requests


class OverflowDirectory:
    """The temporary directory of a crawler's overflow queues, made on first use."""

    def __init__(self) -> None:
        self._path: Path | None = None

    def queue(self, crawler: Crawler, origin: str) -> DiskOverflow:
        if self._path is None:
            self._path = Path(tempfile.mkdtemp(prefix="robotrules-overflow-"))
        return DiskOverflow(crawler, self._path, origin)

    def remove(self) -> None:
        if self._path is not None:
            shutil.rmtree(self._path, ignore_errors=True)
            self._path = None
