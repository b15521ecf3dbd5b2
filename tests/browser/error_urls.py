"""The console's URLs plus one page that fails, to see the 500 page a person gets."""

from django.urls import path

from config import urls


def fail(request):
    raise RuntimeError("a page that fails, for the error-page test")


urlpatterns = [*urls.urlpatterns, path("fails/", fail)]
handler400 = urls.handler400
handler403 = urls.handler403
handler404 = urls.handler404
handler500 = urls.handler500
