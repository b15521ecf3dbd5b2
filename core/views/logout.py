"""Logging out of the console."""

from django.contrib import messages
from django.contrib.auth import views as auth_views


class LogoutView(auth_views.LogoutView):
    """Log out, and say so on the login page that follows."""

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You are logged out.")
        return response
