"""People in the API (core/people.py): logins, their roles and passwords, and invite links; operators only,
reading too."""

from django.contrib.auth import get_user_model
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response

from core import people
from core.access import ScopeAndRole
from core.api.errors import ErrorSerializer
from core.models import Invite, Role
from core.numbers import whole_number
from core.roles import IsOperator

LOGIN_ID_MAX = 2**31 - 1  # Django's logins have integer ids: a larger one is no login, not a database error

PEOPLE_REFUSED = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input; `message` names the field and what to change."),
    403: OpenApiResponse(ErrorSerializer, description="Only operators manage people."),
    404: OpenApiResponse(ErrorSerializer, description="No such login or link."),
    409: OpenApiResponse(
        ErrorSerializer, description="Refused in the current state: the last active operator, a deactivated login."
    ),
}


class PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk", read_only=True)
    username = serializers.CharField(read_only=True)
    role = serializers.ChoiceField(choices=Role.choices, read_only=True)
    is_active = serializers.BooleanField(read_only=True)
    last_login = serializers.DateTimeField(read_only=True, allow_null=True)
    added_by = serializers.CharField(read_only=True, allow_null=True, help_text="Who added the login, if known.")
    added_how = serializers.CharField(
        read_only=True, allow_null=True, help_text="invite, password or command; null if made elsewhere."
    )


class PersonAddSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class PersonAddedSerializer(PersonSerializer):
    password = serializers.CharField(read_only=True, help_text="Shown this once; only its hash is kept.")


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class PasswordResetSerializer(serializers.Serializer):
    how = serializers.ChoiceField(
        choices=[("password", "A new password, shown once"), ("link", "A link to choose one")], default="password"
    )
    expires_in_days = serializers.IntegerField(min_value=1, max_value=people.INVITE_DAYS_MAX, default=1)


class PasswordResetAnswerSerializer(serializers.Serializer):
    password = serializers.CharField(required=False, help_text="how=password: the new password, shown this once.")
    link = serializers.CharField(required=False, help_text="how=link: the link, shown this once.")
    expires_at = serializers.DateTimeField(required=False)


class InviteSerializer(serializers.ModelSerializer):
    for_login = serializers.CharField(source="login.username", read_only=True, allow_null=True, default=None)
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = Invite
        fields = ["id", "purpose", "role", "username", "for_login", "created_by", "created_at", "expires_at"]
        read_only_fields = fields


class InviteCreateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
    username = serializers.CharField(
        max_length=150, required=False, allow_blank=True, default="", help_text="Empty: the person chooses."
    )
    expires_in_days = serializers.IntegerField(min_value=1, max_value=people.INVITE_DAYS_MAX, default=7)


class InviteCreatedSerializer(InviteSerializer):
    link = serializers.CharField(read_only=True, help_text="Shown this once; only its hash is kept.")

    class Meta(InviteSerializer.Meta):
        fields = [*InviteSerializer.Meta.fields, "link"]
        read_only_fields = fields


class OperatorsOnly(IsOperator):
    message = "Only operators see and manage people; ask an operator."


def _link(request, token: str) -> str:
    return request.build_absolute_uri(reverse("invite", args=[token]))


@extend_schema_view(
    list=extend_schema(
        summary="Every login, operators first", responses={200: PersonSerializer(many=True), **PEOPLE_REFUSED}
    ),
    retrieve=extend_schema(summary="One login", responses={200: PersonSerializer, **PEOPLE_REFUSED}),
)
class PersonViewSet(ScopeAndRole, viewsets.GenericViewSet):
    permission_classes = [OperatorsOnly]  # added to the checks every API view makes (ScopeAndRole)
    serializer_class = PersonSerializer
    queryset = get_user_model().objects.all()
    pagination_class = None  # a team's logins: one page

    def _login(self, pk):
        number = whole_number(str(pk), at_most=LOGIN_ID_MAX)
        login = get_user_model().objects.filter(pk=number).first() if number is not None else None
        if login is None:
            raise NotFound("No login with this id; GET /api/people/ lists them.")
        return login

    def list(self, request):
        return Response(PersonSerializer(people.people_list(), many=True).data)

    def retrieve(self, request, pk=None):
        return Response(PersonSerializer(people.person_of(login=self._login(pk))).data)

    @extend_schema(
        summary="Add a login with a password (shown once)",
        request=PersonAddSerializer,
        responses={201: PersonAddedSerializer, **PEOPLE_REFUSED},
    )
    def create(self, request):
        data = PersonAddSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        login, password = people.login_add(**data.validated_data, added_by=request.user)
        answer = {**PersonSerializer(people.person_of(login=login)).data, "password": password}
        return Response(answer, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Change a role", request=RoleSerializer, responses={200: PersonSerializer, **PEOPLE_REFUSED})
    @action(detail=True, methods=["post"])
    def role(self, request, pk=None):
        data = RoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        login = people.login_role_change(login=self._login(pk), role=data.validated_data["role"], by=request.user)
        return Response(PersonSerializer(people.person_of(login=login)).data)

    @extend_schema(
        summary="Deactivate a login (its sessions end now)",
        request=None,
        responses={200: PersonSerializer, **PEOPLE_REFUSED},
    )
    @action(detail=True, methods=["post"])
    def deactivate(self, request, pk=None):
        login = people.login_deactivate(login=self._login(pk), by=request.user)
        return Response(PersonSerializer(people.person_of(login=login)).data)

    @extend_schema(summary="Reactivate a login", request=None, responses={200: PersonSerializer, **PEOPLE_REFUSED})
    @action(detail=True, methods=["post"])
    def reactivate(self, request, pk=None):
        login = people.login_reactivate(login=self._login(pk))
        return Response(PersonSerializer(people.person_of(login=login)).data)

    @extend_schema(
        summary="Reset a login's password: a new one shown once, or a link to choose one",
        request=PasswordResetSerializer,
        responses={200: PasswordResetAnswerSerializer, **PEOPLE_REFUSED},
    )
    @action(detail=True, methods=["post"])
    def password(self, request, pk=None):
        data = PasswordResetSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        login = self._login(pk)
        if data.validated_data["how"] == "link":
            invite, token = people.invite_for_password(
                login=login, created_by=request.user, expires_in_days=data.validated_data["expires_in_days"]
            )
            return Response({"link": _link(request, token), "expires_at": invite.expires_at})
        return Response({"password": people.login_password_reset(login=login)})


@extend_schema_view(
    list=extend_schema(
        summary="Invite and password links not used, withdrawn nor expired",
        responses={200: InviteSerializer(many=True), **PEOPLE_REFUSED},
    ),
)
class InviteViewSet(ScopeAndRole, viewsets.GenericViewSet):
    permission_classes = [OperatorsOnly]  # added to the checks every API view makes (ScopeAndRole)
    serializer_class = InviteSerializer
    queryset = Invite.objects.all()
    pagination_class = None

    def list(self, request):
        return Response(InviteSerializer(people.invites_pending(), many=True).data)

    @extend_schema(
        summary="Make an invite link for a new login (shown once)",
        request=InviteCreateSerializer,
        responses={201: InviteCreatedSerializer, **PEOPLE_REFUSED},
    )
    def create(self, request):
        data = InviteCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        invite, token = people.invite_create(**data.validated_data, created_by=request.user)
        answer = {**InviteSerializer(invite).data, "link": _link(request, token)}
        return Response(answer, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Withdraw a link", request=None, responses={200: InviteSerializer, **PEOPLE_REFUSED})
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        invite = people.invite_revoke(invite=self.get_object())
        return Response(InviteSerializer(invite).data)
