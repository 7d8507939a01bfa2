# Issue 29: host changes the memory failed to react to, kept for the next nightly run (models/refresh.py).

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

from graph_memory import conf


class Migration(migrations.Migration):

    dependencies = [
        ('graph_memory', '0017_sight_by_holder'),
        migrations.swappable_dependency(conf.firm_model_label()),
    ]

    operations = [
        migrations.CreateModel(
            name='MissedChange',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('work', models.CharField(choices=[('stale', 'Flag summaries stale'), ('graph', 'Sync the connection map'), ('label', "Refresh a node's label"), ('document', 'Flag document indexes stale'), ('retention', "Redact admin's log of a deleted record")], max_length=16)),
                ('model', models.CharField(help_text='The host model whose row changed (app_label.model).', max_length=200)),
                ('object_id', models.CharField(blank=True, max_length=64)),
                ('case_ids', django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), blank=True, default=list, help_text='Empty: not known.', size=None)),
                ('detail', models.JSONField(blank=True, default=dict)),
                ('error', models.CharField(help_text='The exception: its type and message.', max_length=500)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('repaired_at', models.DateTimeField(blank=True, null=True)),
                ('firm', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=conf.firm_model_label())),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['firm', '-created_at'], name='gm_missed_firm'), models.Index(condition=models.Q(('repaired_at__isnull', True)), fields=['firm'], name='gm_missed_open')],
            },
        ),
    ]
