from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as BaseUserAdmin

from accounts.models import Firm, User


@admin.register(Firm)
class FirmAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "timezone"]
    search_fields = ["slug", "name"]


@admin.register(User)
class UserAdmin(BaseUserAdmin):
    list_display = ["username", "name", "firm", "role", "is_staff"]
    list_filter = ["role", "is_staff"]
    fieldsets = (*BaseUserAdmin.fieldsets, ("Firm", {"fields": ("firm", "role", "name")}))
