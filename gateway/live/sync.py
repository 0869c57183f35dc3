"""Where live changes come from: the admin API (stored in the state store, so every replica takes it), the
config file (SIGHUP, or its modification time polled). Each is checked before it is taken; a refused one is
one log line (or the admin API's 400) and the settings in force stay."""

from __future__ import annotations

import asyncio
import logging
import signal
from contextlib import suppress
from pathlib import Path

import orjson

from gateway.config import Settings, load_settings
from gateway.config.live import LiveConfig, file_sections, live_document, parse_live, with_live
from gateway.config.loading import ConfigError
from gateway.live.swap import put_in_force
from gateway.logs import log_failure
from gateway.services import Services
from gateway.state import StateUnavailable, durable

log = logging.getLogger("cachegate.live")

# The document and its version, one hash field written by compare-and-set so that concurrent changes are
# applied one after the other; the counter, bumped after each write, is what replicas poll (it is small).
DOCUMENT, FIELD, CHANGES = "liveconfig", "document", "liveconfig:changes"
POLL_S = 0.25  # a change stored by one replica is in force on the others well within a second
WRITE_TRIES = 3


class ChangeConflict(Exception):
    """The stored document kept changing under an admin's change: nothing was stored."""


class LiveConfigSync:
    def __init__(self, services: Services, config_file: Path | None) -> None:
        self.services = services
        self.store = durable(services.store)  # a change nobody else can see must fail loudly
        self.config_file = config_file
        self.changes: bytes | None = None  # the counter when last polled
        self.taken = 0  # the version of the stored document in force here
        self.file_mtime = _mtime(config_file)

    def change(self, change: LiveConfig, source: str) -> Settings:
        """The settings in force with `change` taken, put in force on this replica; ConfigError if refused."""
        settings = with_live(self.services.settings, change, source)
        put_in_force(self.services, settings, source)
        return settings

    async def publish(self, text: str) -> int:
        """An admin's change (YAML or JSON): checked, stored for every replica, in force here; its version.
        ConfigError if refused and ChangeConflict if it kept being overtaken (nothing stored); StateUnavailable
        if the store failed (perhaps stored, perhaps not yet seen by the other replicas)."""
        change = parse_live(text, "request body")
        for _ in range(WRITE_TRIES):
            stored = await self._stored()
            self._take(stored)  # on top of the latest stored change, even if not polled yet
            settings = with_live(self.services.settings, change, "request body")
            version = self.taken + 1
            document = orjson.dumps({"version": version, "config": live_document(settings)})
            if await self.store.hswap(DOCUMENT, FIELD, stored, document):
                if version > self.taken:  # else a newer change, made on top of this one, was polled meanwhile
                    put_in_force(self.services, settings, "the admin API")
                    self.taken = version
                await self.store.incr(CHANGES)
                return version
        raise ChangeConflict

    async def follow_store(self) -> None:
        """Take every version another replica stores (forever, every POLL_S)."""
        while True:
            try:
                changes = await self.store.get(CHANGES)
                if changes != self.changes:
                    self.changes = changes  # a document that cannot be taken is not retried on every poll
                    self._take(await self._stored())
            except StateUnavailable:
                pass  # the settings in force stay; the next poll tries again
            except Exception:
                log_failure(log, "live config: taking the stored change failed; the settings in force stay")
            await asyncio.sleep(POLL_S)

    async def _stored(self) -> bytes | None:
        return (await self.store.hgetall(DOCUMENT)).get(FIELD)

    def _take(self, stored: bytes | None) -> None:
        """Put a stored document in force if it is newer than the one in force (a poll's read may finish
        after this replica's own change); a refused one is logged once."""
        if stored is None:
            return
        document = orjson.loads(stored)
        if document["version"] <= self.taken:
            return
        self.taken = document["version"]
        source = f"the state store (version {self.taken})"
        try:
            self.change(parse_live(orjson.dumps(document["config"]).decode(), source), source)
        except ConfigError as refused:  # stored by a gateway of another version that reads it otherwise
            log.warning("live config from the state store refused, the settings in force stay: %s", refused)

    async def watch_file(self, interval_s: float) -> None:
        """Reload the config file when its modification time changes (forever, every interval_s)."""
        while True:
            await asyncio.sleep(interval_s)
            mtime = _mtime(self.config_file)
            if mtime != self.file_mtime:
                self.file_mtime = mtime
                await self.reload_file()

    async def reload_file(self) -> None:
        """The config file's live sections put in force; any mistake leaves the settings in force."""
        if self.config_file is None:
            return
        try:
            loaded = await asyncio.to_thread(load_settings, self.config_file)
            self.change(file_sections(loaded), str(self.config_file))
        except ConfigError as refused:
            log.warning("config reload refused, the settings in force stay: %s", refused)
        except Exception:  # the watch and later signals must go on
            log_failure(log, "config reload failed, the settings in force stay")


def reload_on_hangup(live: LiveConfigSync) -> None:
    """SIGHUP re-reads the config file, when the app serves in the main thread (`cachegate serve`)."""
    if live.config_file is None:
        return
    loop = asyncio.get_running_loop()
    reloads: set[asyncio.Task[None]] = set()

    def hangup() -> None:
        task = loop.create_task(live.reload_file())
        reloads.add(task)  # held until done: the loop keeps only a weak reference
        task.add_done_callback(reloads.discard)

    with suppress(ValueError, RuntimeError, NotImplementedError):  # not the main thread (tests), no SIGHUP
        loop.add_signal_handler(signal.SIGHUP, hangup)


def _mtime(path: Path | None) -> float | None:
    try:
        return path.stat().st_mtime if path is not None else None
    except OSError:
        return None
