"""The mock server on asyncio, for crawls without a Twisted reactor.

A crawl with ``TWISTED_REACTOR_ENABLED = False`` runs in a process where
no reactor may be installed, so the Twisted ``MockServer`` cannot serve it.
``AsyncioMockServer`` is the same many-sites server (the same scripts, the
same records: see :class:`tests.helpers.mockserver.Sites`) on aiohttp, in the
test's own asyncio loop. Scrapy's reactorless downloads resolve names
themselves, with no resolver to bend: the crawl sends every request to this
server as an HTTP proxy (absolute-form targets), which answers for its own
sites by the ``Host`` header.
"""

from __future__ import annotations

import asyncio
import gzip

from aiohttp import web

from tests.helpers.mockserver import Reply, Sites


class AsyncioMockServer(Sites):
    """Many sites on one port of 127.0.0.1, chosen by the ``Host`` header (see ``MockServer``).

    Built with :meth:`start`, in the running asyncio loop; it serves while
    that loop runs, as ``MockServer`` serves while the reactor runs.
    """

    def __init__(self) -> None:
        super().__init__()
        self._runner: web.ServerRunner | None = None
        self._waiting: dict[object, asyncio.Future[Reply]] = {}
        """A held request's answer to come, by a key of its own (aiohttp requests are mappings)."""
        self._tasks: set[asyncio.Task[object]] = set()

    @classmethod
    async def start(cls) -> AsyncioMockServer:
        server = cls()
        runner = web.ServerRunner(
            web.Server(server._handle, handler_cancellation=True, access_log=None),
            shutdown_timeout=0.1,
        )
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        server._runner = runner
        server.port = runner.addresses[0][1]
        return server

    async def stop(self) -> None:
        """Drop unanswered requests (hung or delayed), then stop listening."""
        for task in list(self._tasks):
            task.cancel()
        self._waiting.clear()
        self._held_at.clear()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.BaseRequest) -> web.StreamResponse:
        host = _host(request)
        user_agent = request.headers.get("User-Agent", "")
        path, reply = self._received(host, request.raw_path.encode("ascii", "replace"), user_agent)
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        held = object()
        try:
            if reply.hang:
                waiting: asyncio.Future[Reply] = asyncio.get_running_loop().create_future()
                self._waiting[held] = waiting
                self._held_at[held] = (host.lower(), path)
                reply = await waiting
            elif reply.delay:
                await asyncio.sleep(reply.delay)
            return await self._respond(request, reply, host.lower(), path)
        finally:
            # The client gone (a timeout), or answered: no longer held.
            self._tasks.discard(task)
            self._waiting.pop(held, None)
            self._held_at.pop(held, None)

    def _answer(self, request: object, reply: Reply) -> None:
        waiting = self._waiting.pop(request, None)
        if waiting is not None and not waiting.done():
            waiting.set_result(reply)

    async def _respond(
        self, request: web.BaseRequest, reply: Reply, host: str, path: str
    ) -> web.StreamResponse:
        body = gzip.compress(reply.body) if reply.gzip else reply.body
        response = web.StreamResponse(status=reply.status)
        response.headers["Content-Type"] = "text/plain"
        if reply.gzip:
            response.headers["Content-Encoding"] = "gzip"
        if reply.redirect_to is not None:
            response.headers["Location"] = reply.redirect_to
        for name, value in reply.headers.items():
            response.headers[name] = value
        for name, value in reply.header_lines:
            response.headers.add(name, value)
        response.content_length = len(body)
        await response.prepare(request)
        if reply.reset:
            await response.write(body[: len(body) // 2])
            # The half body sent, the connection closed: the client sees data lost.
            assert request.transport is not None
            request.transport.close()
            return response
        if reply.chunk:
            # Each piece once the connection took the one before, until the client
            # closes it: write waits only for a full buffer, so the loop is given a
            # turn after each piece (as Twisted's pull producer is asked once a turn);
            # the crawl reading in the same loop then stops it early.
            sent = self._sent[(host, path)]
            sent[0] = 0
            for start in range(0, len(body), reply.chunk):
                piece = body[start : start + reply.chunk]
                sent[0] += len(piece)
                try:
                    await response.write(piece)
                except ConnectionError:
                    return response
                await asyncio.sleep(0)
        else:
            await response.write(body)
        await response.write_eof()
        return response


def _host(request: web.BaseRequest) -> str:
    """The site asked for: the absolute-form target's host (as written), else ``Host``'s.

    aiohttp's client drops a final dot from the ``Host`` header, not from
    the target it sends a proxy.
    """
    target = request.raw_path
    if not target.startswith("/"):
        authority = target.partition("://")[2].partition("/")[0]
    else:
        authority = request.headers.get("Host", "")
    name, colon, port = authority.rpartition(":")
    return name if colon and port.isdigit() else authority
