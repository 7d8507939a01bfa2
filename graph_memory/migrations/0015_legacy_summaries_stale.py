# Issue 27: summaries written before summary-v3 carry free text beside a verbatim quote, not the
# records' own sentences. They stay served (marked `legacy` in briefs) until the nightly refresh
# rewrites them, so every one is made stale here; the refresh claims them before other stale cases.
# Written without the app's code: the versions are the ones that existed when this was written.

from django.db import migrations
from django.db.models import Q
from django.db.models.functions import Coalesce, Now

LEGACY_VERSIONS = ["summary-v1", "summary-v2"]


def mark_legacy_stale(apps, schema_editor):
    CaseSummary = apps.get_model("graph_memory", "CaseSummary")
    CaseSummary.objects.filter(prompt_version__in=LEGACY_VERSIONS).exclude(Q(text="")).update(
        stale=True, stale_since=Coalesce("stale_since", Now())
    )


class Migration(migrations.Migration):
    dependencies = [("graph_memory", "0014_sight_vectors")]

    operations = [migrations.RunPython(mark_legacy_stale, migrations.RunPython.noop, elidable=True)]
