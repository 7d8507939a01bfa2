from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import Firm, User
from graph_memory.admin.scoping import FirmScopedAdmin


@admin.register(Firm)
class FirmAdmin(FirmScopedAdmin):
    # A firm admin sees their own firm, read-only; only operators create firms.
    firm_field = "id"
    list_display = ["slug", "name", "timezone"]
    search_fields = ["slug", "name"]


@admin.register(User)
class UserAdmin(FirmScopedAdmin, BaseUserAdmin):
    # Firm admins see their firm's people but cannot edit accounts here:
    # staff, superuser and permission flags must not be theirs to grant.
    list_display = ["username", "name", "firm", "role", "is_staff"]
    list_filter = ["role", "is_staff", "firm"]
    list_select_related = ["firm"]
    search_fields = ["username", "name", "email"]
    fieldsets = (*BaseUserAdmin.fieldsets, ("Firm", {"fields": ("firm", "role", "name")}))
