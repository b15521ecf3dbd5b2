"""operations.metrics as Prometheus metric families, built fresh for each scrape of /metrics."""

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from operations.metrics import Metrics


class MetricsCollector(Collector):
    def __init__(self, metrics: Metrics):
        self.metrics = metrics

    def collect(self):
        metrics = self.metrics
        runs = GaugeMetricFamily(
            "stashcast_runs",
            "Runs by kind and state (stuck: running without a fresh heartbeat).",
            labels=["kind", "state"],
        )
        ended = GaugeMetricFamily(
            "stashcast_runs_ended_24h", "Runs that ended in the last 24 hours.", labels=["kind", "outcome"]
        )
        average = GaugeMetricFamily(
            "stashcast_run_processing_seconds_avg_24h",
            "Average time from claim to end of the runs that ended in the last 24 hours.",
            labels=["kind"],
        )
        longest = GaugeMetricFamily(
            "stashcast_run_longest_running_seconds", "How long the longest running run has run.", labels=["kind"]
        )
        for kind in metrics.runs:
            for state in ("queued", "running", "stuck", "paused"):
                runs.add_metric([kind.key, state], getattr(kind, state))
            ended.add_metric([kind.key, "any"], kind.finished_24h)
            ended.add_metric([kind.key, "failed"], kind.failed_24h)
            if kind.average_seconds_24h is not None:
                average.add_metric([kind.key], kind.average_seconds_24h)
            longest.add_metric([kind.key], kind.longest_running_seconds or 0)
        yield from (runs, ended, average, longest)

        yield GaugeMetricFamily(
            "stashcast_broker_up", "1 when Redis (the broker) answered.", value=int(metrics.queues is not None)
        )
        backlog = GaugeMetricFamily("stashcast_queue_backlog", "Celery tasks waiting in a queue.", labels=["queue"])
        for queue in metrics.queues or []:
            backlog.add_metric([queue.name], queue.waiting)
        yield backlog

        accounts = GaugeMetricFamily("stashcast_accounts", "Telegram accounts by login state.", labels=["state"])
        for item in metrics.accounts_by_state:
            accounts.add_metric([item.state], item.count)
        yield accounts

        yield from self._account_health()

        today = metrics.packages_per_day[-1].count if metrics.packages_per_day else 0
        yield GaugeMetricFamily("stashcast_packages_today", "Packages ingested today (UTC).", value=today)
        skipped = GaugeMetricFamily("stashcast_skipped_packages", "Skipped packages by reason.", labels=["reason"])
        for item in metrics.skipped_by_reason:
            skipped.add_metric([item.reason], item.count)
        yield skipped

        yield GaugeMetricFamily(
            "stashcast_notifications_unread", "Notifications nobody has read.", value=metrics.notifications_unread
        )
        alerts = GaugeMetricFamily("stashcast_alerts", "Alerts shown on the dashboard now.", labels=["severity"])
        for severity in ("error", "warning"):
            alerts.add_metric([severity], sum(1 for alert in metrics.alerts if alert.severity == severity))
        yield alerts
        if metrics.beat is not None and metrics.beat.age_seconds is not None:
            yield GaugeMetricFamily(
                "stashcast_beat_last_tick_age_seconds",
                "Seconds since beat last ticked.",
                value=metrics.beat.age_seconds,
            )

    def _account_health(self):
        """One gauge family per health figure, labelled by phone; the verdict as a 1 on its own label."""
        figures = [
            ("send_budget_per_minute", "The account's send pace now.", "budget_per_minute"),
            ("send_ceiling_per_minute", "The pace the account never goes above.", "ceiling_per_minute"),
            ("sends_last_hour", "Messages sent in the last hour.", "sends_last_hour"),
            ("sends_last_day", "Messages sent in the last 24 hours.", "sends_last_day"),
            ("flood_waits_last_day", "FloodWaits in the last 24 hours.", "flood_waits_last_day"),
            ("flood_wait_seconds_last_day", "Seconds those FloodWaits asked for.", "flood_wait_seconds_last_day"),
            ("resting", "1 while the account rests (quarantine).", "resting"),
            ("sending_stopped", "1 while the operator has stopped its sending.", "sending_stopped"),
        ]
        for name, help_text, attribute in figures:
            family = GaugeMetricFamily(f"stashcast_account_{name}", help_text, labels=["phone"])
            for item in self.metrics.account_health:
                family.add_metric([item.phone], float(getattr(item.health, attribute)))
            yield family
        verdict = GaugeMetricFamily(
            "stashcast_account_health", "1 for the account's health verdict.", labels=["phone", "verdict"]
        )
        for item in self.metrics.account_health:
            verdict.add_metric([item.phone, item.health.verdict], 1)
        yield verdict
