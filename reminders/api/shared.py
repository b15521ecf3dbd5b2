"""What every reminders API module answers alike: the error responses of the schema."""

from drf_spectacular.utils import OpenApiResponse

from core.api import ErrorSerializer

ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input; `message` names the field."),
    409: OpenApiResponse(ErrorSerializer, description="The action does not fit the current state."),
}
