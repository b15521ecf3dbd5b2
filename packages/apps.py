from django.apps import AppConfig


class PackagesConfig(AppConfig):
    name = "packages"

    def ready(self):
        from core.runs import run_kind_register
        from packages.models import PackageSend
        from packages.sending import package_send_enqueue

        # the reaper re-queues a send whose worker went quiet; executing it again goes on at its first unsent part
        run_kind_register(model=PackageSend, enqueue=package_send_enqueue)
