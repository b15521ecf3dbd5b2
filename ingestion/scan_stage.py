"""Scanning a channel: what is new above its watermark (channel-wide in a forum, each message to its topic),
its archive sets in order, the channel's rules and share, and the watermarks, which never pass a held set.
Posts below the watermark whose file an edit replaced come back through `ingestion.edits`.
"""

import logging

from core.db_thread import in_db_thread
from ingestion import edits, scanning, selectors
from ingestion import services as ingestion_services
from ingestion.cycle import CycleContext, OutcomeKind, ScanResult, ScanTarget
from ingestion.fetching import FetchStage
from ingestion.models import AccountChannelMap
from ingestion.previewing import PreviewStage
from ingestion.rules import Rules
from ingestion.taking import SetStage
from packages.detection import ArchiveSet, group_sets, same_family, set_may_grow
from telegram.gateway import TelegramGateway
from telegram.records import GENERAL_TOPIC_ID, TOPICS_PAGE, ChatRef, DocumentMessage

logger = logging.getLogger(__name__)


class ScanStage:
    """Channel after channel of one cycle, given its context and the stages it drives."""

    def __init__(self, context: CycleContext, *, fetch: FetchStage, take: SetStage, preview: PreviewStage):
        self.context = context
        self.fetch = fetch
        self.take = take
        self.preview = preview
        self.turns: dict[int, int] = {}  # sets each channel map uploaded this cycle (its share: Channel.share)

    async def _learn_topics(self, reader: TelegramGateway, channel_map: AccountChannelMap, ref: ChatRef):
        """List the forum's topics (TOPICS_PAGE a page): only to learn new topics and their titles."""
        topics = []
        offset = 0
        while True:
            page = await self.context.call(lambda offset=offset: reader.list_topics(ref, offset_topic_id=offset))
            topics.extend(page)
            if len(page) < TOPICS_PAGE:
                break
            offset = page[-1].id
        return await in_db_thread(ingestion_services.topics_sync)(channel_map=channel_map, topics=topics)

    async def scan_channel(
        self, reader: TelegramGateway, channel_map: AccountChannelMap, ref: ChatRef, writer, last_id: int | None
    ) -> None:
        await self.context.report(current_channel=channel_map.channel.title, current_topic="")
        if not channel_map.channel.chat.is_forum:
            floor_id, since = channel_map.channel.start_floor
            watermark = max(channel_map.last_processed_message_id, floor_id)
            messages = await self.fetch.history(reader, ref, min_id=watermark, min_date=since)
            self.preview.photos_wanted_since(ref, messages)
            through = max([last_id or 0, channel_map.scanned_through_message_id, *(m.id for m in messages)])
            result = await self._process_messages(reader, ScanTarget(channel_map, ref), messages, writer, through)
            if result.turn_over:
                # Not idle, and not scanned through: the next cycle goes on from the watermark.
                await in_db_thread(scanning.scan_record)(
                    holder=channel_map, found_archives=result.found, failures=result.failures, retry_left=True
                )
            elif not result.stopped:
                await in_db_thread(scanning.scan_record)(
                    holder=channel_map,
                    found_archives=result.found,
                    failures=result.failures,
                    scanned_through=through,
                    retry_left=result.held,
                )
            return
        await self._scan_forum(reader, channel_map, ref, writer, last_id)

    async def _scan_forum(self, reader, channel_map: AccountChannelMap, ref: ChatRef, writer, last_id) -> None:
        """One channel-wide scan from the lowest enabled topic watermark; each message goes to its topic."""
        topics = await in_db_thread(selectors.map_topics)(channel_map=channel_map)
        if not topics:
            topics = await self._learn_topics(reader, channel_map, ref)
        enabled = [topic for topic in topics if topic.fetch_enabled]
        if not enabled:
            return
        floor_id, since = channel_map.channel.start_floor
        watermark = max(floor_id, min(t.last_processed_message_id for t in enabled))
        messages = await self.fetch.history(reader, ref, min_id=watermark, min_date=since)
        self.preview.photos_wanted_since(ref, messages)
        known = {topic.topic_id for topic in topics}
        if any((message.topic_id or GENERAL_TOPIC_ID) not in known for message in messages):
            topics = await self._learn_topics(reader, channel_map, ref)
            enabled = [topic for topic in topics if topic.fetch_enabled]
        by_topic: dict[int, list[DocumentMessage]] = {}
        for message in messages:
            by_topic.setdefault(message.topic_id or GENERAL_TOPIC_ID, []).append(message)
        through = max([last_id or 0, channel_map.scanned_through_message_id, *(m.id for m in messages)])
        found = failures = 0
        held, complete = False, True
        # General last: a file first seen in a named topic keeps that topic as its context.
        for topic in sorted(enabled, key=lambda topic: (topic.topic_id == GENERAL_TOPIC_ID, topic.topic_id)):
            await self.context.report(current_topic=topic.title)
            mine = [m for m in by_topic.get(topic.topic_id, []) if m.id > topic.last_processed_message_id]
            result = await self._process_messages(reader, ScanTarget(channel_map, ref, topic), mine, writer, through)
            if result.stopped:
                complete, held = False, held or result.turn_over
                continue
            await in_db_thread(scanning.scan_record)(
                holder=topic, found_archives=result.found, failures=result.failures, retry_left=result.held
            )
            found, failures, held = found + result.found, failures + result.failures, held or result.held
        await in_db_thread(scanning.scan_record)(
            holder=channel_map,
            found_archives=found,
            failures=failures,
            scanned_through=through if complete else channel_map.scanned_through_message_id,
            retry_left=held,
        )

    async def take_edited(self, reader, channel_map: AccountChannelMap, ref: ChatRef, writer) -> None:
        """Posts below the watermark whose file an edit replaced are taken again, as new content (ingestion.edits);
        the watermarks stay where they are."""
        if not channel_map.channel.chat.is_forum:
            targets = [ScanTarget(channel_map, ref)]
        else:
            topics = await in_db_thread(selectors.map_topics)(channel_map=channel_map)
            targets = [ScanTarget(channel_map, ref, topic) for topic in topics if topic.fetch_enabled]
        if not targets:
            return
        through = max(target.holder.last_processed_message_id for target in targets)
        edited = await edits.edited_posts(
            reader,
            ref,
            chat_id=channel_map.channel.chat_id,
            through=through,
            cycle_started=self.context.started,
            call=self.context.call,
        )
        for target in targets:
            watermark = target.holder.last_processed_message_id
            mine = [
                message
                for message in edited
                if message.id <= watermark
                and (target.topic is None or (message.topic_id or GENERAL_TOPIC_ID) == target.topic_id)
            ]
            if mine:
                logger.info("%s: %d post(s) edited to hold another file, taken again", target.label, len(mine))
                await self._process_messages(reader, target, mine, writer, watermark)

    def _sets_taken(self, target: ScanTarget, sets: list[ArchiveSet]) -> list[ArchiveSet]:
        """The sets the channel's rules take; the others are counted as filtered, never skipped: they hold no
        watermark and are not tried again (docs/operations.md, "What each channel takes")."""
        rules = Rules.of(target.channel_map.channel)
        if not rules.filters:
            return sets
        taken = []
        for archive_set in sets:
            sizes = [item.document.size for item in archive_set.items]
            may_grow = bool(archive_set.missing) or set_may_grow(archive_set, sizes=sizes)
            why = rules.left_out(archive_set, size=sum(sizes), may_grow=may_grow)
            if why:
                logger.info("Left out %s in %s: %s", archive_set.file_name, target.label, why)
                self.context.progress.add(filtered=1)
            else:
                taken.append(archive_set)
        return taken

    async def _process_messages(
        self, reader, target: ScanTarget, messages: list[DocumentMessage], writer, through: int
    ) -> "ScanResult":
        """Ingest the archive sets among messages in order; the watermark follows, never past a held failure."""
        self.context.progress.add(messages_scanned=len(messages))
        result = ScanResult()
        topic_of = (lambda message: message.topic_id) if target.topic else (lambda message: None)
        messages = await self._with_earlier_volumes(reader, target, messages, topic_of)
        sets = self._sets_taken(target, group_sets(messages, topic_of=topic_of))
        tried = {archive_set.items[0].id: {item.id for item in archive_set.items} for archive_set in sets}
        capped = await in_db_thread(selectors.skips_capped)(channel=target.channel_map.channel, sets=tried)
        lowest_held = None
        for index, archive_set in enumerate(sets):
            await self.fetch.prefetch_drop(keep=archive_set.items[0].id)
            await self.context.at_set_boundary()
            if target.topic is not None and not await in_db_thread(selectors.topic_fetch_enabled)(topic=target.topic):
                result.stopped = True  # fetch turned off mid-run: stop after the current set
                await self.fetch.prefetch_drop()
                return result
            first_id = min(item.id for item in archive_set.items)
            if first_id in capped:
                continue
            if self.turns.get(target.channel_map.pk, 0) >= target.channel_map.channel.share:
                result.stopped = result.turn_over = self.context.more_left = True
                logger.info("%s took its share of the cycle; the rest goes on in the next one", target.label)
                break
            result.found += 1
            self.context.progress.add(archives_found=1)
            later = [s for s in sets[index + 1 :] if min(item.id for item in s.items) not in capped]
            # Not when this set, once uploaded, ends the channel's turn: the next one would wait a cycle on disk.
            share_left = self.turns.get(target.channel_map.pk, 0) + 1 < target.channel_map.channel.share
            self.take.up_next = (reader, target, later[0]) if later and share_left else None
            outcome = await self.take.process(reader, target, archive_set, writer)
            if outcome.kind == OutcomeKind.INGESTED:
                self.turns[target.channel_map.pk] = self.turns.get(target.channel_map.pk, 0) + 1
            if outcome.kind == OutcomeKind.SKIPPED:
                result.failures += 1
            if outcome.holds_watermark:
                lowest_held = first_id if lowest_held is None else min(lowest_held, first_id)
            remaining = [min(item.id for item in later.items) for later in sets[index + 1 :]]
            candidate = (min(remaining) - 1) if remaining else through
            if lowest_held is not None:
                candidate = min(candidate, lowest_held - 1)
            await in_db_thread(ingestion_services.watermark_advance)(holder=target.holder, message_id=candidate)
        self.take.up_next = None
        await self.fetch.prefetch_drop()
        if result.turn_over:
            return result
        result.held = lowest_held is not None
        if not result.held:
            await in_db_thread(ingestion_services.watermark_advance)(holder=target.holder, message_id=through)
        return result

    async def _with_earlier_volumes(
        self, reader: TelegramGateway, target: ScanTarget, messages: list[DocumentMessage], topic_of
    ) -> list[DocumentMessage]:
        """Volumes posted before the watermark (a set passed over as MISSING_PART) join the new volumes of
        their set, so the set is taken whole."""
        open_sets = await in_db_thread(selectors.skips_open)(
            channel=target.channel_map.channel, topic_id=target.topic_id
        )
        if not open_sets:
            return messages
        seen = {message.id for message in messages}
        wanted = {
            message_id
            for archive_set in group_sets(messages, topic_of=topic_of)
            for skipped in open_sets
            if same_family(archive_set, skipped.file_name)
            for message_id in skipped.message_ids
            if message_id not in seen
        }
        if not wanted:
            return messages
        fetched = await self.context.call(lambda: reader.get_messages(target.ref, sorted(wanted)))
        earlier = [message for message in fetched.values() if message is not None and message.document is not None]
        return sorted(messages + earlier, key=lambda message: message.id)
