from django.apps import AppConfig

CAPTIONS = [
    ("packages.Package", "caption"),
    ("packages.Package", "volume_captions"),
    ("packages.PackageSendPart", "caption"),
]


class PackagesConfig(AppConfig):
    name = "packages"

    def ready(self):
        from core.audit import audit_value_mask
        from core.runs import run_kind_register
        from packages.models import PackageSend
        from packages.passwords import caption_masked
        from packages.sending import package_send_enqueue

        # the audit trail shows captions as viewers read them: the passwords in them masked
        for label, field in CAPTIONS:
            audit_value_mask(label=label, field=field, mask=caption_masked)

        # the reaper re-queues a send whose worker went quiet; executing it again goes on at its first unsent part
        run_kind_register(model=PackageSend, enqueue=package_send_enqueue)
