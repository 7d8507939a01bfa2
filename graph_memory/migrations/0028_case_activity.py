# Issue 28: each case's last activity in one column of the memory's own (graph_memory/models/activity.py), indexed
# behind the firm, so the memory index walks a firm's cases most recently active first instead of sorting every case
# a viewer may open by clocks in two tables. Filled here for every case there is, firm by firm, by the app's own
# rebuild (graph_memory/summaries/activity.py: the host's clock is an expression of the adapter's); from then on the
# writes that move a clock keep it, and each nightly run catches up what they did not hear.

import django.db.models.deletion
from django.db import migrations, models

from graph_memory import conf


def fill(apps, schema_editor):
    from graph_memory.summaries import activity

    Firm = apps.get_model(*conf.firm_model_label().split("."))
    for firm_id in Firm.objects.order_by("pk").values_list("pk", flat=True):
        activity.activity_rebuild(firm_id=firm_id)


class Migration(migrations.Migration):

    dependencies = [
        ('graph_memory', '0027_memory_consent'),
        migrations.swappable_dependency(conf.firm_model_label()),
        migrations.swappable_dependency(conf.case_model_label()),
    ]

    operations = [
        migrations.AlterField(
            model_name='missedchange',
            name='work',
            field=models.CharField(choices=[('stale', 'Flag summaries stale'), ('graph', 'Sync the connection map'), ('label', "Refresh a node's label"), ('document', 'Flag document indexes stale'), ('retention', "Redact admin's log of a deleted record"), ('access', "Record a user's firm and role in the access ledger"), ('activity', "Recompute a case's last activity")], max_length=16),
        ),
        migrations.CreateModel(
            name='CaseActivity',
            fields=[
                ('case', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to=conf.case_model_label())),
                ('active_at', models.DateTimeField(blank=True, null=True)),
                ('firm', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.firm_model_label())),
            ],
            options={
                'verbose_name_plural': 'case activity',
                'indexes': [models.Index(models.F('firm'), models.OrderBy(models.F('active_at'), descending=True, nulls_last=True), models.OrderBy(models.F('case'), descending=True), name='gm_activity_order')],
            },
        ),
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=True),
    ]
