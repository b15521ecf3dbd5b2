from django.conf import settings


def navigation(request):
    return {"flower_url": settings.FLOWER_URL}
